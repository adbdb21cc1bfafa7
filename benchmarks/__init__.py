"""Side-by-side benchmarks of tensorplay against PyTorch: `make bench` (benchmarks/bench.py)."""
