"""A short soak (tests/soak/soak_cnn.py): a small CNN trained under autocast must hold its resident
memory flat once warmed up. `make soak` runs 10,000 steps; this runs 300, enough to catch a leak
of a step's activations or graph, not one of a few bytes per step.

The run happens in a fresh process, so RSS reflects that workload alone, not pytest's."""

import pathlib
import subprocess
import sys

SOAK = pathlib.Path(__file__).resolve().parents[1] / "soak" / "soak_cnn.py"
# Small batches on one intra-op thread keep this at a few seconds on a busy two-core machine.
SHORT_RUN = ["--batch", "8", "--threads", "1", "--sample-every", "10", "--tolerance-mb", "3"]


def soak(*args):
    return subprocess.run([sys.executable, str(SOAK), *SHORT_RUN, *args], capture_output=True, text=True,
                          timeout=600)


def test_resident_memory_stays_flat_after_warm_up():
    result = soak("--steps", "300", "--warmup", "100")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.startswith("soak: 300 steps"), summary


def test_a_leaking_training_loop_fails_the_soak():
    # Keeping every step's loss (and through it the graph and its saved activations) must show.
    result = soak("--steps", "150", "--warmup", "30", "--leak")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "resident memory grew" in result.stderr
