"""tensorplay.backends.cudnn.rnn: cuDNN's RNN helpers and the fp32 precision of cuDNN's RNNs, as
torch.backends.cudnn.rnn in a build without cuDNN."""

import sys
import types

from tensorplay.backends import _fp32_precision as _precision


class Unserializable:
    """A value kept out of pickles (a cuDNN dropout state, in PyTorch's old checkpoints)."""

    def __init__(self, inner):
        self.inner = inner

    def get(self):
        return self.inner

    def __getstate__(self):
        return "<unserializable>"

    def __setstate__(self, state):
        self.inner = None


_MODES = ("RNN_RELU", "RNN_TANH", "LSTM", "GRU")


def get_cudnn_mode(mode):
    """cuDNN's number for an RNN mode; there is no cuDNN to ask."""
    if mode not in _MODES:
        raise ValueError(f"Unknown mode: {mode}")
    raise AttributeError("'NoneType' object has no attribute 'RNNMode'")


class _FP32PrecisionProp:
    """fp32_precision of cuda's rnn; unlike the other flags, PyTorch lets it be set while flags are frozen."""

    def __get__(self, obj, objtype):
        return _precision.get("cuda", "rnn")

    def __set__(self, obj, value):
        _precision.set("cuda", "rnn", value)


sys.modules[__name__].__class__ = type("CudnnRNNModule", (types.ModuleType,), {"fp32_precision": _FP32PrecisionProp()})
