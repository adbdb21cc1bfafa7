"""nn.functional by family, one file each; tensorplay/nn/functional.py re-exports each file's __all__."""
