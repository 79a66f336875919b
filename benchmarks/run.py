"""Speed of jaxpmac against jax.random, numpy and the memory-write floor, on the default backend.

Usage::

    python -m benchmarks.run                      # full run, sizes picked from free memory
    python -m benchmarks.run --smoke              # < 60 s, tiny sizes (used by the tests)
    python -m benchmarks.run --sizes 2**16 2**20 --repeats 7 --out benchmarks/results
    python -m benchmarks.run --isa all            # once per XLA CPU instruction-set level

Writes ``<out>/<backend>/results.json``, ``results.md`` and ``results.png`` (backend = ``cpu``,
``gpu``/``cuda``, ``tpu``...; ``cpu-AVX2`` etc. where XLA_FLAGS caps the CPU backend's
instruction set with ``--xla_cpu_max_isa``). With ``--isa``, each level runs in a process of
its own under XLA_FLAGS extended by ``--xla_cpu_max_isa=LEVEL`` (XLA reads the flag once, when
its CPU backend starts), writing ``<out>/cpu-LEVEL/``, and ``<out>/cpu-isa/results.md`` tables
the pair path's ratios at every level. Every contender of one workload and size is timed in the same
process, interleaved repeat by repeat, so that ratios stay meaningful on a busy machine; the
reported time is the median after a warm-up call. Ratios are ``time(jax.random default) /
time(contender)``: above 1 is faster than ``jax.random``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import math
import os
import pathlib
import platform
import statistics
import sys
import time
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxpmac as jp
from benchmarks._host import (HOST_DEFAULT, ISA_LEVELS, available_memory_bytes, host_cpu,
                              isa_levels_asked, process_isa, run_under_isa)
from jaxpmac._samplers import _bits

DEFAULT_SIZES = tuple(2 ** k for k in range(16, 27, 2))
SMOKE_SIZES = (2 ** 12,)
# Smoke mode times only these (every jaxpmac program compiles for seconds on a small CPU).
SMOKE_CONTENDERS = ("jaxpmac pair",
                    f"jax threefry partitionable={jax.config.jax_threefry_partitionable}",
                    "xla iota floor", "numpy PCG64 (CPU)")
SCAN_STEPS, SCAN_DRAW = 4096, 256
VMAP_EXAMPLES, VMAP_DRAW = 4096, 1024
NESTING_DEPTHS = tuple(range(1, 13))
NESTING_EXAMPLES, NESTING_DRAW = 4096, 8
COMPILE_SITES, COMPILE_SHAPE = 200, (64, 64)
# Draws of n elements, and the bytes of one value. uniform_bf16: bfloat16 uniforms, the
# half-precision case (XLA's CPU backend computes bfloat16 in float32; a loop that wrote
# bfloat16 ran 15x slower until 2026-11-24), against jax.random's bfloat16 uniform. The floor
# and numpy rows only where values are 4 bytes, as the floor's.
BULK_WORKLOADS = {"bits": 4, "uniform": 4, "normal": 4, "uniform_bf16": 2}
# Bytes of device memory one output element may need at most, across the contenders'
# temporaries (the cipher state, key arrays, the output itself): sizes above
# free memory / this are skipped.
BYTES_PER_ELEMENT_BUDGET = 64

RESULT_KEYS = ("workload", "param", "size", "contender", "median_s", "samples_per_s",
               "gb_per_s", "ratio_vs_jax_default", "compile_s", "peak_bytes", "peak_source")


# --------------------------------------------------------------------------------------------
# Contenders: one adapter per generator family, all with the same small API.
# --------------------------------------------------------------------------------------------

class JaxpmacAPI:
    """jaxpmac: the seed is the nonce, labels/indices are static/dynamic words."""

    def __init__(self, native: bool):
        self.native = native

    def key(self, seed):
        return jp.key(seed)

    def bits(self, k, n):
        return _bits.stream(k, n, jnp.uint32, native=self.native)

    def uniform(self, k, n):
        return jp.uniform(k, (n,), jnp.float32)

    def normal(self, k, n):
        return jp.normal(k, (n,), jnp.float32)

    def uniform_bf16(self, k, n):
        return jp.uniform(k, (n,), jnp.bfloat16)

    def label(self, k, j):
        return k.split_static(j)

    def index(self, k, i):
        return k.split(i)

    def nest(self, k, words):
        return k.split(*words)


class JaxRandomAPI:
    """jax.random with a given PRNG implementation; labels and indices use ``fold_in``."""

    def __init__(self, impl: str):
        self.impl = impl

    def key(self, seed):
        return jax.random.key(seed, impl=self.impl)

    def bits(self, k, n):
        return jax.random.bits(k, (n,), jnp.uint32)

    def uniform(self, k, n):
        return jax.random.uniform(k, (n,), jnp.float32)

    def normal(self, k, n):
        return jax.random.normal(k, (n,), jnp.float32)

    def uniform_bf16(self, k, n):
        return jax.random.uniform(k, (n,), jnp.bfloat16)

    def label(self, k, j):
        return jax.random.fold_in(k, j)

    def index(self, k, i):
        return jax.random.fold_in(k, i)

    def nest(self, k, words):
        for word in words:
            k = jax.random.fold_in(k, word)
        return k


class ChachaAPI(JaxRandomAPI):
    """The jax-chacha-prng package (module ``chacha.random``), when it imports."""

    def __init__(self, module):
        self.m = module

    def key(self, seed):
        return self.m.PRNGKey(seed)

    def bits(self, k, n):
        return self.m.random_bits(k, 32, (n,))

    def uniform(self, k, n):
        return self.m.uniform(k, (n,), jnp.float32)

    def normal(self, k, n):
        raise NotImplementedError("jax-chacha-prng has no normal sampler")

    def uniform_bf16(self, k, n):
        return self.m.uniform(k, (n,), jnp.bfloat16)

    def label(self, k, j):
        return self.m.fold_in(k, j)

    index = label

    def nest(self, k, words):
        for word in words:
            k = self.m.fold_in(k, word)
        return k


@dataclasses.dataclass
class Contender:
    name: str
    api: object = None              # None: not a JAX generator (numpy, the iota floor)
    context: Callable = contextlib.nullcontext
    is_default: bool = False


def _threefry(partitionable: bool):
    return lambda: jax.threefry_partitionable(partitionable)


def jax_contenders(notes: list[str]) -> list[Contender]:
    default_partitionable = bool(jax.config.jax_threefry_partitionable)
    out = [
        Contender("jaxpmac pair", JaxpmacAPI(native=False), lambda: jax.enable_x64(False)),
        Contender("jaxpmac native u64", JaxpmacAPI(native=True), lambda: jax.enable_x64(True)),
    ]
    for partitionable in (default_partitionable, not default_partitionable):
        out.append(Contender(f"jax threefry partitionable={partitionable}",
                             JaxRandomAPI("threefry2x32"), _threefry(partitionable),
                             is_default=partitionable == default_partitionable))
    out.append(Contender("jax rbg", JaxRandomAPI("rbg")))
    out.append(Contender("jax unsafe_rbg", JaxRandomAPI("unsafe_rbg")))
    try:
        import chacha.random as chacha_random  # the jax-chacha-prng package
        out.append(Contender("jax-chacha-prng", ChachaAPI(chacha_random)))
    except Exception as e:  # noqa: BLE001 -- any import failure means "not available"
        notes.append(f"jax-chacha-prng skipped: not importable with jax {jax.__version__} "
                     f"({type(e).__name__}: {str(e)[:120]})")
    return out


# --------------------------------------------------------------------------------------------
# Workloads: each builds, for one contender, a function of a traced uint32 seed.
# --------------------------------------------------------------------------------------------

def _samplers_available(notes: list[str]) -> dict[str, bool]:
    have = {name: callable(getattr(jp, name, None)) for name in ("uniform", "normal")}
    for name, ok in have.items():
        if not ok:
            notes.append(f"jaxpmac {name} workload skipped: jaxpmac.{name} does not exist yet")
    return have


def bulk_program(kind: str, api, n: int):
    def draw(seed):
        return getattr(api, kind)(api.key(seed), n)
    return draw


def scan_program(api, steps: int, per_step: int):
    def draw(seed):
        k = api.key(seed)

        def step(carry, i):
            return carry, api.bits(api.index(k, i), per_step)
        return lax.scan(step, None, jnp.arange(steps, dtype=jnp.uint32))[1]
    return draw


def vmap_program(api, examples: int, per_example: int):
    def draw(seed):
        k = api.key(seed)
        return jax.vmap(lambda i: api.bits(api.index(k, i), per_example))(
            jnp.arange(examples, dtype=jnp.uint32))
    return draw


def nesting_program(api, depth: int, examples: int, per_example: int):
    def draw(seed):
        k = api.key(seed)

        def one(i):
            words = [i + np.uint32(j) for j in range(depth)]
            return api.bits(api.nest(k, words), per_example)
        return jax.vmap(one)(jnp.arange(examples, dtype=jnp.uint32))
    return draw


def model_program(api, sites: int, shape):
    """A model-sized program: ``sites`` draw sites, each its own label, feeding a sum."""
    n = math.prod(shape)

    def draw(seed):
        k = api.key(seed)
        total = jnp.zeros(shape, jnp.float32)
        for j in range(sites):
            x = api.bits(api.label(k, j), n).reshape(shape)
            total = total + (x >> np.uint32(8)).astype(jnp.float32) * np.float32(j + 1)
        return total
    return draw


def iota_program(n: int):
    def floor(seed):
        return lax.iota(jnp.uint32, n) + seed  # the seed keeps XLA from folding it
    return floor


def numpy_program(kind: str, bitgen: str, n: int):
    gen = np.random.Generator(getattr(np.random, bitgen)(12345))
    if kind == "bits":
        return lambda: gen.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    if kind == "uniform":
        return lambda: gen.random(n, dtype=np.float32)
    return lambda: gen.standard_normal(n, dtype=np.float32)


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Program:
    contender: str
    call: Callable[[], object]
    compile_s: Optional[float] = None
    peak_bytes: Optional[int] = None
    peak_source: Optional[str] = None
    is_default: bool = False


def _device_peak() -> Optional[int]:
    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # noqa: BLE001 -- backends without memory stats
        return None
    return None if not stats else stats.get("peak_bytes_in_use")


def compile_jax(contender: Contender, fn) -> Program:
    seed = jnp.uint32(20240611)
    with contender.context():
        start = time.perf_counter()
        compiled = jax.jit(fn).lower(seed).compile()
        compile_s = time.perf_counter() - start
    peak, source = None, None
    try:
        mem = compiled.memory_analysis()
        peak = int(mem.temp_size_in_bytes + mem.output_size_in_bytes
                   + mem.argument_size_in_bytes)
        source = "memory_analysis"
    except Exception:  # noqa: BLE001 -- not every backend reports it
        pass

    def call():
        with contender.context():
            return compiled(seed)
    return Program(contender.name, call, compile_s, peak, source, contender.is_default)


def _block(x):
    if isinstance(x, np.ndarray):
        return x
    return jax.block_until_ready(x)


def time_programs(programs: list[Program], repeats: int) -> dict[str, list[float]]:
    """Warm up each program, then time them interleaved, ``repeats`` rounds.

    Each timed call follows an untimed call of the same program: on a GPU (H100, 2026-11-26)
    the first device call after the host-only numpy contenders cost ~0.35 ms more, which made
    whichever contender came next look up to 2.4x slower than the same program elsewhere.
    """
    for p in programs:
        _block(p.call())
    device_peak = _device_peak()
    times = {p.contender: [] for p in programs}
    for _ in range(repeats):
        for p in programs:
            _block(p.call())
            start = time.perf_counter()
            _block(p.call())
            times[p.contender].append(time.perf_counter() - start)
    if device_peak is not None:
        for p in programs:
            if p.peak_bytes is None:
                p.peak_bytes, p.peak_source = device_peak, "device peak (process-wide)"
    return times


def records_of(workload, param, size, bytes_per_sample, programs, times):
    medians = {p.contender: statistics.median(times[p.contender]) for p in programs}
    default = next((medians[p.contender] for p in programs if p.is_default), None)
    out = []
    for p in programs:
        m = medians[p.contender]
        out.append(dict(
            workload=workload, param=param, size=size, contender=p.contender, median_s=m,
            times_s=times[p.contender], samples_per_s=size / m,
            gb_per_s=size * bytes_per_sample / m / 1e9,
            ratio_vs_jax_default=None if default is None else default / m,
            compile_s=p.compile_s, peak_bytes=p.peak_bytes, peak_source=p.peak_source))
    return out


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------

def free_memory_bytes() -> int:
    try:
        stats = jax.devices()[0].memory_stats() or {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
    except Exception:  # noqa: BLE001
        pass
    available = available_memory_bytes()
    return 4 << 30 if available is None else available


def parse_size(text: str) -> int:
    text = text.strip()
    if "**" in text:
        base, exp = text.split("**")
        return int(base) ** int(exp)
    return int(text)


def plan(args) -> dict:
    smoke = args.smoke
    cfg = dict(
        smoke=smoke,
        repeats=args.repeats or (2 if smoke else 5),
        scan_steps=16 if smoke else SCAN_STEPS, scan_draw=SCAN_DRAW,
        vmap_examples=64 if smoke else VMAP_EXAMPLES, vmap_draw=VMAP_DRAW,
        nesting_depths=(5,) if smoke else NESTING_DEPTHS,
        nesting_examples=64 if smoke else NESTING_EXAMPLES, nesting_draw=NESTING_DRAW,
        compile_sites=2 if smoke else COMPILE_SITES, compile_shape=COMPILE_SHAPE,
    )
    if args.sizes:
        sizes = [parse_size(s) for s in args.sizes]
    else:
        sizes = list(SMOKE_SIZES if smoke else DEFAULT_SIZES)
    limit = free_memory_bytes() // BYTES_PER_ELEMENT_BUDGET
    cfg["skipped_sizes"] = [n for n in sizes if n > limit]
    cfg["sizes"] = [n for n in sizes if n <= limit]
    return cfg


def run(args, checkpoint: Optional[Callable[[dict], object]] = None) -> dict:
    """Runs every task; ``checkpoint(partial_result)`` after each, so long runs keep their
    results when interrupted."""
    cfg = plan(args)
    notes: list[str] = []
    if cfg["skipped_sizes"]:
        notes.append(f"sizes {cfg['skipped_sizes']} skipped: not enough free memory")
    contenders = jax_contenders(notes)
    cfg["baseline"] = next(c.name for c in contenders if c.is_default)
    have = _samplers_available(notes)
    only = set(args.workloads) if args.workloads else None

    tasks = []  # (workload, param, size, bytes/sample, {contender: builder})
    for kind, value_bytes in BULK_WORKLOADS.items():
        sampler = kind.removesuffix("_bf16")
        for n in cfg["sizes"]:
            builders = {}
            for c in contenders:
                if kind != "bits" and isinstance(c.api, JaxpmacAPI) and not have[sampler]:
                    continue
                builders[c.name] = (c, bulk_program(kind, c.api, n))
            if value_bytes == 4:
                builders["xla iota floor"] = (Contender("xla iota floor"), iota_program(n))
                for bitgen in ("Philox", "PCG64"):
                    builders[f"numpy {bitgen} (CPU)"] = (None, numpy_program(kind, bitgen, n))
            tasks.append((kind, None, n, value_bytes, builders))
    steps, per = cfg["scan_steps"], cfg["scan_draw"]
    tasks.append(("scan", f"{steps} steps x {per}", steps * per, 4,
                  {c.name: (c, scan_program(c.api, steps, per)) for c in contenders}))
    ex, per = cfg["vmap_examples"], cfg["vmap_draw"]
    tasks.append(("vmap", f"{ex} examples x {per}", ex * per, 4,
                  {c.name: (c, vmap_program(c.api, ex, per)) for c in contenders}))
    ex, per = cfg["nesting_examples"], cfg["nesting_draw"]
    for depth in cfg["nesting_depths"]:
        tasks.append(("nesting", depth, ex * per, 4,
                      {c.name: (c, nesting_program(c.api, depth, ex, per)) for c in contenders}))
    sites, shape = cfg["compile_sites"], cfg["compile_shape"]
    tasks.append(("compile", f"{sites} draw sites of {shape}", sites * math.prod(shape), 4,
                  {c.name: (c, model_program(c.api, sites, shape)) for c in contenders}))
    if only:
        tasks = [t for t in tasks if t[0] in only]
    keep = args.contenders or (SMOKE_CONTENDERS if cfg["smoke"] else None)
    if keep:
        tasks = [(*t[:4], {k: v for k, v in t[4].items() if k in keep}) for t in tasks]

    try:
        from tqdm import tqdm
        progress = tqdm(tasks, desc="benchmarks", unit="task", file=sys.stderr)
    except ImportError:
        progress = tasks
    # The process's first XLA compile also starts LLVM's JIT; keep that out of the first
    # contender's compile time.
    jax.block_until_ready(jax.jit(lambda x: x + 1)(jnp.uint32(0)))
    records = []
    for i, (workload, param, size, bps, builders) in enumerate(progress):
        if progress is tasks:
            print(f"[{i + 1}/{len(tasks)}] {workload} {param or ''} n={size}", file=sys.stderr,
                  flush=True)
        programs = []
        for name, (contender, fn) in builders.items():
            try:
                if contender is None:
                    programs.append(Program(name, fn))
                else:
                    programs.append(compile_jax(contender, fn))
            except Exception as e:  # noqa: BLE001 -- one contender failing must not stop a run
                note = f"{name} skipped for {workload}: {type(e).__name__}: {str(e)[:160]}"
                if note not in notes:
                    notes.append(note)
        times = time_programs(programs, cfg["repeats"])
        records.extend(records_of(workload, param, size, bps, programs, times))
        for p in programs:  # release the compiled programs and their buffers
            p.call = None
        if checkpoint is not None:
            checkpoint(_result(cfg, list(notes), records))
    for note in notes:
        print("note:", note, file=sys.stderr)
    return _result(cfg, notes, records)


def _result(cfg, notes, records) -> dict:
    return dict(
        backend=jax.default_backend(), device=str(jax.devices()[0].device_kind),
        host_cpu=host_cpu(), isa=process_isa(), xla_flags=os.environ.get("XLA_FLAGS", ""),
        jax_version=jax.__version__, jaxpmac_version=getattr(jp, "__version__", None),
        numpy_version=np.__version__, python=platform.python_version(),
        cpu_count=os.cpu_count(), created=datetime.datetime.now().isoformat(timespec="seconds"),
        config=cfg, notes=notes, records=records)


# --------------------------------------------------------------------------------------------
# Reports
# --------------------------------------------------------------------------------------------

def _fmt(x, spec):
    return "" if x is None else format(x, spec)


def markdown(result: dict) -> str:
    lines = [f"# jaxpmac benchmarks: {result['backend']} ({result['device']})", "",
             f"jax {result['jax_version']}, numpy {result['numpy_version']}, "
             f"{result['cpu_count']} CPUs ({result.get('host_cpu', 'host CPU not recorded')}), "
             f"{result['created']}; XLA CPU instruction set: "
             f"{result.get('isa', 'not recorded')} (XLA_FLAGS: "
             f"`{result.get('xla_flags') or ''}`); median of "
             f"{result['config']['repeats']} interleaved repeats after a warm-up. "
             "`x jax` = time of jax.random's default / time of the row (higher is faster).", ""]
    by_workload: dict[str, list[dict]] = {}
    for r in result["records"]:
        by_workload.setdefault(r["workload"], []).append(r)
    for workload, rows in by_workload.items():
        lines += [f"## {workload}", "",
                  "| param | n | contender | median ms | Msamples/s | GB/s | x jax | compile s "
                  "| peak MB |",
                  "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            peak = None if r["peak_bytes"] is None else r["peak_bytes"] / 2 ** 20
            lines.append(
                f"| {r['param'] if r['param'] is not None else ''} | {r['size']} | "
                f"{r['contender']} | {r['median_s'] * 1e3:.3f} | "
                f"{r['samples_per_s'] / 1e6:.1f} | {r['gb_per_s']:.2f} | "
                f"{_fmt(r['ratio_vs_jax_default'], '.2f')} | {_fmt(r['compile_s'], '.2f')} | "
                f"{_fmt(peak, '.1f')} |")
        lines.append("")
    if result["notes"]:
        lines += ["## Notes", ""] + [f"- {n}" for n in result["notes"]] + [""]
    return "\n".join(lines)


def plot(result: dict, path: pathlib.Path) -> Optional[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install matplotlib)"
    recs = result["records"]
    panels = [*BULK_WORKLOADS, "nesting", "scan", "vmap", "compile"]
    fig, axes = plt.subplots(2, 4, figsize=(22, 10))
    for ax, workload in zip(axes.flat, panels):
        rows = [r for r in recs if r["workload"] == workload]
        ax.set_title(workload)
        if not rows:
            ax.set_axis_off()
            continue
        names = list(dict.fromkeys(r["contender"] for r in rows))
        if workload in (*BULK_WORKLOADS, "nesting"):
            x_of = (lambda r: r["size"]) if workload != "nesting" else (lambda r: r["param"])
            for name in names:
                pts = sorted((x_of(r), r["samples_per_s"]) for r in rows if r["contender"] == name)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
            ax.set_yscale("log")
            if workload != "nesting":
                ax.set_xscale("log", base=2)
            ax.set_xlabel("elements" if workload != "nesting" else "dynamic words")
            ax.set_ylabel("samples / s")
        else:
            key = "compile_s" if workload == "compile" else "samples_per_s"
            vals = [next(r[key] for r in rows if r["contender"] == n) or 0 for n in names]
            ax.barh(names, vals)
            ax.set_xlabel("compile seconds" if workload == "compile" else "samples / s")
        ax.grid(True, alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(f"jaxpmac benchmarks on {result['backend']} ({result['device']})")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return None


def folder_name(result: dict) -> str:
    """The backend, and on the CPU the ISA level XLA_FLAGS caps it at (``cpu-AVX2``), so that
    runs under ``--xla_cpu_max_isa`` do not overwrite the host default's."""
    isa = result.get("isa", HOST_DEFAULT)
    if result["backend"] == "cpu" and isa != HOST_DEFAULT:
        return f"cpu-{isa}"
    return result["backend"]


def write(result: dict, out: pathlib.Path, *, with_plot: bool = True) -> pathlib.Path:
    folder = out / folder_name(result)
    folder.mkdir(parents=True, exist_ok=True)
    note = plot(result, folder / "results.png") if with_plot else None
    if note:
        result["notes"].append(note)
    (folder / "results.json").write_text(json.dumps(result, indent=1, default=str))
    (folder / "results.md").write_text(markdown(result))
    return folder


ISA_FOLDER = "cpu-isa"
PAIR = "jaxpmac pair"


def isa_markdown(results: list[dict]) -> str:
    """The pair path's ratios at each ISA level: one row per workload and size.

    Args:
        results: the results of one run per level, lowest level first.
    """
    levels = [r["isa"] for r in results]
    first = results[0]
    lines = [f"# jaxpmac per XLA CPU instruction set ({first['device']})", "",
             f"jax {first['jax_version']}, {first['cpu_count']} CPUs ({first['host_cpu']}), "
             f"{first['created']}; each level in its own process, median of "
             f"{first['config']['repeats']} interleaved repeats after a warm-up. "
             f"`x jax` = time of jax.random's default / time of `{PAIR}` (higher is faster); "
             f"`compile x` = `{PAIR}`'s compile time (trace + lower + XLA compile) / "
             "jax.random's default's (lower is faster). A process's first jaxpmac program "
             "also traces jaxpmac's own jitted helpers: the first row's compile time includes "
             "that once-a-process cost.", "",
             "XLA_FLAGS of each run: " + "; ".join(
                 f"{r['isa']}: `{r['xla_flags']}`" for r in results), "",
             "| workload | param | n | " + " | ".join(
                 f"{level} x jax | {level} compile x" for level in levels) + " |",
             "|---|---|---:|" + "---:|---:|" * len(levels)]
    cells: dict[tuple, dict[str, tuple]] = {}
    for r in results:
        by_row: dict[tuple, dict[str, dict]] = {}
        for rec in r["records"]:
            row = (rec["workload"], str(rec["param"] if rec["param"] is not None else ""),
                   rec["size"])
            by_row.setdefault(row, {})[rec["contender"]] = rec
        for row, recs in by_row.items():
            pair, base = recs.get(PAIR), recs.get(r["config"].get("baseline"))
            if pair is None:
                continue
            compile_x = None
            if base is not None and pair["compile_s"] and base["compile_s"]:
                compile_x = pair["compile_s"] / base["compile_s"]
            cells.setdefault(row, {})[r["isa"]] = (pair["ratio_vs_jax_default"], compile_x)
    for (workload, param, size), at in cells.items():
        values = [at.get(level, (None, None)) for level in levels]
        lines.append(f"| {workload} | {param} | {size} | " + " | ".join(
            f"{_fmt(x, '.2f')} | {_fmt(c, '.2f')}" for x, c in values) + " |")
    lines.append("")
    return "\n".join(lines)


def _without_isa(argv: list[str]) -> list[str]:
    """``argv`` less ``--isa`` and its values (a child runs one level, named in XLA_FLAGS)."""
    out, skipping = [], False
    for token in argv:
        option = token.split("=", 1)[0]
        if len(option) > 2 and "--isa".startswith(option):  # argparse takes prefixes too
            skipping = "=" not in token
            continue
        if skipping and not token.startswith("-"):
            continue
        skipping = False
        out.append(token)
    return out


def run_isa_levels(levels: list[str], argv: list[str], out: pathlib.Path) -> int:
    """Runs this benchmark once per level, each in a process of its own, then writes the
    combined table to ``<out>/cpu-isa/results.{md,json}``."""
    results = []
    for level in levels:
        print(f"== --xla_cpu_max_isa={level}", file=sys.stderr, flush=True)
        status = run_under_isa("benchmarks.run", _without_isa(argv), level)
        if status != 0:
            print(f"{level}: the run failed (exit status {status})", file=sys.stderr)
            return status
        results.append(json.loads((out / f"cpu-{level}" / "results.json").read_text()))
    folder = out / ISA_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.md").write_text(isa_markdown(results))
    (folder / "results.json").write_text(json.dumps(dict(
        levels=levels, runs=[f"cpu-{level}/results.json" for level in levels],
        host_cpu=results[0]["host_cpu"], jax_version=results[0]["jax_version"],
        xla_flags={r["isa"]: r["xla_flags"] for r in results}), indent=1))
    print(f"wrote {folder}/results.md", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes and few repeats; finishes in well under a minute")
    parser.add_argument("--sizes", nargs="+", metavar="N",
                        help="element counts of the bulk workloads, e.g. 65536 or 2**20")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed repeats per program (default 5, smoke 2)")
    parser.add_argument("--workloads", nargs="+",
                        choices=(*BULK_WORKLOADS, "scan", "vmap", "nesting", "compile"),
                        help="run only these workloads")
    parser.add_argument("--contenders", nargs="+", metavar="NAME",
                        help="time only these contenders (names as in the tables; smoke "
                             "mode defaults to a few)")
    parser.add_argument("--out", default="benchmarks/results", type=pathlib.Path,
                        help="results folder; a subfolder per backend is written")
    parser.add_argument("--no-plot", action="store_true", help="skip results.png")
    parser.add_argument("--isa", nargs="+", metavar="LEVEL",
                        help="run once per XLA CPU instruction-set level "
                             f"({', '.join(ISA_LEVELS)}, or all: every level this CPU has), "
                             "each in its own process on the CPU backend, writing "
                             f"<out>/cpu-LEVEL/ and <out>/{ISA_FOLDER}/")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.isa:
        try:
            levels = isa_levels_asked(args.isa)
        except ValueError as e:
            parser.error(str(e))
        return run_isa_levels(levels, argv, args.out)
    result = run(args, checkpoint=lambda partial: write(partial, args.out, with_plot=False))
    folder = write(result, args.out, with_plot=not args.no_plot)
    print(f"wrote {folder}/results.json, results.md"
          + ("" if args.no_plot else ", results.png"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
