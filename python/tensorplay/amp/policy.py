"""The autocast policy table, readable and overridable per thread.

The table lives in C++ (csrc/tensorplay/amp/autocast_policy.h), one line per op; these functions read the
same table the dispatcher uses, so what they say is what runs.

Policies:
    lower_precision       floating inputs cast to the autocast dtype (bfloat16 / float16)
    float32               floating inputs cast to float32
    float32_unless_dtype  float32, unless the call passes dtype= (sum, softmax, ...)
    promote               floating inputs cast to the widest of them
    input_dtype           no casts: the op runs in its inputs' dtype
    banned                the op raises under autocast on that device
    composite             no casts of its own: the ops it is made of cast by their own policies
"""

import threading

from tensorplay import _C
from tensorplay.amp.autocast_mode import _check_device_type

__all__ = ["get_policy", "policy_table", "policy_override"]


def get_policy(op_name: str, device_type: str) -> str:
    """The policy autocast applies to ``op_name`` on ``device_type`` in this thread, e.g.
    ``get_policy("linear", "cpu") == "lower_precision"``."""
    _check_device_type(device_type, "get_policy")
    if not isinstance(op_name, str):
        raise TypeError(f"get_policy: expected op_name to be a str, got {type(op_name).__name__}")
    return _C._amp.get_policy(op_name, device_type)


def policy_table(device_type: str) -> dict:
    """Every op autocast knows, mapped to its policy on ``device_type`` in this thread."""
    _check_device_type(device_type, "policy_table")
    return dict(_C._amp.policy_table(device_type))


class policy_override:
    """Changes op policies for this thread, for the duration of a ``with`` block (or of each call
    of a decorated function)::

        with tensorplay.amp.policy_override({"softmax": "lower_precision"}, device_type="cpu"):
            with tensorplay.autocast("cpu"):
                y = model(x)   # softmax now runs in bfloat16

    Other threads keep the table's policies. Overrides nest; each exit restores what its entry saw.
    """

    def __init__(self, policies: dict, device_type: str):
        _check_device_type(device_type, "policy_override")
        if not isinstance(policies, dict):
            raise TypeError(f"policy_override: expected a dict of op name to policy, got {type(policies).__name__}")
        for op, policy in policies.items():
            if not isinstance(op, str) or not isinstance(policy, str):
                raise TypeError(f"policy_override: op names and policies must be str, got {op!r}: {policy!r}")
            _C._amp.get_policy(op, device_type)  # unknown op names fail here, before any region opens
        self.policies = dict(policies)
        self.device_type = device_type
        self._open = threading.local()

    def __enter__(self):
        scope = _C._amp._PolicyOverride(list(self.policies.items()), self.device_type)
        self._scopes().append(scope)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._scopes().pop().close()
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated

    def _scopes(self):
        if not hasattr(self._open, "scopes"):
            self._open.scopes = []
        return self._open.scopes
