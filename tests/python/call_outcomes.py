"""What a call answers, in a form that compares between torch and tensorplay: its value (containers
and devices as plain data, other objects by type name) or its exception's type and message, and the
warnings it gave. "tensorplay" in a message reads as "torch", since tensorplay's messages name its
own API where PyTorch's name PyTorch's; C++'s "(Triggered internally at ...)" suffix is dropped."""

import inspect
import warnings


def enter(context_manager):
    """Enters and leaves `context_manager` (for expressions that test a with-block)."""
    with context_manager:
        return "entered"


def normalize(text):
    return text.replace("tensorplay", "torch").split(" (Triggered internally at")[0]


def describe(value, root):
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)  # the type too: 0 == False, and 1 == 1.0
    if isinstance(value, dict):
        return (type(value).__name__, [(k, describe(v, root)) for k, v in value.items()])
    if isinstance(value, (list, tuple, set, frozenset)):
        return (type(value).__name__, [describe(v, root) for v in value])
    if isinstance(value, root.device):
        return ("device", str(value))
    if isinstance(value, root.dtype):
        return ("dtype", normalize(str(value)))
    if inspect.isclass(value):
        return ("class", value.__name__)
    return ("object", type(value).__name__)


def outcome(root, expression, names=None):
    """What evaluating `expression` with `T` bound to `root` (torch or tensorplay) answers."""
    scope = {"T": root, "enter": enter, **(names or {})}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("value", describe(eval(expression, scope), root))
        except Exception as error:  # noqa: BLE001
            result = ("raises", type(error).__name__, normalize(str(error)))
    return result, [(w.category.__name__, normalize(str(w.message))) for w in caught
                    if not issubclass(w.category, ResourceWarning)]
