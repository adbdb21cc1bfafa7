"""The machine the figures come from: CPU model, logical CPUs, the flags that decide which
kernels run, the clock, and one core's peak GEMM throughput.

The peak is measured: benchmarks/peak_flops.cpp (built with the tests, as build/dev/peak_flops)
issues independent FMAs and vdpbf16ps back to back on one core. A computed peak, flops per
cycle x clock, needs the clock the core really runs at, and a core that boosts runs above the
nominal one that /proc/cpuinfo gives (on this Zen 4 machine under KVM: 2.6 GHz nominal, about
3.7 measured, so GEMMs showed up to 134% of the computed peak). The computed peak is still
printed beside it, and used where the program has not been built:
- float32: two FMA pipes x 8 float32 lanes (256 bits) x 2 flops (a multiply and an add) = 32
  flops/cycle. That holds for AVX2 cores and for Zen 4, which runs 512-bit AVX-512 as two
  256-bit halves; Intel cores with AVX-512 have two 512-bit FMA pipes: 64 flops/cycle.
- bfloat16 with AVX512-BF16: one 512-bit vdpbf16ps per cycle (Zen 4) = 32 bf16 pairs x 2 flops
  = 64 flops/cycle. With AMX (Intel since Sapphire Rapids) the peak is the tile unit's: one
  tdpbf16ps, a 16x32 by 32x16 product (16,384 flops), every 16 cycles = 1024 flops/cycle, 16x
  the vector units'; the program measures both and reports the larger. Without AVX512-BF16
  bfloat16 is emulated through float32 and no bfloat16 peak is given.
The measured peak is the best of several runs: the host's other load can only slow the loop
down, and one slowed run (187 GFLOP/s bfloat16 against 230-235) once put the MLP step at 78% of
its GEMM-bound limit when it was at 62%.
"""

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PEAK_PROGRAM = Path(__file__).resolve().parent.parent / "build" / "dev" / "peak_flops"

RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


def cpuinfo():
    """The first processor's fields of /proc/cpuinfo."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    return fields


def measured_peaks(runs=1):
    """{dtype: GFLOP/s or None} from the peak_flops program, the best of `runs` runs (the host's
    other load can only slow a loop of independent FMAs down), or {} where it is not built."""
    if not PEAK_PROGRAM.exists():
        return {}
    runs = [json.loads(subprocess.run([str(PEAK_PROGRAM)], capture_output=True, text=True, check=True).stdout)
            for _ in range(runs)]
    return {dtype: max((r[dtype] for r in runs if r.get(dtype) is not None), default=None) for dtype in runs[0]}


def _clock_ghz(info):
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            return int(f.read()) / 1e6, "cpuinfo_max_freq"
    except OSError:
        return float(info.get("cpu MHz", "nan")) / 1e3, "cpu MHz in /proc/cpuinfo"


@dataclass
class Machine:
    model: str
    vendor: str
    cpus: int
    flags: frozenset
    ghz: float
    clock_source: str
    measured: dict = field(default_factory=dict)  # {dtype: GFLOP/s}; empty when not measured

    @classmethod
    def detect(cls):
        info = cpuinfo()
        ghz, source = _clock_ghz(info)
        return cls(info.get("model name", "unknown CPU"), info.get("vendor_id", ""), os.cpu_count(),
                   frozenset(info.get("flags", "").split()), ghz, source, measured_peaks(runs=5))

    def flops_per_cycle(self, dtype):
        if dtype == "float32":
            return 64 if self.vendor == "GenuineIntel" and "avx512f" in self.flags else 32
        if "amx_bf16" in self.flags:
            return 1024
        return 64 if "avx512_bf16" in self.flags else None

    def computed_peak_gflops(self, dtype):
        per_cycle = self.flops_per_cycle(dtype)
        return per_cycle * self.ghz if per_cycle else None

    def peak_gflops(self, dtype):
        """One core's peak GFLOP/s in dtype (measured where it could be), or None where the CPU
        has no native instructions for it."""
        if self.measured:
            return self.measured.get(dtype)
        return self.computed_peak_gflops(dtype)

    def describe(self):
        """Lines naming the CPU and the peaks, for the printed header and BENCHMARKS.md."""
        flags = ", ".join(f"{flag} {'yes' if flag in self.flags else 'no'}" for flag in RELEVANT_FLAGS)
        peaks = []
        for dtype in ("float32", "bfloat16"):
            per_cycle = self.flops_per_cycle(dtype)
            if not per_cycle:
                peaks.append(f"{dtype} n/a (emulated: no avx512_bf16)")
                continue
            computed = f"{per_cycle} flops/cycle x {self.ghz:.2f} GHz = {self.computed_peak_gflops(dtype):.1f}"
            peaks.append(f"{dtype} {self.measured[dtype]:.1f} GFLOP/s measured (computed: {computed})"
                         if self.measured.get(dtype) else f"{dtype} {computed} GFLOP/s")
        return [f"CPU: {self.model}, {self.cpus} logical CPUs; {flags}",
                f"Clock {self.ghz:.2f} GHz ({self.clock_source}); one core's GEMM peak, the percents' base "
                "(benchmarks/peak_flops.cpp, run again in each GEMM child): " + "; ".join(peaks),
                "(float32: 2 FMA pipes x 8 lanes x 2 flops, 64 on Intel AVX-512; bfloat16: one 512-bit "
                "vdpbf16ps per cycle = 64 flops, Zen 4; with AMX one 16x16x32 tile product per 16 cycles "
                "= 1024 flops)"]
