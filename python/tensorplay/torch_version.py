"""TorchVersion, the type of torch.__version__: a str that compares with versions as a version.

Programs write ``torch.__version__ >= "2.2"`` and get PyTorch's answer, though as strings
"2.13.0" < "2.2". The comparisons follow PEP 440's order for what version checks write: release
numbers (missing ones count as 0), then a development or pre-release below its release, a
post-release above it, and a local label (``+cpu``) above the same version without one.

>>> TorchVersion("2.13.0+tensorplay.0.1.0") >= "2.2"
True
>>> TorchVersion("2.13.0") > (2, 13)
False
"""

import re

__all__ = ["TorchVersion"]

_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(dev|a|alpha|b|beta|c|rc|pre|preview|post)[-_.]?(\d*))?"
                      r"(?:[-_.]?dev[-_.]?(\d*))?(\+.*)?$", re.IGNORECASE)
_STAGES = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3, "pre": 3, "preview": 3, "post": 5}
_FINAL = 4


def _key(version, width):
    """A tuple that orders versions as PEP 440 does, its release numbers padded to `width`."""
    if isinstance(version, (tuple, list)):
        release, stage, number, dev, local = tuple(int(part) for part in version), _FINAL, 0, None, None
    else:
        match = _VERSION.match(str(version).strip())
        if match is None:
            raise ValueError(f"TorchVersion: {version!r} is not a version")
        numbers, tag, number, dev, local = match.groups()
        release = tuple(int(part) for part in numbers.split("."))
        stage = _STAGES[tag.lower()] if tag else _FINAL
        number = int(number or 0)
        dev = None if dev is None else int(dev or 0)
    # A ".devN" suffix on a pre- or post-release puts it below that release.
    dev_key = (1, 0) if dev is None else (0, dev)
    return release + (0,) * (width - len(release)), stage, number, dev_key, local is not None


class TorchVersion(str):
    """A version string (``"2.13.0+cpu"``) whose <, <=, > and >= compare it, as a version, with a
    version string or a tuple of numbers; == and hashing stay those of the string."""

    def _compare(self, other):
        width = max(len(self.split("+")[0].split(".")), len(other) if isinstance(other, (tuple, list)) else
                    len(str(other).split("+")[0].split(".")))
        mine, theirs = _key(self, width), _key(other, width)
        return (mine > theirs) - (mine < theirs)

    def __lt__(self, other):
        return self._compare(other) < 0

    def __le__(self, other):
        return self._compare(other) <= 0

    def __gt__(self, other):
        return self._compare(other) > 0

    def __ge__(self, other):
        return self._compare(other) >= 0
