"""Every public name of the namespaces a training script touches exists in tensorplay: the torch
namespace's functions, torch.Tensor's methods and properties, torch.nn's module classes,
torch.nn.functional, nn.init, nn.utils, nn.utils.rnn, torch.optim's optimizers, optim.swa_utils,
torch.autograd, torch.random, and the CPU wheel's torch.cuda and torch.accelerator, as PyTorch 2.13
lists them. A name left out is in EXCLUDED with its
reason; a name that is excluded but now exists fails too, so the list stays short and true.

Each name's behaviour is tested where its family is (test_nn_*.py, test_optim*.py, test_composites_*.py, the
op table);
this test keeps a program from stopping at the first name we lack."""

import importlib
import inspect

import pytest
import torch

import tensorplay

NAMESPACES = ("torch", "Tensor", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "optim",
              "optim.swa_utils", "autograd", "random", "cuda", "accelerator")

# The torch namespace's internals, quantization kernels and vendor back ends, which are not counted.
INTERNAL = ("_", "quantize", "fbgemm", "mkldnn", "cudnn", "miopen", "sym_", "q_", "fake_", "native_")

FLOAT8 = "a float8 scaled matmul (or its scaling enums): tensorplay has no float8 dtypes"
SPARSE = "sparse tensors: the scientific-computing issue"
QUANTIZED = "quantization: tensorplay has no quantized tensors"
JIT = "TorchScript (the JIT): tensorplay has no graph compiler"
SYNC_BATCH_NORM = "SyncBatchNorm's kernels: the distributed issue"
UINT64 = "returns uint64, which tensorplay lacks"
SLICE_INVERSE = ("a view of its input's storage in src's geometry whose gradient is a slice of the output's: "
                 "tensorplay cannot make a view with that backward in Python")

EXCLUDED = {
    **{("torch", name): SYNC_BATCH_NORM for name in (
        "batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt", "batch_norm_gather_stats",
        "batch_norm_gather_stats_with_counts", "batch_norm_stats", "batch_norm_update_stats")},
    **{("torch", name): SPARSE for name in (
        "ccol_indices_copy", "col_indices_copy", "crow_indices_copy", "indices_copy", "row_indices_copy",
        "values_copy", "hsmm", "hspmm", "smm", "saddmm", "sspaddmm", "resize_as_sparse_", "sparse_bsc_tensor",
        "sparse_bsr_tensor", "sparse_compressed_tensor", "sparse_csc_tensor",
        "sparse_csr_tensor")},
    **{("Tensor", name): SPARSE for name in (
        "ccol_indices", "col_indices", "crow_indices", "row_indices", "resize_as_sparse_", "smm", "sspaddmm",
        "sparse_resize_", "sparse_resize_and_clear_", "to_sparse_bsc", "to_sparse_bsr", "to_sparse_csc",
        "to_sparse_csr")},
    **{("torch", name): QUANTIZED for name in (
        "choose_qparams_optimized", "empty_quantized", "fused_moving_avg_obs_fake_quant", "int_repr")},
    **{("Tensor", name): QUANTIZED for name in (
        "int_repr", "q_per_channel_axis", "q_per_channel_scales", "q_per_channel_zero_points", "q_scale",
        "q_zero_point", "qscheme")},
    **{("torch", name): JIT for name in (
        "fork", "wait", "import_ir_module", "import_ir_module_from_buffer", "merge_type_from_type_comment",
        "parse_ir", "parse_schema", "parse_type_comment", "unify_type_list")},
    ("torch", "hash_tensor"): UINT64,
    ("Tensor", "hash_tensor"): UINT64,
    ("torch", "slice_inverse"): SLICE_INVERSE,
    ("Tensor", "slice_inverse"): SLICE_INVERSE,
    ("torch", "vmap"): "torch.func.vmap, which tensorplay.func lacks: it needs a batching rule for every op",
    ("torch", "embedding_bag"): "the low-level op whose extra outputs (offset2bag, bag_size, max_indices) are its "
                                "kernels' internals; nn.functional.embedding_bag exists",
    ("torch", "lobpcg"): "the LOBPCG eigensolver (about 1,200 lines of Python in torch/_lobpcg.py, with its own "
                         "backward): not ported",
    ("Tensor", "chalf"): "tensorplay has no complex32",
    ("Tensor", "grad_dtype"): "needs the autograd engine to cast accumulated gradients",
    ("Tensor", "index"): "binds dims to first-class dimensions (functorch.dim's Dim objects), which tensorplay lacks",
    ("Tensor", "storage_type"): "returns a legacy typed storage class (torch.FloatStorage, ...), which tensorplay "
                                "lacks",
    ("Tensor", "to_mkldnn"): "tensorplay has no oneDNN (MKL-DNN) layout",
    ("Tensor", "to_padded_tensor"): "nested tensors, which tensorplay lacks",
    ("nn.functional", "scaled_mm"): FLOAT8,
    ("nn.functional", "scaled_grouped_mm"): FLOAT8,
    ("nn.functional", "ScalingType"): FLOAT8,
    ("nn.functional", "SwizzleType"): FLOAT8,
    ("autograd", "NestedIOFunction"): "the pre-1.0 Function with instance methods; PyTorch 2.13's own fails on "
                                      "use (its forward calls a _do_forward that no base class has)",
}


def namespace_of(root, namespace):
    """torch.<namespace> or tensorplay.<namespace> ("torch": the package itself, "Tensor": the class)."""
    if namespace == "Tensor":
        return root.Tensor
    return root if namespace == "torch" else importlib.import_module(f"{root.__name__}.{namespace}")


def public_names(namespace):
    """The public names of torch.<namespace> that a program can use: the functions of the torch
    namespace (internals, quantization kernels and vendor back ends left out), every public attribute
    of Tensor, module classes in nn, optimizers in optim, and functions and classes elsewhere (typing
    aliases and C++ binding types left out)."""
    if namespace == "Tensor":
        return {name for name in dir(torch.Tensor) if not name.startswith("_")}
    module = namespace_of(torch, namespace)
    names = set()
    for name in getattr(module, "__all__", dir(module)):
        obj = getattr(module, name, None)
        if name.startswith("_") or obj is None or inspect.ismodule(obj):
            continue
        if namespace == "torch":
            if not name.startswith(INTERNAL) and (inspect.isbuiltin(obj) or inspect.isfunction(obj)):
                names.add(name)
        elif namespace == "nn":
            if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
                names.add(name)
        elif namespace == "optim":
            if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer):
                names.add(name)
        elif inspect.isclass(obj):
            if not getattr(obj, "__module__", "").startswith(("torch._C", "typing", "collections")):
                names.add(name)
        elif callable(obj) and getattr(obj, "__module__", "") != "typing":
            names.add(name)
    return names


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_name_exists(namespace):
    ours = namespace_of(tensorplay, namespace)
    where = "tensorplay" if namespace == "torch" else f"tensorplay.{namespace}"
    excluded = {name for (ns, name) in EXCLUDED if ns == namespace}
    wanted = public_names(namespace)
    missing = sorted(name for name in wanted - excluded if not hasattr(ours, name))
    assert not missing, f"{where} lacks {missing}"
    stale = sorted(name for name in excluded if hasattr(ours, name))
    assert not stale, f"EXCLUDED lists names {where} now has: {stale}"
    unknown = sorted(excluded - wanted)
    assert not unknown, f"EXCLUDED lists names that PyTorch's {namespace} does not count: {unknown}"
