"""A walk through tensorplay.autocast, one feature per step. Run it and read along:

    python examples/autocast_tour.py

Each step prints what it shows; docs/autocast.md has the full reference.
"""

import threading

import tensorplay
import tensorplay.nn as nn
import tensorplay.nn.functional as F


def step(title):
    print(f"\n== {title}")


tensorplay.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))  # float32 weights, as always
x, target = tensorplay.randn(4, 8), tensorplay.tensor([0, 2, 1, 0])

step("1. A context manager: each op runs in the dtype its policy picks")
with tensorplay.autocast(device_type="cpu"):  # bfloat16 is the CPU default
    out = model(x)  # linear is lower_precision: bfloat16
    loss = F.cross_entropy(out, target)  # losses are float32
print(f"model output: {out.dtype}, loss: {loss.dtype}, weights stay {model[0].weight.dtype}")

step("2. Backward outside the region runs in the forward ops' dtypes; weights get float32 gradients")
loss.backward()
print(f"weight gradient: {model[0].weight.grad.dtype}")

step("3. A decorator: the function runs under autocast on every call")


@tensorplay.autocast(device_type="cpu")
def forward(inputs):
    return model(inputs)


print(f"forward(x): {forward(x).dtype}, and outside it x @ x.T is {(x @ x.T).dtype}")

step("4. Nested autocast(enabled=False) forces float32 locally")
with tensorplay.autocast("cpu"):
    hidden = model[0](x)  # bfloat16
    with tensorplay.autocast("cpu", enabled=False):
        # inside, nothing is cast: bring bfloat16 values back to float32 yourself
        exact = hidden.float() @ model[2].weight.T
    print(f"lower precision: {hidden.dtype}; the enabled=False subregion: {exact.dtype}")

step("5. After the region, cast back before mixing dtypes")
with tensorplay.autocast("cpu"):
    y = model(x)
try:
    y @ tensorplay.randn(3, 3)  # bfloat16 @ float32 outside autocast
except RuntimeError as e:
    print(f"mixing raises: {e}")
print(f"cast back: {(y.float() @ tensorplay.randn(3, 3)).dtype}")

step("6. The state is per thread: a new thread starts with autocast off")
seen = {}
with tensorplay.autocast("cpu"):
    worker = threading.Thread(target=lambda: seen.update(enabled=tensorplay.is_autocast_enabled("cpu")))
    worker.start()
    worker.join()
    print(f"this thread: enabled={tensorplay.is_autocast_enabled('cpu')}; the new thread saw "
          f"enabled={seen['enabled']}")

step("7. The policy table and a trace of what actually ran")
print({op: tensorplay.amp.get_policy(op, "cpu") for op in ("linear", "relu", "cross_entropy", "cat", "einsum")})
with tensorplay.amp.trace() as t, tensorplay.autocast("cpu"):
    F.cross_entropy(model(x), target)
t.summary()

step("8. GradScaler: scale the loss so float16 gradients do not underflow; skip steps that overflow")
optimizer = tensorplay.optim.SGD(model.parameters(), lr=0.1)
scaler = tensorplay.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
for i in range(4):
    optimizer.zero_grad()
    with tensorplay.autocast("cpu", dtype=tensorplay.float16):
        loss = F.cross_entropy(model(x), target)
    scaler.scale(loss).backward()
    if i == 1:  # pretend this step overflowed
        model[0].weight.grad[0, 0] = float("inf")
    scaler.step(optimizer)  # skipped when a gradient is inf or NaN
    scaler.update()  # backs off after an overflow, grows after growth_interval clean steps
    print(f"step {i}: loss {loss.item():.4f}, scale now {scaler.get_scale():g}")
