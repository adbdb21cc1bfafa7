"""tensorplay.version: what this build is, in the layout of torch.version, so that a program asking
``torch.version.cuda`` learns what it learns from PyTorch's CPU wheel: no CUDA, no ROCm, no XPU."""

__version__ = "0.1.0"

# The PyTorch release whose API tensorplay follows (its tests' oracle). In torch mode
# (tensorplay.compat) torch.__version__ is this release with tensorplay's version as its local label.
torch_api = "2.13.0"

cuda = None
hip = None
rocm = None
xpu = None
debug = False
