import torch
import torch.utils.data as data


class Blobs(data.Dataset):
    """Three Gaussian blobs in the plane, one per class."""

    centres = torch.tensor([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])

    def __init__(self, size, seed):
        generator = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 3, (size,), generator=generator)
        self.points = self.centres[self.labels] + 0.6 * torch.randn(size, 2, generator=generator)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.points[index], self.labels[index]
