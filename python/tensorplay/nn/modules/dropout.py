"""Dropout."""

from tensorplay.nn import functional as F
from tensorplay.nn.modules.module import Module


__all__ = ["Dropout"]


class Dropout(Module):
    """Zeroes each element with probability p while training, scaling the rest by 1/(1-p)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
