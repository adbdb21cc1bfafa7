"""`make bench`: every case of benchmarks/cases/ in tensorplay and in PyTorch (the CPU build in
.venv), side by side.

    .venv/bin/python -m benchmarks.bench [--quick] [--only SUBSTRING] [--repeats N] [--write]

Each case runs in child processes that import one library only (benchmarks/run_case.py): per
round, one tensorplay process and one PyTorch process, alternating which goes first. Each figure
is the median over the rounds. The table gives both figures, the ratio tensorplay time / PyTorch
time (below 1: tensorplay is faster), the issue's target and whether tensorplay meets it.
--write puts the table, with the date, the CPU and the command, into BENCHMARKS.md between
`<!-- bench: begin -->` and `<!-- bench: end -->`.
"""

import argparse
import collections
import datetime
import importlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if not __package__:  # run as a script, benchmarks/bench.py
    sys.path.insert(0, str(ROOT))

from benchmarks.cases import CASES  # noqa: E402
from benchmarks.cases.common import LIBS  # noqa: E402
from benchmarks.machine import Machine  # noqa: E402
from benchmarks.report import section, table, verdict, write_section  # noqa: E402

CHILD_TIMEOUT_S = 900


class Results(dict):
    """{key: (tensorplay median, PyTorch median)}; a key no child reported reads (None, None)."""

    def __missing__(self, key):
        return (None, None)


def median(values):
    """The median of the numbers, or the most common string (kernel names), or None."""
    numbers = [v for v in values if isinstance(v, (int, float))]
    if numbers:
        return statistics.median(numbers)
    strings = [v for v in values if isinstance(v, str)]
    return collections.Counter(strings).most_common(1)[0][0] if strings else None


def run_child(case, lib, params):
    """The figures of one child process: `python -m benchmarks.run_case case lib params`, with
    OMP_NUM_THREADS and the case's extra environment set."""
    env = dict(os.environ, OMP_NUM_THREADS=str(params.get("threads", 1)), **params.get("env", {}))
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run_case", case, lib, json.dumps(params)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise RuntimeError(tail)
    return json.loads(lines[-1])


def measure(case, module, quick, repeats):
    """Runs the case's children for the rounds asked, alternating the libraries; returns the
    medians and the errors of children that failed."""
    samples = collections.defaultdict(lambda: {lib: [] for lib in LIBS})
    errors = []
    for params in module.children(quick):
        rounds = min(repeats, params.get("repeats", repeats))
        for r in range(rounds):
            for lib in (LIBS if r % 2 == 0 else LIBS[::-1]):
                start = time.perf_counter()
                try:
                    figures = run_child(case, lib, params)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    errors.append(f"{case} {lib} {json.dumps(params)}: {e}")
                    figures = {}
                print(f"  {case:13} {lib:10} round {r + 1}/{rounds} {json.dumps(params)}: "
                      f"{time.perf_counter() - start:.1f} s" + (" FAILED" if not figures else ""),
                      file=sys.stderr, flush=True)
                for key, value in figures.items():
                    samples[key][lib].append(value)
    return Results({key: tuple(median(by_lib[lib]) for lib in LIBS) for key, by_lib in samples.items()}), errors


def command():
    """The command that ran, as a reader would type it from the repository root (Markdown)."""
    python = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable
    script = "-m benchmarks.bench" if __package__ else os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
    line = " ".join([python, script, *map(shlex.quote, sys.argv[1:])])
    return f"`make bench` (`{line}`)" if os.environ.get("MAKELEVEL") else f"`{line}`"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, one round: a smoke test (under 2 min)")
    parser.add_argument("--only", metavar="SUBSTRING", help="only the cases whose name contains it: "
                        + ", ".join(CASES))
    parser.add_argument("--repeats", type=int, help="rounds per case (default 3, 1 with --quick)")
    parser.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    args = parser.parse_args()
    if args.write and (args.quick or args.only):
        parser.error("--write records a full run: drop --quick and --only")
    repeats = args.repeats or (1 if args.quick else 3)

    machine = Machine.detect()
    header = [f"Measured {datetime.date.today().isoformat()} with {command()}", *machine.describe(),
              f"Figures are medians of {repeats} round{'s' if repeats > 1 else ''} (Fashion-MNIST: at most 2); "
              "a round runs each case in a fresh tensorplay process and a fresh PyTorch process, alternating "
              "which goes first; inside a process, a model's training steps (float32 and autocast, 1 and 2 threads) "
              "alternate in blocks. "
              "Ratios are tensorplay's time (or memory) over PyTorch's: below 1, tensorplay is better."]
    print("\n".join(header), flush=True)

    sections, all_errors, met = [], [], collections.Counter()
    for case in CASES:
        if args.only and args.only not in case:
            continue
        module = importlib.import_module(f"benchmarks.cases.{case}")
        results, errors = measure(case, module, args.quick, repeats)
        rows = module.rows(results, machine)
        met.update(verdict(row) for row in rows if verdict(row))
        sections.append(f"### {module.TITLE}\n\n{table(rows)}")
        all_errors += errors
        print(f"\n{sections[-1]}", flush=True)

    summary = (f"Targets met: {met['yes']} of {met['yes'] + met['no']}"
               + "".join(f"; {met[what]} {what}" for what in ("not measured", "n/a") if met[what]) + ".")
    failures = [f"- failed: {e}" for e in all_errors]
    print("\n" + "\n".join([summary, *failures]))
    if args.write:
        write_section(ROOT / "BENCHMARKS.md", section(header, sections, [summary, *failures]))
        print(f"written to {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
