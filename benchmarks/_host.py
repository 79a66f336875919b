"""Facts about the machine a benchmark runs on, shared by the benchmark modules."""

from __future__ import annotations

import platform
from typing import Optional


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


def available_memory_bytes() -> Optional[int]:
    """MemAvailable from /proc/meminfo; None where there is none."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
