"""Case 7: peak resident memory (getrusage's ru_maxrss), each figure from a fresh child: right
after importing the library, and after 20 CNN training steps at batch 128, in float32 and under
autocast (one thread). The import figure is what every user pays; the training ones include it."""

from benchmarks.cases.common import load, peak_rss_mb
from benchmarks.report import Row, check

TITLE = "7. Peak resident memory"

IMPORT_TARGET = 0.3
STEPS = 20


def children(quick):
    return [{"what": "import"}] + [{"what": "cnn", "mode": mode, "steps": 5 if quick else STEPS}
                                   for mode in ("float32", "autocast")]


def run(lib_name, params):
    lib = load(lib_name, params)
    if params["what"] == "import":
        return {"import": peak_rss_mb()}
    from benchmarks.cases import models  # NumPy, which both libraries import anyway: after the import figure

    x, y = models.random_batch(lib, "cnn", 128)
    step = models.training_step(lib, models.cnn(lib), use_autocast=params["mode"] == "autocast")
    for _ in range(params["steps"]):
        step(x, y)
    return {f"cnn {params['mode']}": peak_rss_mb(), "steps": params["steps"]}


def rows(results, machine):
    row = Row("peak RSS after import", "MiB", *results["import"], kind="cost", target=f"ratio <= {IMPORT_TARGET}")
    row.met = check(row.ratio, lambda r: r <= IMPORT_TARGET)
    out = [row]
    f32, amp = results["cnn float32"], results["cnn autocast"]
    steps = int(results["steps"][0] or STEPS)
    out.append(Row(f"peak RSS over {steps} CNN steps, float32", "MiB", *f32, kind="cost"))
    amp_over_f32 = amp[0] / f32[0] if amp[0] and f32[0] else None
    out.append(Row(f"peak RSS over {steps} CNN steps, autocast", "MiB", *amp, kind="cost",
                   target="below float32's", met=check(amp_over_f32, lambda r: r < 1)))
    return out
