"""Writes docs/autocast.md's policy table from the table the autocast dispatcher reads
(tensorplay.amp.policy_table), so that the page shows what runs. `make docs` runs it;
tests/python/test_autocast_docs.py fails while the page is out of date."""

import pathlib
import re
import textwrap

import tensorplay

DOC = pathlib.Path(__file__).parents[1] / "docs" / "autocast.md"
BEGIN, END = "<!-- policy-table: begin -->", "<!-- policy-table: end -->"


def policy_section():
    """The markdown between the markers: a row per op that casts on some device type, then the
    ops that run in their inputs' dtype on both."""
    cpu, cuda = tensorplay.amp.policy_table("cpu"), tensorplay.amp.policy_table("cuda")
    row = "| {:<34} | {:<20} | {:<20} |"
    lines = [row.format("op", "CPU", "CUDA"), f"|{'-' * 36}|{'-' * 22}|{'-' * 22}|"]
    plain = []
    for op in cpu:
        if cpu[op] == cuda[op] == "input_dtype":
            plain.append(f"`{op}`")
        else:
            lines.append(row.format(f"`{op}`", cpu[op], cuda[op]))
    lines += [""] + textwrap.wrap(", ".join(plain), width=100, break_on_hyphens=False)
    return "\n".join(lines)


def current_section(text):
    return re.search(re.escape(BEGIN) + r"\n(.*)\n" + re.escape(END), text, re.S).group(1)


def main():
    text = DOC.read_text()
    DOC.write_text(text.replace(current_section(text), policy_section()))


if __name__ == "__main__":
    main()
