"""The IDX reader and the MNIST-family datasets, on good files and on corrupted ones."""

import gzip
import os

import numpy as np
import pytest

import tensorplay
from tensorplay.utils.data import DataLoader
from tensorplay.utils.data.datasets import FashionMNIST, read_idx

REAL_DATA = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist (make deps installs it)


def idx_bytes(array, code=0x08):
    header = bytes([0, 0, code, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write(path, data, gz=False):
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(data)
    return path


IMAGES = np.random.default_rng(0).integers(0, 256, (5, 28, 28), dtype=np.uint8)
LABELS = np.array([9, 0, 3, 3, 7], dtype=np.uint8)


# ---- read_idx ----

@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_read_idx_reads_what_was_written(tmp_path, gz):
    path = write(tmp_path / "images", idx_bytes(IMAGES), gz)
    np.testing.assert_array_equal(read_idx(path, ndim=3), IMAGES)


def test_read_idx_reads_big_endian_int32(tmp_path):
    values = np.array([[1, -2, 70000]], dtype=np.int32)
    np.testing.assert_array_equal(read_idx(write(tmp_path / "a", idx_bytes(values, 0x0C)), np.int32, 2), values)


def corruptions():
    good = idx_bytes(IMAGES)
    forged = bytearray(good)
    forged[4:16] = (0xFFFFFFFF).to_bytes(4, "big") * 3  # 2**96 bytes claimed
    return {
        "wrong_magic": (b"\x00\x00\x08\x01" + good[4:], "wrong magic number 0x00000801, expected 0x00000803"),
        "wrong_type": (b"\x00\x00\x0d\x03" + good[4:], "wrong magic number 0x00000D03"),
        "nonzero_first_bytes": (b"\x01\x00\x08\x03" + good[4:], "wrong magic number 0x01000803"),
        "empty": (b"", "truncated: the magic number needs 4 bytes, the file has 0"),
        "truncated_dims": (good[:10], "truncated: the dims needs 4 bytes"),
        "truncated_data": (good[:-1], "truncated: an array of shape (5, 28, 28) needs 3920 bytes, the file has 3919"),
        "extra_bytes": (good + b"\x00", "takes 3920 bytes, but the file has more"),
        "forged_huge_dims": (bytes(forged), "truncated: an array of shape (4294967295, 4294967295, 4294967295)"),
    }


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(corruptions()))
def test_read_idx_rejects_corrupted_files(tmp_path, name, gz):
    data, message = corruptions()[name]
    path = write(tmp_path / "images", data, gz)
    with pytest.raises(ValueError) as info:
        read_idx(path, ndim=3)
    assert str(path) in str(info.value) and message in str(info.value)


def test_read_idx_rejects_a_corrupt_gzip_stream(tmp_path):
    data = bytearray(gzip.compress(idx_bytes(IMAGES)))
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(ValueError, match="not a readable IDX file"):
        read_idx(write(tmp_path / "images.gz", bytes(data)), ndim=3)


def test_read_idx_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "nothing")


# ---- FashionMNIST ----

def make_root(tmp_path, images=IMAGES, labels=LABELS, split="train", gz=True):
    tmp_path.mkdir(parents=True, exist_ok=True)
    prefix = "train" if split == "train" else "t10k"
    suffix = ".gz" if gz else ""
    write(tmp_path / f"{prefix}-images-idx3-ubyte{suffix}", idx_bytes(images), gz)
    write(tmp_path / f"{prefix}-labels-idx1-ubyte{suffix}", idx_bytes(labels), gz)
    return tmp_path


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_fashion_mnist_fields_and_samples(tmp_path, gz):
    ds = FashionMNIST(make_root(tmp_path, gz=gz), train=True)
    assert len(ds) == 5
    assert ds.data.dtype == tensorplay.uint8 and tuple(ds.data.shape) == (5, 28, 28)
    assert ds.targets.dtype == tensorplay.int64 and ds.targets.tolist() == [9, 0, 3, 3, 7]
    image, label = ds[2]
    np.testing.assert_array_equal(image.numpy(), IMAGES[2])
    assert label == 3 and ds.classes[label] == "Dress"


def test_fashion_mnist_transforms_and_loader(tmp_path):
    ds = FashionMNIST(make_root(tmp_path, split="test"), train=False, transform=lambda x: x.float() / 255,
                      target_transform=lambda y: y + 100)
    images, labels = next(iter(DataLoader(ds, batch_size=4)))
    assert images.dtype == tensorplay.float32 and tuple(images.shape) == (4, 28, 28)
    assert labels.tolist() == [109, 100, 103, 103]


def test_fashion_mnist_missing_files_raise_runtime_error(tmp_path):
    make_root(tmp_path, split="train")
    with pytest.raises(RuntimeError, match="dataset not found: no t10k-images-idx3-ubyte"):
        FashionMNIST(tmp_path, train=False)


def test_fashion_mnist_rejects_mismatched_counts_and_bad_labels(tmp_path):
    with pytest.raises(ValueError, match="has 5 images but .* has 4 labels"):
        FashionMNIST(make_root(tmp_path / "a", labels=LABELS[:4]))
    with pytest.raises(ValueError, match="has label 10, but there are only 10 classes"):
        FashionMNIST(make_root(tmp_path / "b", labels=np.array([0, 1, 10, 2, 3], np.uint8)))


def test_fashion_mnist_rejects_images_with_the_wrong_rank(tmp_path):
    root = make_root(tmp_path)
    write(root / "train-images-idx3-ubyte.gz", idx_bytes(IMAGES.reshape(5, -1)), gz=True)
    with pytest.raises(ValueError, match="expected 0x00000803"):
        FashionMNIST(root)


def test_fashion_mnist_download_is_refused():
    with pytest.raises(RuntimeError, match="download is not supported"):
        FashionMNIST("/nonexistent", download=True)


def test_the_real_fashion_mnist():
    train, test = FashionMNIST(REAL_DATA, train=True), FashionMNIST(REAL_DATA, train=False)
    assert (len(train), len(test)) == (60000, 10000)
    # every class appears equally often in both splits
    assert np.bincount(train.targets.numpy()).tolist() == [6000] * 10
    assert np.bincount(test.targets.numpy()).tolist() == [1000] * 10


def test_idx_reader_survives_mutation_fuzzing():
    """A short budget of tests/fuzz/fuzz_idx.py (`make fuzz` runs 10,000 cases): every mutated
    file reads as its header says or raises ValueError naming the file, within a capped address
    space."""
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "..", "fuzz", "fuzz_idx.py")
    result = subprocess.run([sys.executable, script, "--cases", "300"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "300 cases" in result.stdout
