"""The Python examples run as a user runs them. examples/fashion_mnist.py on a tiny slice of the
real data: it trains in float32 and under autocast, reports, saves, plots, and reloads its
checkpoint to the same accuracy. examples/autocast_tour.py: every step prints what it shows.
examples/ddp_fashion_mnist.py: two processes, started by the launcher, learn."""

import os
import re
import subprocess
import sys

import pytest

import tensorplay.distributed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "fashion_mnist.py")


def run(*args, check=True):
    result = subprocess.run([sys.executable, SCRIPT, "--no-progress", "--threads", "1", *args],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    checkpoint, png = out / "net.tp", out / "loss.png"
    result = run("--compare", "--limit", "640", "--epochs", "2", "--batch-size", "64", "--lr", "2e-3",
                 "--checkpoint", str(checkpoint), "--plot", str(png))
    return result.stdout, checkpoint, png


def accuracies(stdout, label):
    return [float(a) for a in re.findall(rf"^{label} epoch \d+: test accuracy ([\d.]+)%", stdout, re.M)]


def test_compare_trains_both_and_reports_a_table(compared):
    stdout, checkpoint, png = compared
    fp32, amp = accuracies(stdout, "float32"), accuracies(stdout, "autocast bfloat16")
    assert len(fp32) == len(amp) == 2
    # 640 images, 2 epochs: far from converged, but well above chance (10%) in both precisions
    assert min(fp32[-1], amp[-1]) > 40, stdout
    for row in ("time per epoch (s)", "images/s", "peak memory (MB)", "final training loss",
                "test accuracy (%)"):
        assert re.search(rf"^{re.escape(row)}\s+[\d.,]+\s+[\d.,]+$", stdout, re.M), f"no row {row!r}:\n{stdout}"
    assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"loss curves saved to {png}" in stdout


def test_autocast_lowers_the_peak_memory(compared):
    """bfloat16 activations are half the size of float32 ones; the float32 weights, their gradients,
    the pools' int64 indices and the data slice are not, so the peak falls by about a fifth here."""
    stdout = compared[0]
    fp32, amp = map(float, re.search(r"^peak memory \(MB\)\s+([\d.]+)\s+([\d.]+)$", stdout, re.M).groups())
    assert amp < 0.85 * fp32, stdout


def test_eval_only_reloads_the_checkpoint_to_the_same_accuracy(compared):
    stdout, checkpoint, _ = compared
    assert checkpoint.exists()
    result = run("--eval-only", "--checkpoint", str(checkpoint), "--limit", "640")
    reported = float(re.search(r"test accuracy ([\d.]+)% on 640 images", result.stdout).group(1))
    assert reported == accuracies(stdout, "autocast bfloat16")[-1]


def test_cuda_without_a_gpu_stops_with_a_message():
    result = run("--device", "cuda", check=False)
    assert result.returncode != 0
    assert "--device cuda needs a CUDA build of tensorplay and a GPU" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_dataset_stops_with_a_message(tmp_path):
    result = run("--data", str(tmp_path), check=False)
    assert result.returncode != 0 and "cannot read the dataset" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_explains_every_option():
    out = run("--help").stdout
    for option in ("--epochs", "--batch-size", "--lr", "--device", "--dtype", "--threads", "--no-amp", "--seed",
                   "--compare", "--eval-only", "--checkpoint"):
        assert option in out


def test_autocast_tour_shows_each_step():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "autocast_tour.py")],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "model output: tensorplay.bfloat16, loss: tensorplay.float32, weights stay tensorplay.float32" in out
    assert "weight gradient: tensorplay.float32" in out
    assert "the enabled=False subregion: tensorplay.float32" in out
    assert "mixing raises: [matmul]" in out and "bfloat16" in out
    assert "this thread: enabled=True; the new thread saw enabled=False" in out
    assert "'einsum': 'composite'" in out
    # the injected overflow at step 1 halves the scale; two clean steps later it doubles
    scales = [float(s) for s in re.findall(r"scale now (\S+)", out)]
    assert scales == [1024.0, 512.0, 512.0, 1024.0], out


@pytest.mark.skipif(not tensorplay.distributed.is_available(), reason="tensorplay was built without Gloo")
def test_ddp_example_trains_on_two_processes_started_by_the_launcher():
    result = subprocess.run([sys.executable, "-m", "tensorplay.distributed.run", "--nproc-per-node", "2",
                             os.path.join(ROOT, "examples", "ddp_fashion_mnist.py"), "--limit", "3000", "--epochs", "2",
                             "--expect-accuracy", "0.6"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["epoch 1", "epoch 2"]
    assert lines[-1].endswith("(2 processes)")
