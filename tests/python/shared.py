"""Helpers shared by test files across the suite: the parameter lists that several files run
their tests over, and a runner that checks a case in a forked child process."""

import os
import select
import signal

import pytest
import torch

import tensorplay

# For a test that runs once with each library and compares what it sees (the module as `m`).
LIBS = [pytest.param(tensorplay, id="tensorplay"), pytest.param(torch, id="torch")]

# Dtype names that tests in several files run over; each test turns a name into both libraries'
# dtype with getattr(m, name).
FLOAT32_AND_BFLOAT16 = ("float32", "bfloat16")
SIXTEEN_BIT_FLOATS = ("bfloat16", "float16")
FLOAT32_AND_16_BIT = ("float32", *SIXTEEN_BIT_FLOATS)
FLOAT32_BFLOAT16_AND_FLOAT64 = (*FLOAT32_AND_BFLOAT16, "float64")
FLOATS = (*FLOAT32_AND_16_BIT, "float64")


def run_isolated(check, case, failure=AssertionError, timeout=60):
    """check(case) in a forked child, so that a crash or a hang fails this case alone, not the
    whole run. Raises failure(message) when check raised (its message), when the child died of a
    signal, or when it sent nothing for `timeout` seconds (it is killed then)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            check(case)
            message = ""
        except BaseException as e:  # noqa: BLE001
            message = str(e) or type(e).__name__
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(message.encode())
        os._exit(0)
    os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as pipe:
        while select.select([pipe], [], [], timeout)[0]:
            chunk = pipe.read1(65536)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        raise failure(f"tensorplay crashed the interpreter: {name}" if name != "SIGKILL" else
                      f"tensorplay hung for {timeout} s")
    message = b"".join(chunks).decode()
    if message:
        raise failure(message)
