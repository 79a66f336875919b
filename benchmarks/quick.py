"""Quick A/B of jaxpmac against jax.random: compile time and interleaved run time, one process.

    python -m benchmarks.quick                      # every workload
    python -m benchmarks.quick model20,scan,bits20  # a few
    python -m benchmarks.quick --isa all bits22,vmap        # once per XLA CPU ISA level
    python -m benchmarks.quick --isa AVX2 AVX512 site1      # the levels named

Fifteen repeats of each pair of compiled programs, alternated, medians; the ratio is
jax.random's time over jaxpmac's (above 1: jaxpmac is faster). A minutes-long check for
lowering changes; ``benchmarks.run`` is the full, recorded benchmark.

With ``--isa`` each level runs in a process of its own, under ``XLA_FLAGS`` extended by
``--xla_cpu_max_isa=LEVEL`` (XLA reads it once, when its CPU backend starts; other flags are
kept), and a table of the ratios per level follows: run time (jax.random / jaxpmac) and
compile time (jaxpmac / jax.random, trace + lower + XLA compile, as ``benchmarks.run``'s).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxpmac as jp
from benchmarks._host import (ISA_LEVELS, host_cpu, isa_levels_asked, process_isa,
                              run_under_isa)

REPEATS = 15
# Workloads whose compile time is the point: compiled this many more times, each from a fresh
# jit of the same function, alternating the two, for a median (one compile of a small program
# moves by tens of percent).
COMPILE_REPEATS = {"site1": 7}
VSCALAR_EXAMPLES = 65536
DROPOUT_KEEP = 0.9


def _model(bits, key, fold, sites=20, shape=(64, 64)):
    """20 draw sites of 64x64, each its own label, summed (a model-sized program)."""
    def draw(seed):
        k, total = key(seed), jnp.zeros(shape, jnp.float32)
        for j in range(sites):
            x = bits(fold(k, j), shape)
            total = total + (x >> np.uint32(8)).astype(jnp.float32) * np.float32(j + 1)
        return total
    return draw


def _scan(bits, key, fold):
    def draw(seed):
        k = key(seed)
        return lax.scan(lambda c, i: (c, bits(fold(k, i), (256,))), None,
                        jnp.arange(4096, dtype=jnp.uint32))[1]
    return draw


def _vmap(bits, key, fold):
    def draw(seed):
        k = key(seed)
        return jax.vmap(lambda i: bits(fold(k, i), (1024,)))(jnp.arange(4096, dtype=jnp.uint32))
    return draw


def _vscalar(normal, key, fold):
    """Per-example scalar noise: one normal for each of 65536 example indices."""
    def draw(seed):
        k = key(seed)
        return jax.vmap(lambda i: normal(fold(k, i), ()))(
            jnp.arange(VSCALAR_EXAMPLES, dtype=jnp.uint32))
    return draw


def _dropout(bernoulli, key):
    """Inverted dropout as flax writes it: keep with probability 0.9, scale the kept."""
    def apply(seed, x):
        keep = bernoulli(key(seed), DROPOUT_KEEP, x.shape)
        return jnp.where(keep, x * np.float32(1 / DROPOUT_KEEP), np.float32(0))
    return apply


JAXPMAC = dict(bits=jp.bits, key=jp.key, fold=lambda k, j: k.split(j))
JAX = dict(bits=lambda k, shape: jax.random.bits(k, shape, jnp.uint32), key=jax.random.key,
           fold=jax.random.fold_in)
WORKLOADS = {
    "model20": (_model(**dict(JAXPMAC, fold=lambda k, j: k.split_static(j))), _model(**JAX)),
    "scan": (_scan(**JAXPMAC), _scan(**JAX)),
    "vmap": (_vmap(**JAXPMAC), _vmap(**JAX)),
    "vscalar": (_vscalar(jp.normal, JAXPMAC["key"], JAXPMAC["fold"]),
                _vscalar(jax.random.normal, JAX["key"], JAX["fold"])),
    # One draw site: the smallest program a model compiles a draw into.
    "site1": (lambda s: jp.uniform(jp.key(s), (64, 64)),
              lambda s: jax.random.uniform(jax.random.key(s), (64, 64))),
}
# Arrays a workload takes after the seed, built when it runs (as arguments, so that XLA
# cannot fold them into the program).
INPUTS = {}
for _log2 in (16, 20, 22):
    _n = 1 << _log2
    for _name, _ours, _theirs in (("bits", jp.bits, JAX["bits"]),
                                  ("unif", jp.uniform, jax.random.uniform),
                                  ("norm", jp.normal, jax.random.normal)):
        WORKLOADS[f"{_name}{_log2}"] = (
            (lambda f, n: lambda s: f(jp.key(s), (n,)))(_ours, _n),
            (lambda f, n: lambda s: f(jax.random.key(s), (n,)))(_theirs, _n))
    WORKLOADS[f"drop{_log2}"] = (_dropout(jp.bernoulli, jp.key),
                                 _dropout(jax.random.bernoulli, jax.random.key))
    _side = 1 << (_log2 // 2)
    INPUTS[f"drop{_log2}"] = (lambda side: lambda: (jnp.ones((side, side), jnp.float32),))(_side)


def _jit_time(fn, args) -> tuple[object, float, float]:
    """Compiles a fresh jit of ``fn``; returns it, trace + lower seconds, XLA compile seconds."""
    start = time.perf_counter()
    # A new function object each time, so that jit's caches of ``fn`` are not reused.
    lowered = jax.jit(lambda *a: fn(*a)).lower(*args)
    mid = time.perf_counter()
    compiled = lowered.compile()
    return compiled, mid - start, time.perf_counter() - mid


def measure(name: str) -> dict:
    """Compiles and times one workload's pair of programs.

    Returns:
        A dict: ``ms`` (median run times, jaxpmac then jax.random), ``lower_s`` and
        ``compile_s`` (the first compile's trace + lower and XLA compile seconds), ``ratio``
        (jax.random time / jaxpmac time), ``compile_ratio`` (jaxpmac's trace + lower + compile
        / jax.random's), and for workloads in ``COMPILE_REPEATS`` ``recompile_s`` (medians of
        the fresh compiles) and ``recompile_ratio``.
    """
    fns = WORKLOADS[name]
    inputs = INPUTS.get(name, lambda: ())()
    compiled, lower_s, compile_s = [], [], []
    for fn in fns:
        c, lowering, compiling = _jit_time(fn, (jnp.uint32(7), *inputs))
        compiled.append(c)
        lower_s.append(lowering)
        compile_s.append(compiling)
        jax.block_until_ready(c(jnp.uint32(1), *inputs))
    times = [[], []]
    for r in range(REPEATS):
        for i, c in enumerate(compiled):
            start = time.perf_counter()
            jax.block_until_ready(c(jnp.uint32(r), *inputs))
            times[i].append(time.perf_counter() - start)
    ours, theirs = np.median(times[0]), np.median(times[1])
    total = [lower_s[i] + compile_s[i] for i in range(2)]
    out = dict(name=name, ms=[ours * 1e3, theirs * 1e3], lower_s=lower_s, compile_s=compile_s,
               ratio=theirs / ours, compile_ratio=total[0] / total[1])
    if name in COMPILE_REPEATS:
        again = [[], []]
        for _ in range(COMPILE_REPEATS[name]):
            for i, fn in enumerate(fns):
                _, lowering, compiling = _jit_time(fn, (jnp.uint32(7), *inputs))
                again[i].append(lowering + compiling)
        out["recompile_s"] = [float(np.median(a)) for a in again]
        out["recompile_ratio"] = out["recompile_s"][0] / out["recompile_s"][1]
    return out


def line(m: dict) -> str:
    """One workload's line of the plain report."""
    text = (f"{m['name']:8s} jaxpmac {m['ms'][0]:7.2f} ms (compile {m['compile_s'][0]:.2f} s)  "
            f"jax.random {m['ms'][1]:7.2f} ms (compile {m['compile_s'][1]:.2f} s)  "
            f"ratio {m['ratio']:.2f}x")
    if "recompile_s" in m:
        text += (f"  trace+lower+compile, median of {COMPILE_REPEATS[m['name']]} fresh jits: "
                 f"{m['recompile_s'][0]:.3f} s / {m['recompile_s'][1]:.3f} s = "
                 f"{m['recompile_ratio']:.2f}x")
    return text


def compare(name: str) -> str:
    return line(measure(name))


def _warm_backend():
    # The process's first XLA compile also starts LLVM's JIT; keep that out of the first
    # workload's compile time.
    jax.block_until_ready(jax.jit(lambda x: x + 1)(jnp.uint32(0)))


def isa_table(runs: list[dict]) -> str:
    """Markdown tables of the children's results: ratios, then run times, per ISA level."""
    levels = [r["isa"] for r in runs]
    by_level = [{m["name"]: m for m in r["results"]} for r in runs]
    names = list(dict.fromkeys(m["name"] for r in runs for m in r["results"]))
    head = "| workload | " + " | ".join(levels) + " |"
    rule = "|---|" + "---:|" * len(levels)

    def cell(level, name, fmt):
        m = level.get(name)
        return "" if m is None else fmt(m)

    lines = ["Run time ratio (jax.random / jaxpmac; above 1: jaxpmac faster) / compile time ratio "
             "(jaxpmac / jax.random, trace + lower + XLA compile; below 1: jaxpmac compiles "
             "faster):", "", head, rule]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(
            cell(level, name, lambda m: f"{m['ratio']:.2f}x / {m['compile_ratio']:.2f}x")
            for level in by_level) + " |")
        if any("recompile_ratio" in level.get(name, {}) for level in by_level):
            lines.append(f"| {name} compile, median of {COMPILE_REPEATS[name]} fresh jits | "
                         + " | ".join(cell(level, name, lambda m: (
                             f"{m['recompile_s'][0]:.3f} / {m['recompile_s'][1]:.3f} s = "
                             f"{m['recompile_ratio']:.2f}x")) for level in by_level) + " |")
    lines += ["", "Median run time, ms (jaxpmac / jax.random):", "", head, rule]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(
            cell(level, name, lambda m: f"{m['ms'][0]:.2f} / {m['ms'][1]:.2f}")
            for level in by_level) + " |")
    return "\n".join(lines)


def _split_isa_tokens(isa: list[str], workloads):
    """``--isa all bits22,vmap``: argparse hands the workloads to ``--isa``; take them back."""
    names = {*ISA_LEVELS, "ALL"}
    levels = [t for t in isa if all(x.strip().upper() in names for x in t.split(",") if x)]
    rest = [t for t in isa if t not in levels]
    if rest and workloads is None:
        workloads = ",".join(rest)
    elif rest:
        raise SystemExit(f"--isa: not ISA levels: {' '.join(rest)}")
    return levels, workloads


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quick", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="?", help="comma-separated (default: every one): "
                        + ",".join(WORKLOADS))
    parser.add_argument("--isa", nargs="+", metavar="LEVEL",
                        help=f"run once per level ({', '.join(ISA_LEVELS)}, or all: every "
                             "level this CPU has), each in its own process, and tabulate")
    parser.add_argument("--json", type=pathlib.Path, help=argparse.SUPPRESS)  # for --isa
    args = parser.parse_args(argv)
    names = args.workloads
    if args.isa:
        levels, names = _split_isa_tokens(args.isa, names)
        try:
            levels = isa_levels_asked(levels)
        except ValueError as e:
            parser.error(str(e))
    names = names.split(",") if names else list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; known: {', '.join(WORKLOADS)}")

    if not args.isa:
        _warm_backend()
        results = []
        for name in names:
            results.append(measure(name))
            print(line(results[-1]), flush=True)
        if args.json:
            args.json.write_text(json.dumps(dict(
                isa=process_isa(), xla_flags=os.environ.get("XLA_FLAGS", ""),
                backend=jax.default_backend(), results=results)))
        return 0

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for level in levels:
            print(f"== --xla_cpu_max_isa={level}", flush=True)
            path = pathlib.Path(tmp) / f"{level}.json"
            status = run_under_isa("benchmarks.quick", [",".join(names), "--json", str(path)],
                                   level)
            if status != 0:
                print(f"{level}: the run failed (exit status {status})", file=sys.stderr)
                return status
            runs.append(json.loads(path.read_text()))
    print(f"\n{host_cpu()}, {os.cpu_count()} CPUs, jax {jax.__version__}, XLA_FLAGS of each "
          f"run: {os.environ.get('XLA_FLAGS', '')} --xla_cpu_max_isa=LEVEL\n")
    print(isa_table(runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
