"""GradScaler under injected numerical faults, over a long run: 1,000 training steps of a small MLP
in which random steps get an inf or NaN gradient. A skipped step must leave every parameter and
every optimizer-state tensor bit-identical, a clean step must move every parameter, and the scale
must follow the rule exactly, step by step: times backoff_factor on a faulty step, times
growth_factor after growth_interval clean steps in a row.

test_grad_scaler.py compares the scaler with torch's on chosen steps; this one checks the rule over
many random fault patterns, with both ways a fault can arrive (a hook on an activation's gradient,
and a write into a parameter's .grad after backward)."""

import math
import random

import numpy as np
import pytest

import tensorplay as tp
import tensorplay.nn as nn
import tensorplay.nn.functional as F

STEPS = 1000
GROWTH_FACTOR = 2.0
BACKOFF_FACTOR = 0.5
GROWTH_INTERVAL = 5
INIT_SCALE = 2.0**16
# With this rate a faulty step comes about once per growth interval's worth of growth chances, so
# the scale random-walks around its start instead of drifting out of float32's comfortable range.
FAULT_RATE = 1 - 0.5 ** (1 / GROWTH_INTERVAL)

OPTIMIZERS = {
    "sgd_momentum": lambda params: tp.optim.SGD(params, lr=0.01, momentum=0.9),
    "adam": lambda params: tp.optim.Adam(params, lr=1e-3),
}


def expected_scales(faulty):
    """The scale and growth tracker after each step's update(), by the rule GradScaler documents,
    in float32 as the scale tensor holds it."""
    scale, tracker, scales, trackers = np.float32(INIT_SCALE), 0, [], []
    for bad in faulty:
        if bad:
            scale, tracker = np.float32(np.float64(scale) * BACKOFF_FACTOR), 0
        elif tracker + 1 == GROWTH_INTERVAL:
            scale, tracker = np.float32(np.float64(scale) * GROWTH_FACTOR), 0
        else:
            tracker += 1
        scales.append(float(scale))
        trackers.append(tracker)
    return scales, trackers


def snapshot(model, optimizer):
    """Every parameter and optimizer-state value, tensors as raw bytes."""
    def freeze(value):
        if isinstance(value, tp.Tensor):
            return str(value.dtype), tuple(value.shape), value.detach().contiguous().numpy().tobytes()
        return value

    params = [freeze(p) for p in model.parameters()]
    state = [sorted((k, freeze(v)) for k, v in optimizer.state[p].items()) if p in optimizer.state else None
             for p in model.parameters()]
    return params, state


def inject(model, output, rng, how, value):
    """Puts value into one random gradient element, through a hook on the model's output or by
    writing into a parameter's .grad once backward is done. Returns the second kind's callback."""
    if how == "hook":
        row, col = rng.randrange(output.shape[0]), rng.randrange(output.shape[1])

        def hook(grad):
            grad = grad.clone()
            grad[row, col] = value
            return grad

        output.register_hook(hook)
        return lambda: None

    def write():
        param = rng.choice(list(model.parameters()))
        with tp.no_grad():
            param.grad.view(-1)[rng.randrange(param.numel())] = value
    return write


@pytest.fixture
def one_intra_op_thread():
    """The model is tiny: on a busy machine, waking a second thread for each op would cost more
    than the op and make 2,000 steps take many seconds."""
    before = tp.get_num_threads()
    tp.set_num_threads(1)
    yield
    tp.set_num_threads(before)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_skipped_steps_change_nothing_and_the_scale_follows_the_rule(name, one_intra_op_thread):
    rng = random.Random(7)
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = OPTIMIZERS[name](model.parameters())
    scaler = tp.amp.GradScaler("cpu", init_scale=INIT_SCALE, growth_factor=GROWTH_FACTOR,
                               backoff_factor=BACKOFF_FACTOR, growth_interval=GROWTH_INTERVAL)
    x, target = tp.randn(32, 6), tp.randn(32, 3)
    # The first step is faulty: skipping it must leave the optimizer without any state at all.
    faulty = [True] + [rng.random() < FAULT_RATE for _ in range(STEPS - 1)]
    scales, trackers = expected_scales(faulty)
    assert 2.0**-20 < min(scales) and max(scales) < 2.0**60  # no overflow or underflow in play
    assert scales.count(INIT_SCALE) < STEPS // 2  # and the scale does move both ways

    losses, skipped = [], 0
    for step, bad in enumerate(faulty):
        optimizer.zero_grad()
        with tp.autocast("cpu"):
            output = model(x)
        fault = inject(model, output, rng, rng.choice(["hook", "grad"]), rng.choice([math.inf, -math.inf, math.nan])) \
            if bad else (lambda: None)
        loss = F.mse_loss(output.float(), target)
        scaler.scale(loss).backward()
        fault()
        before = snapshot(model, optimizer)
        scaler.step(optimizer)
        after = snapshot(model, optimizer)
        if bad:
            skipped += 1
            assert after == before, f"step {step}: a skipped step changed a parameter or the optimizer state"
        else:
            assert all(a != b for a, b in zip(after[0], before[0])), f"step {step}: a clean step left a parameter"
            losses.append(loss.item())
        scaler.update()
        assert (scaler.get_scale(), scaler._get_growth_tracker()) == (scales[step], trackers[step]), f"step {step}"
    assert skipped == sum(faulty) and 0 < skipped < STEPS
    assert losses[-1] < 0.9 * losses[0]  # the clean steps trained the model
