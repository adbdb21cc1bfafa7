"""The table: one Row per figure, formatted as Markdown for the terminal and for BENCHMARKS.md,
whose marked section `write_section` replaces."""

import re
from dataclasses import dataclass

BEGIN, END = "<!-- bench: begin -->", "<!-- bench: end -->"


@dataclass
class Row:
    """One figure of one case in both libraries. kind says how the ratio is taken, so that below 1
    always means tensorplay is better: "cost" (ms, s, MiB: tensorplay / PyTorch), "rate" (GFLOP/s,
    GB/s: PyTorch / tensorplay, which is tensorplay's time over PyTorch's), or None (no ratio:
    percents, speed-ups, accuracies, kernel names)."""
    label: str
    unit: str
    tp: object
    torch: object
    kind: str = None
    target: str = ""
    met: bool = None
    tp_note: str = ""
    torch_note: str = ""

    @property
    def ratio(self):
        if self.kind is None or not self.tp or not self.torch:
            return None
        return self.tp / self.torch if self.kind == "cost" else self.torch / self.tp


def check(value, ok):
    """Whether a target is met, ok(value); None (not measured) where the figure is missing."""
    return None if value is None else bool(ok(value))


def verdict(row):
    """yes, no, n/a (a target this machine cannot meet or miss, such as a bfloat16 peak without
    bfloat16 instructions), not measured (a child failed), or "" for a row without a target."""
    if row.met is not None:
        return "yes" if row.met else "no"
    if row.target.startswith("n/a"):
        return "n/a"
    return "not measured" if row.target else ""


def _value(value, note):
    if value is None:
        text = "-"
    elif isinstance(value, str):
        text = value
    else:
        text = f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return f"{text} ({note})" if note else text


def table(rows):
    """The rows as a Markdown table: case, unit, both figures, the ratio, the target and whether
    tensorplay meets it."""
    lines = ["| case | unit | tensorplay | PyTorch | ratio | target | met |",
             "|---|---|--:|--:|--:|---|---|"]
    for row in rows:
        ratio = f"{row.ratio:.2f}" if row.ratio is not None else ""
        met = "**no**" if verdict(row) == "no" else verdict(row)
        lines.append(f"| {row.label} | {row.unit} | {_value(row.tp, row.tp_note)} | "
                     f"{_value(row.torch, row.torch_note)} | {ratio} | {row.target} | {met} |")
    return "\n".join(lines)


def section(header, tables, footer):
    """The Markdown of the bench section: a heading, the header lines as a list, the tables, the
    footer lines (targets met, failed children)."""
    return "\n".join(["## Side by side with PyTorch (`make bench`)", "",
                      "Written by `make bench` (benchmarks/bench.py); run it again rather than edit by hand.", "",
                      *(f"- {line}" for line in header), "", "\n\n".join(tables), "", *footer])


def write_section(path, body):
    """Puts body between the bench markers of the Markdown file at path: in place of the marked
    section if there is one, else after the introduction (before the first `## ` heading)."""
    with open(path) as f:
        text = f.read()
    section = f"{BEGIN}\n{body.strip()}\n{END}"
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: section, text, count=1, flags=re.S)
    else:
        heading = re.search(r"^## ", text, flags=re.M)
        at = heading.start() if heading else len(text)
        text = text[:at].rstrip("\n") + "\n\n" + section + "\n\n" + text[at:]
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n")
