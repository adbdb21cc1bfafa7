"""The torch names a program used, for verbose mode: each with what provided it (tensorplay's own
object, a lazy placeholder, or nothing) and where the program first used it. The table printed at
exit is the list a user needs to report what tensorplay lacks.

Imports are noted by the finder. Attribute lookups are noted by giving each tensorplay module, for
the session, a subclass of its type that watches lookups: the module object stays the same one (its
identity is what keeps ``torch.Tensor is tensorplay.Tensor`` true), and the type goes back on disable.
Watching costs about a microsecond per lookup, so only verbose mode does it."""

import types

from tensorplay.compat._caller import program_frame, where
from tensorplay.compat._placeholder import Placeholder, first_use

TENSORPLAY, PLACEHOLDER, MISSING = "tensorplay", "placeholder", "missing"


class Usage:
    def __init__(self):
        self.first = {}  # torch name -> (provider, where it was first used)

    def note(self, name, value, frame):
        """Notes that the code of `frame` used torch name `name`, which is `value` (MISSING if none)."""
        if name not in self.first:
            provider = MISSING if value is MISSING else PLACEHOLDER if isinstance(value, Placeholder) else TENSORPLAY
            self.first[name] = (provider, where(frame))

    def table(self, placeholders):
        """The table of the names used, placeholders made through other placeholders included."""
        rows = dict(self.first)
        for name, made in placeholders.items():
            rows.setdefault(name, (PLACEHOLDER, first_use(made)))
        lacking = sorted(name for name, (provider, _) in rows.items() if provider != TENSORPLAY)
        lines = [f"tensorplay.compat: the program used {len(rows)} torch names; tensorplay lacks {len(lacking)}"]
        if rows:
            width = max(len("torch name"), *(len(name) for name in rows))
            lines.append(f"  {'torch name':<{width}}  {'provided by':<11}  first used at")
            lines += [f"  {name:<{width}}  {provider:<11}  {location}"
                      for name, (provider, location) in sorted(rows.items())]
        if lacking:
            lines.append("tensorplay lacks: " + ", ".join(lacking))
        return "\n".join(lines)


def watching(cls, looked_up):
    """The subclass of module type `cls` that reports each lookup of a name, and each assignment to
    a name the module has, to ``looked_up(module, name, value)`` (value MISSING for a failed lookup)."""
    get, put = cls.__getattribute__, cls.__setattr__

    def __getattribute__(self, name):
        try:
            value = get(self, name)
        except AttributeError:
            if not name.startswith("__"):
                looked_up(self, name, MISSING)
            raise
        if not name.startswith("__"):
            looked_up(self, name, value)
        return value

    def __setattr__(self, name, value):
        if not name.startswith("__") and (name in get(self, "__dict__") or hasattr(cls, name)):
            looked_up(self, name, value)
        put(self, name, value)

    return type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__setattr__": __setattr__})


def is_module(value):
    return isinstance(value, types.ModuleType) and not isinstance(value, Placeholder)
