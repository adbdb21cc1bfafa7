"""docs/autocast.md against the code: its policy table is the one scripts/autocast_policy_doc.py
writes from the dispatcher's table, and its examples run and print what it shows."""

import importlib.util
import pathlib
import re

import pytest

import tensorplay
import tensorplay.nn as nn
import tensorplay.nn.functional as F

ROOT = pathlib.Path(__file__).parents[2]
DOC = (ROOT / "docs" / "autocast.md").read_text()
_spec = importlib.util.spec_from_file_location("autocast_policy_doc", ROOT / "scripts" / "autocast_policy_doc.py")
policy_doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(policy_doc)


def test_policy_table_is_the_dispatchers():
    assert policy_doc.current_section(DOC) == policy_doc.policy_section(), \
        "docs/autocast.md's policy table is out of date with csrc/tensorplay/amp/autocast_policy.h: run `make docs`"


def test_every_policy_in_the_table_is_explained():
    explained = set(re.findall(r"^\| `(\w+)` \|", DOC, re.M))
    used = {p for device in ("cpu", "cuda") for p in tensorplay.amp.policy_table(device).values()}
    assert used <= explained


def test_trace_example_prints_what_the_docs_show(capsys):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    model, loss_fn = Net(), nn.CrossEntropyLoss()
    x, y = tensorplay.randn(6, 8), tensorplay.tensor([0, 1, 2, 3, 0, 1])
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            loss = loss_fn(model(x), y)
    t.summary()
    printed = capsys.readouterr().out.strip()
    shown = re.search(r"prints one row per distinct call:\n\n```\n(.*?)\n```", DOC, re.S).group(1)
    assert printed == shown


def test_grad_scaler_example_runs():
    model, loss_fn = nn.Linear(4, 2), nn.MSELoss()
    optimizer = tensorplay.optim.SGD(model.parameters(), lr=0.1)
    data = [(tensorplay.randn(3, 4), tensorplay.randn(3, 2)) for _ in range(3)]
    scaler = tensorplay.amp.GradScaler("cpu")
    for input, target in data:
        optimizer.zero_grad()
        with tensorplay.autocast("cpu", dtype=tensorplay.float16):
            loss = loss_fn(model(input), target)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        tensorplay.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    # The first steps may overflow float16 at scale 2**16 and back off; the weights stay finite.
    assert scaler.get_scale() in (2.0**16, 2.0**15, 2.0**14, 2.0**13)
    assert all(bool(p.isfinite().all()) for p in model.parameters())


@pytest.mark.parametrize("snippet,expected", [
    ('tensorplay.amp.get_policy("linear", "cpu")', "lower_precision"),
    ('tensorplay.amp.policy_table("cuda")["softmax"]', "float32_unless_dtype"),
])
def test_introspection_examples(snippet, expected):
    assert f">>> {snippet}\n'{expected}'" in DOC
    assert eval(snippet) == expected
