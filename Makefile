# `make test` and `make demo` do all set-up on a fresh Debian 12 machine (see README.md).
PY     := .venv/bin/python
BUILD  := build/dev
JOBS   ?= $(shell nproc)
SITE    = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: deps build test test-cpp test-python demo clean

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
	@$(PY) -m pytest -q tests/python

demo: build
	@if [ -f examples/fashion_mnist.py ]; then $(PY) examples/fashion_mnist.py; \
	 else echo "demo not built yet"; fi

clean:
	rm -rf build python/tensorplay/_C*.so
