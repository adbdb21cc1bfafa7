"""Anomaly detection: detect_anomaly and set_detect_anomaly.

While it is on, every node of the graph remembers the Python stack of the forward call that made
it, and backward checks what each node returns (csrc/tensorplay/autograd/anomaly_mode.h). A node whose
backward fails, or returns a NaN gradient when check_nan is on ("Function 'SqrtBackward0' returned
nan values in its 0th output."), is reported in a UserWarning with that stack, naming the forward
op, before the error propagates. The mode is global, as in PyTorch.
"""

import warnings

from tensorplay import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Turns anomaly detection on for a `with` block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C.set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off: at once when called, and back when its `with` block ends."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C.set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C.set_anomaly_enabled(self.prev, self.prev_check_nan)
