"""MNIST and Fashion-MNIST, read from their four IDX files (gzipped or not), as torchvision's
datasets of the same names: ``data`` (N, 28, 28) uint8, ``targets`` (N,) int64, and samples
``(image, label)`` after the optional transforms."""

import os

from tensorplay._tensor import from_numpy
from tensorplay.utils.data.dataset import Dataset
from tensorplay.utils.data.datasets.idx import read_idx

__all__ = ["MNIST", "FashionMNIST"]


class MNIST(Dataset):
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        if download:
            raise RuntimeError(f"{type(self).__name__}: download is not supported; on Debian, "
                               "`apt-get install dataset-fashion-mnist` puts the files in "
                               "/usr/share/datasets/fashion-mnist")
        self.root, self.train = os.fspath(root), train
        self.transform, self.target_transform = transform, target_transform
        images, labels = (self._find(name) for name in self._files[train])
        image_array = read_idx(images, ndim=3)
        label_array = read_idx(labels, ndim=1)
        if len(image_array) != len(label_array):
            raise ValueError(f"{type(self).__name__}: {images} has {len(image_array)} images but {labels} "
                             f"has {len(label_array)} labels")
        if label_array.size and label_array.max() >= len(self.classes):
            raise ValueError(f"{type(self).__name__}: {labels} has label {label_array.max()}, but there are "
                             f"only {len(self.classes)} classes")
        self.data = from_numpy(image_array)
        self.targets = from_numpy(label_array.astype("int64"))

    def _find(self, name):
        for candidate in (name, name + ".gz"):
            path = os.path.join(self.root, candidate)
            if os.path.exists(path):
                return path
        raise RuntimeError(f"{type(self).__name__}: dataset not found: no {name} or {name}.gz in {self.root}")

    def __getitem__(self, index):
        image, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    {self.extra_repr()}")


class FashionMNIST(MNIST):
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
