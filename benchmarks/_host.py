"""Facts about the machine a benchmark runs on, shared by the benchmark modules."""

from __future__ import annotations

import os
import pathlib
import platform
import re
import subprocess
import sys
from typing import Mapping, Optional, Sequence


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


# --------------------------------------------------------------------------------------------
# Instruction-set levels of XLA's CPU backend (``--xla_cpu_max_isa``)
# --------------------------------------------------------------------------------------------

# The levels XLA's ``--xla_cpu_max_isa`` takes that a benchmark steps through, lowest first,
# each with the /proc/cpuinfo flags it needs: XLA caps the host's features at the level, so a
# level the host lacks would silently run as a lower one. AVX2 needs fma too: XLA turns fma
# off below its AVX2 level and on from it. Each level also sets LLVM's target CPU to the
# first generation that had it (nehalem, sandybridge, haswell, skylake-avx512), and the
# AVX512 level leaves out avx512vnni and avx512bf16: "host default" may differ from AVX512.
ISA_LEVELS = {
    "SSE4_2": ("sse4_2",),
    "AVX": ("avx",),
    "AVX2": ("avx2", "fma"),
    "AVX512": ("avx512f", "avx512bw", "avx512dq", "avx512vl"),
}
MAX_ISA_FLAG = "--xla_cpu_max_isa"
HOST_DEFAULT = "host default"


def _cpu_flags(cpuinfo: Optional[str] = None) -> set[str]:
    """The ``flags`` of the first processor in ``cpuinfo`` (default: /proc/cpuinfo's)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def host_isa_levels(cpuinfo: Optional[str] = None) -> list[str]:
    """The levels of ``ISA_LEVELS`` this host's CPU has, lowest first.

    Args:
        cpuinfo: text in /proc/cpuinfo's format; by default the host's own.

    Returns:
        A sublist of ``["SSE4_2", "AVX", "AVX2", "AVX512"]``; empty where there is no
        /proc/cpuinfo or the CPU is not an x86 one.
    """
    flags = _cpu_flags(cpuinfo)
    return [level for level, needs in ISA_LEVELS.items() if flags.issuperset(needs)]


def _max_isa_of(xla_flags: str) -> Optional[str]:
    # XLA's flag parser lets the last setting of a flag win.
    matches = re.findall(rf"{MAX_ISA_FLAG}=(\S+)", xla_flags)
    return matches[-1].upper() if matches else None


def process_isa(environ: Optional[Mapping[str, str]] = None) -> str:
    """The ISA level this process's XLA CPU backend is capped at, as its XLA_FLAGS name it.

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        The level (``"AVX2"``...), or ``"host default"`` where XLA_FLAGS sets none.
    """
    environ = os.environ if environ is None else environ
    return _max_isa_of(environ.get("XLA_FLAGS", "")) or HOST_DEFAULT


def xla_flags_with_isa(xla_flags: str, level: str) -> str:
    """``xla_flags`` with its max-ISA setting, if any, replaced by ``level``; others kept."""
    kept = [flag for flag in xla_flags.split() if not flag.startswith(MAX_ISA_FLAG)]
    return " ".join([*kept, f"{MAX_ISA_FLAG}={level}"])


def isa_levels_asked(asked: Sequence[str]) -> list[str]:
    """The levels an ``--isa`` option names, checked against the host, lowest first.

    Args:
        asked: level names (any case, comma-separated lists allowed), or ``all`` for every
            level the host has.

    Returns:
        The levels, in ``ISA_LEVELS`` order, without repeats.

    Raises:
        ValueError: a name is not a level, or the host's CPU lacks the level (XLA would run
            it as a lower one and the table would mislabel it).
    """
    names = [n.strip().upper() for item in asked for n in item.split(",") if n.strip()]
    host = host_isa_levels()
    if "ALL" in names:
        if not host:
            raise ValueError("--isa all: this host has none of the levels "
                             f"{', '.join(ISA_LEVELS)} (no x86 /proc/cpuinfo flags)")
        return host
    for name in names:
        if name not in ISA_LEVELS:
            raise ValueError(f"--isa {name}: not one of {', '.join(ISA_LEVELS)} or all")
        if name not in host:
            raise ValueError(f"--isa {name}: this host's CPU lacks "
                             f"{' '.join(ISA_LEVELS[name])}")
    return [level for level in ISA_LEVELS if level in names]


def run_under_isa(module: str, argv: Sequence[str], level: str) -> int:
    """Runs ``python -m module *argv`` with XLA's CPU backend capped at ``level``.

    XLA reads XLA_FLAGS once, when jax starts its CPU backend, so each level needs a process
    of its own. The child runs on the CPU backend (the flag is the CPU backend's) with the
    caller's other XLA_FLAGS kept, in the caller's working directory (relative paths in
    ``argv`` mean the same), finding this package through PYTHONPATH; its output goes to this
    process's stdout and stderr.

    Returns:
        The child's exit status.
    """
    root = str(pathlib.Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, XLA_FLAGS=xla_flags_with_isa(os.environ.get("XLA_FLAGS", ""), level),
               JAX_PLATFORMS="cpu", PYTHONPATH=root if not path else os.pathsep.join([root, path]))
    return subprocess.run([sys.executable, "-m", module, *argv], env=env,
                          check=False).returncode
