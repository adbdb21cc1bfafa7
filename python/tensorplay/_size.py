"""tensorplay.Size: the type of Tensor.shape, a tuple of ints with PyTorch's repr."""

from tensorplay import _C


class Size(tuple):
    def __repr__(self):
        return f"tensorplay.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        result = super().__getitem__(item)
        return Size(result) if isinstance(item, slice) else result


_C._set_size_type(Size)
