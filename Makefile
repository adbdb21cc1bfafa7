# `make test` and `make demo` do all set-up on a fresh Debian 12 machine (see README.md).
PY     := .venv/bin/python
BUILD  := build/dev
JOBS   ?= $(shell nproc)
SITE    = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# The long budgets of the reliability checks; `make test` runs short ones.
TP_FUZZ_CASES     ?= 10000
TP_FUZZ_EXAMPLES  ?= 1000
TP_STRESS_REGIONS ?= 10000
TP_SOAK_STEPS     ?= 10000

.PHONY: deps build test test-cpp test-python test-asan test-asan-build demo bench docs clean fuzz stress soak soak-asan

deps:
	@scripts/install-deps.sh

# Builds the library, the C++ tests and the Python module, and puts python/ on .venv's path
# (an editable install: the module is built into python/tensorplay/).
build: deps
	@[ -f $(BUILD)/build.ninja ] || .venv/bin/cmake -S . -B $(BUILD) -G Ninja \
	    -DCMAKE_MAKE_PROGRAM=$(CURDIR)/.venv/bin/ninja -DPython_EXECUTABLE=$(CURDIR)/$(PY) \
	    -DTP_PYTHON_INPLACE=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
	@.venv/bin/cmake --build $(BUILD) -j $(JOBS)
	@echo "$(CURDIR)/python" > $(SITE)/tensorplay-dev.pth

test: build test-cpp test-python

test-cpp:
	@.venv/bin/ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python:
	@TP_BUILD_DIR=$(CURDIR)/$(BUILD) $(PY) -m pytest -q tests/python

# The C++ and Python tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer. The
# sanitized module goes into a package of links to python/tensorplay, which Python finds first;
# the interpreter itself is not sanitized, so the runtime is preloaded. CPython frees little at
# exit, so LeakSanitizer watches the C++ tests only. A failed allocation returns null (the tests
# of out-of-memory handling expect MemoryError), and the resident-memory soak is left out: ASan's
# quarantine of freed memory is what it would measure.
ASAN_BUILD := build/asan
ASAN_PKG   := $(ASAN_BUILD)/pkg
ASAN_RT     = $(shell $(CXX) -print-file-name=libasan.so) $(shell $(CXX) -print-file-name=libubsan.so)
test-asan-build: deps
	@[ -f $(ASAN_BUILD)/build.ninja ] || .venv/bin/cmake -S . -B $(ASAN_BUILD) -G Ninja \
	    -DCMAKE_MAKE_PROGRAM=$(CURDIR)/.venv/bin/ninja -DPython_EXECUTABLE=$(CURDIR)/$(PY) \
	    -DTP_SANITIZE=ON >/dev/null
	@.venv/bin/cmake --build $(ASAN_BUILD) -j $(JOBS)

test-asan: test-asan-build
	@UBSAN_OPTIONS=print_stacktrace=1 .venv/bin/ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)
	@rm -rf $(ASAN_PKG) && mkdir -p $(ASAN_PKG) && cp -rs $(CURDIR)/python/tensorplay $(ASAN_PKG)/
	@rm -f $(ASAN_PKG)/tensorplay/_C*.so && cp $(ASAN_BUILD)/_C*.so $(ASAN_PKG)/tensorplay/
	@TP_BUILD_DIR=$(CURDIR)/$(ASAN_BUILD) PYTHONPATH=$(CURDIR)/$(ASAN_PKG) LD_PRELOAD="$(ASAN_RT)" \
	    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(PY) -m pytest -q -p no:cacheprovider tests/python \
	    --deselect tests/python/test_reliability_soak.py::test_resident_memory_stays_flat_after_warm_up

# Mutated checkpoints (safetensors and PyTorch's zip format) against tensorplay.load, mutated IDX files against the dataset reader,
# each in a process with a capped address space; chains of views with extreme sizes, strides and
# offsets against PyTorch; random autograd programs (graphs, hooks, threads) against PyTorch; then
# every op of the op table against PyTorch, TP_FUZZ_EXAMPLES hypothesis examples per op (each
# fuzzer prints the cases it tried).
fuzz: build
	@$(PY) tests/fuzz/fuzz_load.py --cases $(TP_FUZZ_CASES)
	@$(PY) tests/fuzz/fuzz_load_zip.py --cases $(TP_FUZZ_CASES)
	@$(PY) tests/fuzz/fuzz_idx.py --cases $(TP_FUZZ_CASES)
	@$(PY) tests/fuzz/fuzz_strides.py --cases $(TP_FUZZ_CASES)
	@$(PY) tests/fuzz/fuzz_autograd.py --cases $(TP_FUZZ_CASES)
	@$(PY) tests/fuzz/fuzz_ops.py --examples $(TP_FUZZ_EXAMPLES)

# 16 threads, each through TP_STRESS_REGIONS nested autocast regions.
stress: build
	@TP_STRESS_REGIONS=$(TP_STRESS_REGIONS) $(PY) -m pytest -q tests/python/test_reliability_threads.py

# A small CNN trained under autocast; fails if resident memory grows after the warm-up.
soak: build
	@$(PY) tests/soak/soak_cnn.py --steps $(TP_SOAK_STEPS)

# The same number of CNN steps in C++ (tests/soak/soak_cnn.cpp) under AddressSanitizer, with
# LeakSanitizer checking at exit that the run leaked nothing.
soak-asan: test-asan-build
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(ASAN_BUILD)/soak_cnn $(TP_SOAK_STEPS)

# Trains the Fashion-MNIST CNN from one seed in float32 and under autocast, and prints what mixed
# precision bought (examples/fashion_mnist.py --help for the options).
demo: build
	@$(PY) examples/fashion_mnist.py --compare

# Every case of benchmarks/ in tensorplay and in PyTorch, in alternating processes; prints the table
# and writes it into BENCHMARKS.md (about 10 minutes on 2 cores; `$(PY) -m benchmarks.bench --quick`
# is a smoke test, `--help` lists the options).
bench: build
	@$(PY) -m benchmarks.bench --write

# The pages written from the code: docs/autocast.md's policy table, from csrc/tensorplay/amp/autocast_policy.h.
docs: build
	@$(PY) scripts/autocast_policy_doc.py

clean:
	rm -rf build python/tensorplay/_C*.so
