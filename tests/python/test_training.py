"""End-to-end training with tensorplay: the canonical PyTorch loop, verbatim, on synthetic data.

    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for input, target in data:
        optimizer.zero_grad()
        output = model(input)
        loss = loss_fn(output, target)
        loss.backward()
        optimizer.step()

A small MLP and a small CNN (conv + pool + linear) must each bring the loss clearly down (the
last epoch's mean loss under half the first's), and the trained model must survive a state_dict
round trip through tensorplay.save / tensorplay.load.
"""

import numpy as np
import pytest

import tensorplay
import tensorplay.nn as nn
import tensorplay.nn.functional as F
from tensorplay import optim
from nn_testing import to_numpy


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.fc(x.flatten(1))


def blobs(batches, batch_size, seed):
    """Two Gaussian blobs around (-1, -1) and (1, 1): labels 0 and 1."""
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(batches):
        labels = rng.integers(0, 2, size=batch_size)
        points = rng.standard_normal((batch_size, 2)) * 0.5 + (labels[:, None] * 2 - 1)
        data.append((tensorplay.tensor(points.astype(np.float32)), tensorplay.tensor(labels.astype(np.int64))))
    return data


def bright_half_images(batches, batch_size, seed):
    """8x8 noise images; label 1 when the left half is brighter, 0 when the right half is."""
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(batches):
        labels = rng.integers(0, 2, size=batch_size)
        images = rng.standard_normal((batch_size, 1, 8, 8)) * 0.5
        images[labels == 1, :, :, :4] += 1.0
        images[labels == 0, :, :, 4:] += 1.0
        data.append((tensorplay.tensor(images.astype(np.float32)), tensorplay.tensor(labels.astype(np.int64))))
    return data


def train(Net, data, epochs):
    """The seed's loop, verbatim; returns the model and each epoch's batch losses."""
    tensorplay.manual_seed(0)
    loss_fn = nn.CrossEntropyLoss()
    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    epoch_losses = []
    for _ in range(epochs):
        losses = []
        for input, target in data:
            optimizer.zero_grad()
            output = model(input)
            loss = loss_fn(output, target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        epoch_losses.append(losses)
    return model, epoch_losses


def accuracy(model, data):
    correct = total = 0
    with tensorplay.no_grad():
        for input, target in data:
            predicted = to_numpy(model(input)).argmax(1)
            correct += int((predicted == to_numpy(target)).sum())
            total += len(predicted)
    return correct / total


CASES = [
    pytest.param((MLP, lambda: blobs(20, 16, seed=1), 4), id="mlp"),
    pytest.param((CNN, lambda: bright_half_images(10, 16, seed=2), 4), id="cnn"),
]


@pytest.fixture(scope="module", params=CASES)
def trained(request):
    Net, make_data, epochs = request.param
    data = make_data()
    model, losses = train(Net, data, epochs)
    return Net, data, model, losses


def test_loss_falls_clearly(trained):
    """The last epoch's mean loss is under half the first batch's loss and half the first epoch's mean."""
    _, _, _, losses = trained
    first_batch, epochs = losses[0][0], [float(np.mean(epoch)) for epoch in losses]
    assert all(np.isfinite(epochs)), epochs
    assert epochs[-1] < 0.5 * first_batch, f"first batch {first_batch}, epoch means {epochs}"
    assert epochs[-1] < 0.5 * epochs[0], f"epoch means {epochs}"


def test_trained_model_classifies_the_data(trained):
    _, data, model, _ = trained
    assert accuracy(model, data) > 0.9


def test_parameters_changed_and_have_gradients(trained):
    Net, _, model, _ = trained
    tensorplay.manual_seed(0)
    fresh = Net()
    for (name, p), q in zip(model.named_parameters(), fresh.parameters()):
        assert p.grad is not None, f"{name} has no gradient after training"
        assert not np.allclose(to_numpy(p), to_numpy(q)), f"{name} did not change"


def test_state_dict_round_trip_through_save_and_load(trained, tmp_path):
    Net, data, model, _ = trained
    path = tmp_path / "model.safetensors"
    tensorplay.save(model.state_dict(), str(path))
    loaded_state = tensorplay.load(str(path))
    assert list(loaded_state) == list(model.state_dict())

    restored = Net()
    result = restored.load_state_dict(loaded_state)
    assert not result.missing_keys and not result.unexpected_keys
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(to_numpy(restored.state_dict()[name]), to_numpy(value), err_msg=name)
    with tensorplay.no_grad():
        for input, _ in data[:3]:
            np.testing.assert_array_equal(to_numpy(restored(input)), to_numpy(model(input)))


def test_training_resumes_from_saved_model_and_optimizer(tmp_path):
    """Save model and optimizer state mid-training, load both into fresh objects, and continue: the
    result equals uninterrupted training."""
    data = blobs(6, 8, seed=3)

    def run(model, optimizer, batches):
        loss_fn = nn.CrossEntropyLoss()
        for input, target in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(input), target)
            loss.backward()
            optimizer.step()

    tensorplay.manual_seed(0)
    reference = MLP()
    tensorplay.manual_seed(0)
    model = MLP()
    ref_opt = optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    run(reference, ref_opt, data)
    run(model, opt, data[:3])

    tensorplay.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, str(tmp_path / "checkpoint"))
    checkpoint = tensorplay.load(str(tmp_path / "checkpoint"))
    resumed = MLP()
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt = optim.SGD(resumed.parameters(), lr=0.1, momentum=0.9)
    resumed_opt.load_state_dict(checkpoint["optimizer"])
    run(resumed, resumed_opt, data[3:])
    for (name, p), q in zip(reference.named_parameters(), resumed.parameters()):
        np.testing.assert_allclose(to_numpy(q), to_numpy(p), rtol=1e-6, atol=1e-7, err_msg=name)
