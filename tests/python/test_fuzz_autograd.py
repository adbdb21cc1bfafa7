"""Autograd engine fuzzing (tests/fuzz/fuzz_autograd.py) on a short budget: random programs of
graphs, views, in-place ops, hooks of every kind, retain_graph, create_graph, autograd.grad, deep
chains and threads must behave in tensorplay as in PyTorch. TP_FUZZ_CASES raises the budget.

The programs run in worker processes (a crash or a hang fails the case, not pytest) and are the
same on every run. The fuzzer's oracle is checked too, with faults injected on tensorplay's side.
"""

import collections
import os

import pytest

import fuzz_scripts

CASES = int(os.environ.get("TP_FUZZ_CASES", "150"))
DEPTH = 20_000  # of the deep chains (cases 25, 75, 125, ...): compared with torch below 10**5

fuzz_autograd = fuzz_scripts.load("fuzz_autograd")


def test_random_programs_behave_as_in_torch():
    failures = fuzz_autograd.run(CASES, seed=0, max_depth=DEPTH, jobs=2)
    if failures:
        pytest.fail(f"{len(failures)} of {CASES} cases failed: {[f.case for f in failures]}\n"
                    f"the first: {failures[0]}", pytrace=False)


def test_generation_is_deterministic_and_covers_the_engine():
    cases = [fuzz_autograd.make_case(0, case, DEPTH) for case in range(200)]
    assert [c.source for c in cases] == [fuzz_autograd.make_case(0, case, DEPTH).source for case in range(200)]
    text = "\n".join(c.source for c in cases)
    for feature in ["@", ".sum(", "[1:]", ".t()", ".view(-1)", ".unsqueeze(0)", ".expand(", ".mul_(2.0)", ".add_(",
                    "[0].mul_(3.0)", ".retain_grad()", ".register_hook(", ".register_post_accumulate_grad_hook(",
                    ".remove()", "return g * 2", "raise ValueError", "return m.ones(5)", "return g.double()", "return 5",
                    "retain_graph=True", "create_graph=True", "allow_unused=True", "inputs=[", "threading.Thread"]:
        assert feature in text, feature
    kinds = collections.Counter(c.kind.split()[0] for c in cases)
    assert kinds == {"graph": 186, "threads": 10, "deep": 4}, kinds


# A program that notes gradients and hook calls, then gets a hook's wrong dtype refused.
PROGRAM = """def program(m, note):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: note("hook", g))
    (x * x).sum().backward()
    note("x.grad", x.grad)
    x.register_hook(lambda g: g.double())
    (x * x).sum().backward()
"""


@pytest.mark.parametrize("fault,expected", [
    (None, None),
    ("values", "note 0 (hook): values [3.0, 5.0], torch [2.0, 4.0]"),  # 1 added to tensorplay's values
    ("silent", "tensorplay raised nothing; torch raised RuntimeError: "),
])
def test_the_oracle_catches_wrong_values_and_missing_errors(fault, expected):
    outcome = fuzz_autograd.check(fuzz_autograd.Case("graph", PROGRAM), fault)
    if expected is None:
        assert outcome is None, outcome
    else:
        assert outcome is not None and outcome.startswith(expected), outcome


def test_a_crash_fails_its_case_and_the_worker_is_replaced():
    failures = fuzz_autograd.run(2, seed=0, jobs=1, fault="crash")
    assert [f.case for f in failures] == [0, 1]
    # SIGSEGV, or AddressSanitizer's report of it under `make test-asan`
    assert all(f.message.startswith("tensorplay crashed the interpreter") and "SEGV" in f.message for f in failures)


def test_a_hang_fails_its_case():
    [failure] = fuzz_autograd.run(1, seed=0, jobs=1, timeout=2, fault="hang")
    assert failure.case == 0 and failure.message.startswith("tensorplay hung: no answer in 2 s"), failure
