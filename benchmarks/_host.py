"""Facts about the machine a benchmark runs on, shared by the benchmark modules."""

from __future__ import annotations

import platform


def host_cpu() -> str:
    """The host CPU's model name (``platform.processor()`` is often empty on Linux): ratios
    move with it (the same cipher ran bits of 2**20 1.77x faster than jax.random on a 2-core
    AMD EPYC, 1.20x on a 2-core Intel Xeon)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
