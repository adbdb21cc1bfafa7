"""tensorplay.amp: automatic mixed precision.

- ``autocast``: regions where each op runs in the dtype its policy gives.
- ``GradScaler``: loss scaling, for float16 training.
- ``custom_fwd`` / ``custom_bwd``: autocast-aware custom autograd Functions.
- Beyond PyTorch: ``get_policy`` / ``policy_table`` read the policy table the dispatcher uses,
  ``policy_override`` changes it for one thread and region, and ``trace`` records what ran in
  which dtype. See docs/autocast.md.
"""

from tensorplay.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from tensorplay.amp.grad_scaler import GradScaler
from tensorplay.amp.policy import get_policy, policy_override, policy_table
from tensorplay.amp.trace import Trace, TraceEntry, trace

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler", "get_policy",
           "policy_table", "policy_override", "trace", "Trace", "TraceEntry"]
