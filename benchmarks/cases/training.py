"""Case 5: one training step of the seed's loop (zero_grad, forward and loss, backward, SGD with
momentum) for the MLP at batch 256 and the CNN at batch 128 (benchmarks/cases/models.py), in
float32 and under autocast (bfloat16), on 1 and on 2 threads; milliseconds per step on a fixed
random batch, after warm-up. For the MLP under autocast the table also gives the step's
GEMM-bound limit: its GEMM FLOPs at one core's bfloat16 peak, over the measured step time; for
each model, the autocast step's time over the float32 step's (below 1 where the CPU has
AVX512-BF16).

The 1-thread steps run again capped at AVX2, as on a CPU without AVX-512 and so without
AVX512-BF16 (TP_CPU_CAPABILITY=avx2 for tensorplay; ATEN_CPU_CAPABILITY=avx2 and
ONEDNN_MAX_CPU_ISA=AVX2 for PyTorch): there bfloat16 products and convolutions are emulated, and
the table gives the autocast step's time over the float32 step's.

In each process a model's steps alternate in blocks (seconds_per_call_alternating): float32 and
autocast, on 1 and on 2 threads (the process starts 2 and sets 1 or 2 before each block), so that
the autocast/float32 ratios and the 2-thread speed-ups compare their steps in the same minutes."""

from benchmarks.cases import models
from benchmarks.cases.common import load, seconds_per_call_alternating
from benchmarks.report import Row, check

TITLE = "5. Training steps"

BATCH = {"mlp": 256, "cnn": 128}
# Ratio targets against PyTorch, 1 thread.
TARGETS = {("mlp", "autocast"): 0.85, ("cnn", "autocast"): 0.6, ("mlp", "float32"): 0.9, ("cnn", "float32"): 0.9}
GEMM_BOUND_TARGET = 0.75
SPEEDUP_TARGET = 1.7
# Without AVX512-BF16, autocast must not make a step slower than float32.
WITHOUT_BF16_TARGET = 1.0
AVX2_ONLY = {"TP_CPU_CAPABILITY": "avx2", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def children(quick):
    # "threads": the process's thread pool; "thread_counts": the counts its steps run with.
    both = {"threads": 2, "thread_counts": [1, 2]}
    if quick:  # a few steps each
        return [{"models": ["mlp", "cnn"], **both, "min_time": 0.0},
                {"models": ["mlp", "cnn"], "threads": 1, "min_time": 0.0, "env": AVX2_ONLY, "tag": " avx2"}]
    return [{"models": [model], **both, "min_time": 1.5} for model in ("mlp", "cnn")] + \
        [{"models": [model], "threads": 1, "min_time": 1.5, "env": AVX2_ONLY, "tag": " avx2"} for model in ("mlp", "cnn")]


def run(lib_name, params):
    lib = load(lib_name, params)
    figures = {}
    counts = params.get("thread_counts", [params["threads"]])
    for name in params["models"]:
        x, y = models.random_batch(lib, name, BATCH[name])
        cases = []  # (thread count, mode, step)
        for mode in ("float32", "autocast"):
            lib.manual_seed(0)
            step = models.training_step(lib, models.MODELS[name](lib), use_autocast=mode == "autocast")
            cases += [(count, mode, step) for count in counts]
        seconds = seconds_per_call_alternating([lambda step=step: step(x, y) for _, _, step in cases],
                                               min_time=params["min_time"], warmup=2,
                                               prepare=[lambda count=count: lib.set_num_threads(count)
                                                        for count, _, _ in cases])
        for (count, mode, _), s in zip(cases, seconds):
            figures[f"{name} {mode} {count}{params.get('tag', '')}"] = s * 1e3
    return figures


def rows(results, machine):
    out = []
    for name in ("mlp", "cnn"):
        for mode in ("float32", "autocast"):
            label = f"{name.upper()}, batch {BATCH[name]}, {mode}"
            one, two = results[f"{name} {mode} 1"], results[f"{name} {mode} 2"]
            target = TARGETS[name, mode]
            row = Row(f"{label}, 1 thread", "ms", *one, kind="cost", target=f"ratio <= {target}")
            row.met = check(row.ratio, lambda r: r <= target)
            out.append(row)
            if name == "mlp" and mode == "autocast":
                out.append(_gemm_bound(label, one, machine))
            out.append(Row(f"{label}, 2 threads", "ms", *two, kind="cost"))
            speedup = Row(f"{label}: 2 threads' speed-up over 1", "x",
                          *(t1 / t2 if t1 and t2 else None for t1, t2 in zip(one, two)),
                          target=f">= {SPEEDUP_TARGET}x")
            speedup.met = check(speedup.tp, lambda x: x >= SPEEDUP_TARGET)
            out.append(speedup)
        out.append(_with_bf16(name, results, machine))
        out.append(_without_bf16(name, results))
    return out


def _autocast_over_float32(results, name, tag=""):
    """Each library's 1-thread autocast step over its float32 step."""
    f32, autocast = results[f"{name} float32 1{tag}"], results[f"{name} autocast 1{tag}"]
    return [a / f if a and f else None for a, f in zip(autocast, f32)]


def _with_bf16(name, results, machine):
    """Autocast must make the step faster where the CPU multiplies bfloat16 natively."""
    label = f"{name.upper()}, batch {BATCH[name]}: autocast step / float32 step"
    if "avx512_bf16" not in machine.flags and "amx_bf16" not in machine.flags:
        return Row(label, "x", *_autocast_over_float32(results, name), target="n/a (no AVX512-BF16)")
    tp, torch = _autocast_over_float32(results, name)
    return Row(label, "x", tp, torch, target="< 1 (AVX512-BF16)", met=check(tp, lambda ratio: ratio < 1))


def _without_bf16(name, results):
    """The same, both capped at AVX2: autocast must not make the step slower."""
    tp, torch = _autocast_over_float32(results, name, " avx2")
    return Row(f"{name.upper()}, batch {BATCH[name]}, capped at AVX2 (no AVX512-BF16): autocast step / float32 step",
               "x", tp, torch, target=f"<= {WITHOUT_BF16_TARGET}",
               met=check(tp, lambda ratio: ratio <= WITHOUT_BF16_TARGET))


def _gemm_bound(label, step_ms, machine):
    """How much of each library's step its GEMMs alone would take at one core's bfloat16 peak."""
    peak = machine.peak_gflops("bfloat16")
    if not peak:
        return Row(f"{label}: GEMM-bound limit / step time", "%", None, None, target="n/a (bf16 emulated)")
    limit_ms = models.mlp_gemm_flops(BATCH["mlp"]) / (peak * 1e9) * 1e3
    tp, torch = (100 * limit_ms / ms if ms else None for ms in step_ms)
    return Row(f"{label}: GEMM-bound limit ({limit_ms:.2f} ms) / step time", "%", tp, torch,
               target=f">= {GEMM_BOUND_TARGET:.0%}", met=check(tp, lambda share: share >= 100 * GEMM_BOUND_TARGET))
