"""The machine the figures come from: CPU model, logical CPUs, the flags that decide which
kernels run, the clock, and one core's peak GEMM throughput.

Peak per core = flops per cycle x clock:
- float32: two FMA pipes x 8 float32 lanes (256 bits) x 2 flops (a multiply and an add) = 32
  flops/cycle. That holds for AVX2 cores and for Zen 4, which runs 512-bit AVX-512 as two
  256-bit halves; Intel cores with AVX-512 have two 512-bit FMA pipes: 64 flops/cycle.
- bfloat16 with AVX512-BF16: one 512-bit vdpbf16ps per cycle (Zen 4) = 32 bf16 pairs x 2 flops
  = 64 flops/cycle. Without AVX512-BF16 bfloat16 is emulated through float32 and no bfloat16
  peak is given. AMX tiles are not modelled (a percent above 100 would show them).
The clock is cpuinfo_max_freq where the kernel exposes it, else the current "cpu MHz" of
/proc/cpuinfo (a core that boosts above it can show more than 100% of peak).
"""

import os
from dataclasses import dataclass

RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


def _cpuinfo():
    """The first processor's fields of /proc/cpuinfo."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    return fields


def _clock_ghz(cpuinfo):
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            return int(f.read()) / 1e6, "cpuinfo_max_freq"
    except OSError:
        return float(cpuinfo.get("cpu MHz", "nan")) / 1e3, "cpu MHz in /proc/cpuinfo"


@dataclass
class Machine:
    model: str
    vendor: str
    cpus: int
    flags: frozenset
    ghz: float
    clock_source: str

    @classmethod
    def detect(cls):
        info = _cpuinfo()
        ghz, source = _clock_ghz(info)
        return cls(info.get("model name", "unknown CPU"), info.get("vendor_id", ""), os.cpu_count(),
                   frozenset(info.get("flags", "").split()), ghz, source)

    def flops_per_cycle(self, dtype):
        if dtype == "float32":
            return 64 if self.vendor == "GenuineIntel" and "avx512f" in self.flags else 32
        return 64 if "avx512_bf16" in self.flags else None

    def peak_gflops(self, dtype):
        """One core's peak GFLOP/s in dtype, or None where the CPU has no native instructions."""
        per_cycle = self.flops_per_cycle(dtype)
        return per_cycle * self.ghz if per_cycle else None

    def describe(self):
        """Lines naming the CPU and the peaks, for the printed header and BENCHMARKS.md."""
        flags = ", ".join(f"{flag} {'yes' if flag in self.flags else 'no'}" for flag in RELEVANT_FLAGS)
        peaks = []
        for dtype in ("float32", "bfloat16"):
            per_cycle = self.flops_per_cycle(dtype)
            peaks.append(f"{dtype} {per_cycle} flops/cycle x {self.ghz:.2f} GHz = {self.peak_gflops(dtype):.1f} "
                         "GFLOP/s" if per_cycle else f"{dtype} n/a (emulated: no avx512_bf16)")
        return [f"CPU: {self.model}, {self.cpus} logical CPUs; {flags}",
                f"Clock {self.ghz:.2f} GHz ({self.clock_source}); one core's GEMM peak: " + "; ".join(peaks),
                "(float32: 2 FMA pipes x 8 lanes x 2 flops, 64 on Intel AVX-512; bfloat16: one 512-bit "
                "vdpbf16ps per cycle = 64 flops, Zen 4)"]
