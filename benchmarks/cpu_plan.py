"""jaxpmac's CPU programs under other values of the CPU plan's constants, or forced layouts.

    python -m benchmarks.cpu_plan --set CPU_CHUNK_BLOCKS=1024,4096,16384 bits20 bits22
    python -m benchmarks.cpu_plan --layout map_placement=after,in_loop norm16 norm20
    python -m benchmarks.cpu_plan --set TILE_BLOCKS=1024,4096,8192,16384 vmap

The commands that support each constant of ``jaxpmac/_lowering/_cpu_plan.py`` are written next
to it. Each setting (one value of one of those constants, or one forced layout:
``force_cpu_layout``) compiles jaxpmac's program of each named workload of
``benchmarks.quick`` anew; the programs are then timed interleaved, setting after setting,
``--repeats`` times, so that their ratios hold on a busy machine. Printed per workload and
setting: the median run time, the compile time (trace + lower + XLA compile) and the peak
memory over the output's (``memory_analysis``). The values drawn are the same in every setting.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.quick import INPUTS, WORKLOADS
from jaxpmac._lowering import _cpu_plan

REPEATS = 15


@contextlib.contextmanager
def _constant(name: str, value: int):
    """``_cpu_plan.<name>`` set to ``value`` while a program is traced (the plan reads its
    constants when it is made)."""
    kept = getattr(_cpu_plan, name)
    setattr(_cpu_plan, name, value)
    try:
        yield
    finally:
        setattr(_cpu_plan, name, kept)


def settings(constant: str | None, layout: str | None) -> dict:
    """``{label: context factory}`` of ``--set NAME=V1,V2`` or ``--layout KEY=V1,V2``."""
    if (constant is None) == (layout is None):
        raise ValueError("give one of --set or --layout")
    name, _, values = (constant or layout).partition("=")
    if constant is not None:
        if not (name.isupper() and isinstance(getattr(_cpu_plan, name, None), int)):
            raise ValueError(f"--set names an int constant of _cpu_plan, not {name!r}")
        return {f"{name}={v}": (lambda v=int(v): _constant(name, v)) for v in values.split(",")}
    if name not in ("buffer", "map_placement"):
        raise ValueError(f"--layout sets buffer or map_placement, not {name!r}")
    return {f"{name}={v}": (lambda v=v: _cpu_plan.force_cpu_layout(**{name: v}))
            for v in values.split(",")}


def measure(workload: str, variants: dict, repeats: int = REPEATS) -> dict:
    """``{label: (median ms, compile s, peak / output)}`` of jaxpmac's program of
    ``workload`` under each of ``variants``."""
    fn = WORKLOADS[workload][0]
    args = (jnp.uint32(7), *INPUTS.get(workload, lambda: ())())
    compiled, compile_s, peak = {}, {}, {}
    for label, context in variants.items():
        start = time.perf_counter()
        with context():
            # jaxpmac's jitted helpers cache their traces, keyed by their arguments, not by
            # these constants: clear them, so that each setting is traced anew.
            jax.clear_caches()
            compiled[label] = jax.jit(lambda *a: fn(*a)).lower(*args).compile()
        compile_s[label] = time.perf_counter() - start
        mem = compiled[label].memory_analysis()
        peak[label] = ((mem.temp_size_in_bytes + mem.output_size_in_bytes
                        + mem.argument_size_in_bytes) / mem.output_size_in_bytes)
        jax.block_until_ready(compiled[label](*args))
    times = {label: [] for label in variants}
    for _ in range(repeats):
        for label, program in compiled.items():
            start = time.perf_counter()
            jax.block_until_ready(program(*args))
            times[label].append(time.perf_counter() - start)
    return {label: (float(np.median(times[label])) * 1e3, compile_s[label], peak[label])
            for label in variants}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cpu_plan", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="+", choices=sorted(WORKLOADS),
                        metavar="WORKLOAD", help="benchmarks.quick workloads")
    parser.add_argument("--set", dest="constant", metavar="NAME=V1,V2",
                        help="values of a constant of jaxpmac/_lowering/_cpu_plan.py")
    parser.add_argument("--layout", metavar="KEY=V1,V2",
                        help="buffer=flat,rows or map_placement=after,in_loop")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args(argv)
    try:
        variants = settings(args.constant, args.layout)
    except ValueError as e:
        parser.error(str(e))
    for workload in args.workloads:
        for label, (ms, compile_s, peak) in measure(workload, variants, args.repeats).items():
            print(f"{workload:8s} {label:36s} {ms:8.2f} ms  compile {compile_s:5.2f} s  "
                  f"peak {peak:.2f}x output", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
