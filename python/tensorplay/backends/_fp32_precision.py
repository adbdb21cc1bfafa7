"""Which lower precision float32 ops may compute in, per backend and per kind of op, as PyTorch keeps
it: one table behind torch.backends.*.fp32_precision, the legacy allow_tf32 flags and
torch.set_float32_matmul_precision, with PyTorch's rules for how they read each other.

The CPU kernels read mkldnn's matmul and conv entries: "bf16" lets float32 matmuls (respectively
convolutions) multiply in bfloat16 and accumulate in float32 where the CPU has native bfloat16
(oneDNN's bf16 fpmath mode, as PyTorch's oneDNN path); anything else computes exactly. The cuda
entries are state only: this build has no CUDA kernels.

The table holds "ieee", "tf32", "bf16" or "none" for (backend, op) with backend generic, cuda or
mkldnn and op all, conv, rnn or matmul (generic has only all). Reading (backend, op) takes the first
entry that is not "none" of (backend, op), (backend, all), (generic, all); cuda reads bf16 as "none".
cuda's conv and rnn read "tf32" when all three are "none" until they are first set (cuDNN's legacy
allow_tf32 is on by default). The legacy APIs write the table too, and reading them back raises when
the table says something they cannot express (a mix of the two APIs), as in PyTorch."""

from tensorplay import _C

_PRECISIONS = ("none", "ieee", "tf32", "bf16")
_table = {("generic", "all"): "none",
          **{(backend, op): "none" for backend in ("cuda", "mkldnn") for op in ("all", "conv", "rnn", "matmul")}}
_tf32_until_set = {("cuda", "conv"), ("cuda", "rnn")}
_float32_matmul_precision = "highest"  # the legacy setting: "highest", "high" or "medium"
_allow_tf32_cudnn = True

_SEE_ALSO = "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices"


def check_bool(setter, value):
    """PyTorch's check on a boolean flag's new value, naming its C++ setter."""
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")


def get(backend, op):
    precision = _table[backend, op]
    if precision == "none":
        precision = _table[backend, "all"]
    if precision == "none":
        precision = _table["generic", "all"]
    if precision == "none" and (backend, op) in _tf32_until_set:
        precision = "tf32"
    if backend == "cuda" and precision == "bf16":
        return "none"
    return precision


def set(backend, op, precision):  # noqa: A001  (the table's setter, beside get)
    if not isinstance(precision, str):
        raise TypeError("_set_fp32_precision_setter(): incompatible function arguments. The following argument types "
                        "are supported:\n    1. (arg0: str, arg1: str, arg2: str) -> str\n\n"
                        f"Invoked with: {backend!r}, {op!r}, {precision!r}")
    if precision not in _PRECISIONS:
        raise RuntimeError(f"Unknown precision: {precision}")
    if backend == "cuda" and precision == "bf16":
        raise RuntimeError("backend 'cuda' does not support precision 'bf16'")
    _table[backend, op] = precision
    _tf32_until_set.discard((backend, op))
    for kind in ("matmul", "conv"):  # what the CPU kernels read (cpu/float32_math.h)
        _C._set_float32_math(kind, "bf16" if get("mkldnn", kind) == "bf16" else "ieee")


# ---- The legacy APIs ----

def allow_tf32_cudnn():
    """torch.backends.cudnn.allow_tf32: whether cuDNN's conv and rnn may use TF32."""
    rnn, conv = get("cuda", "rnn") == "tf32", get("cuda", "conv") == "tf32"
    if not rnn == conv == _allow_tf32_cudnn:
        raise RuntimeError(
            "PyTorch is checking whether allow_tf32 is enabled for cuDNN without a specific operator name,but the "
            "current flag(s) indicate that cuDNN conv and cuDNN RNN have different TF32 flags.This combination "
            "indicates that you have used a mix of the legacy and new APIs to set the TF32 flags. We suggest only "
            f"using the new API to set the TF32 flag(s). See also: {_SEE_ALSO}")
    return _allow_tf32_cudnn


def set_allow_tf32_cudnn(allow):
    global _allow_tf32_cudnn
    check_bool("set_allow_tf32_cublas", allow)  # PyTorch's message names the cuBLAS setter here too
    set("cuda", "rnn", "tf32" if allow else "none")
    set("cuda", "conv", "tf32" if allow else "none")
    _allow_tf32_cudnn = allow


def allow_tf32_cublas():
    """torch.backends.cuda.matmul.allow_tf32: whether float32 matmuls on CUDA may use TF32."""
    allow = get("cuda", "matmul") == "tf32"
    if allow != (_float32_matmul_precision != "highest"):
        raise RuntimeError(
            "PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul,Current status indicate that you "
            "have used mix of the legacy and new APIs to set the TF32 status for cublas matmul. We suggest only using "
            f"the new API to set the TF32 flag. See also: {_SEE_ALSO}")
    return allow


def set_allow_tf32_cublas(allow):
    global _float32_matmul_precision
    check_bool("set_allow_tf32_cublas", allow)
    _float32_matmul_precision = "high" if allow else "highest"
    set("cuda", "matmul", "tf32" if allow else "ieee")


def float32_matmul_precision():
    """tensorplay.get_float32_matmul_precision()."""
    mkldnn = get("mkldnn", "matmul")
    if ((get("cuda", "matmul") == "tf32" and _float32_matmul_precision == "highest")
            or (mkldnn == "bf16" and _float32_matmul_precision != "medium")
            or (mkldnn == "tf32" and _float32_matmul_precision != "high")):
        raise RuntimeError(
            "PyTorch is checking the matmul precision without a specific backend name,Current status indicate that "
            "you have used mix of the legacy and new APIs to set the matmul precision. We suggest only using the new "
            f"API for matmul precision. See also: {_SEE_ALSO}")
    return _float32_matmul_precision


_MATMUL_PRECISIONS = {"highest": ("ieee", "ieee"), "high": ("tf32", "tf32"), "medium": ("tf32", "bf16")}


def set_float32_matmul_precision(precision):
    """tensorplay.set_float32_matmul_precision() for one of "highest", "high", "medium"."""
    global _float32_matmul_precision
    _float32_matmul_precision = precision
    cuda, mkldnn = _MATMUL_PRECISIONS[precision]
    set("cuda", "matmul", cuda)
    set("mkldnn", "matmul", mkldnn)
