"""tensorplay.compat: torch mode, in which ``import torch`` gives tensorplay.

While it is on, ``torch`` and every ``torch.*`` submodule resolve, for the whole process, to
tensorplay's own modules (an import hook; nothing is written to disk), so a program and the libraries
it imports run on tensorplay without ``import tensorplay as torch`` edited into each file.
``python -m tensorplay.run`` runs a program this way; enable() and disable() do it for notebooks and
tests. See docs/run.md.

>>> import tensorplay.compat
>>> with tensorplay.compat.enable(lazy=True):
...     import torch
...     import torch.nn.functional as F
...     F.relu(torch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from tensorplay.compat._mode import disable, enable

__all__ = ["disable", "enable"]
