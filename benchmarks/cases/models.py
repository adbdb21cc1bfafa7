"""The two models of the training cases and the seed's training step, written once for either
library (tensorplay's nn mirrors torch.nn, so `lib` is the module `tensorplay` or `torch`).

Shapes: MLP 784 -> 512 -> 512 -> 10 on flattened 28x28 images; CNN on (N, 1, 28, 28):
conv 3x3 -> 26x26x32, pool -> 13x13, conv 3x3 -> 11x11x64, pool -> 5x5x64 = 1600 features.
"""

import numpy as np

MLP_SIZES = (784, 512, 512, 10)


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))


MODELS = {"mlp": mlp, "cnn": cnn}


def mlp_gemm_flops(batch):
    """Multiply-add FLOPs of the GEMMs in one MLP training step: the forward product of each layer,
    its weight gradient, and its input gradient except the first layer's (the images do not
    require grad, so neither library computes it)."""
    products = [batch * fan_in * fan_out for fan_in, fan_out in zip(MLP_SIZES, MLP_SIZES[1:])]
    return 2 * (2 * sum(products) + sum(products[1:]))


def random_batch(lib, model_name, batch, seed=0):
    """A fixed random batch of inputs shaped for the model, and integer class labels."""
    rng = np.random.default_rng(seed)
    shape = (batch, 784) if model_name == "mlp" else (batch, 1, 28, 28)
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.integers(0, 10, batch, dtype=np.int64)
    return lib.from_numpy(x), lib.from_numpy(y)


def training_step(lib, model, use_autocast, lr=0.01):
    """The seed's loop body as a function of one batch: zero_grad, the forward pass and the loss
    under autocast (bfloat16 on the CPU) when asked, backward and SGD with momentum outside it."""
    optimizer = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step(x, y):
        optimizer.zero_grad()
        with lib.autocast("cpu", enabled=use_autocast):
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step
