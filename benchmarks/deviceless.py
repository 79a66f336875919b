"""jaxpmac against jax.random, compiled for a TPU v5e and an NVIDIA H100 on a CPU-only machine.

XLA's TPU and GPU compilers run on a plain CPU: given a described device instead of a real one,
they produce what the accelerator would run. This module lowers the same programs with jaxpmac
and with ``jax.random`` (its default implementation) for each target in one run, and records
what XLA made of them: compile time, fusions, loops, the memory plan and, for TPU, XLA's cost
analysis. Nothing runs on an accelerator: bytes accessed, flops and estimated time are the
compiler's estimates, not measurements, and compile times are this CPU's (read them as ratios).

Usage::

    python -m benchmarks.deviceless                  # tpu and cuda, every program, 2**24 draws
    python -m benchmarks.deviceless --quick          # 2**20 draws; sites_5 and sites_20 only
    python -m benchmarks.deviceless --programs bits dropout --timeout 300
    python -m benchmarks.deviceless --programs numpyro_nuts numpyro_svi   # numpyro in the venvs
    /tmp/dl-tpu/bin/python -m benchmarks.deviceless --target tpu    # one target, in-process

Writes ``benchmarks/results/deviceless/results.json`` and ``results.md`` as each target ends; a
target not run keeps its earlier results there.

One process compiles for one target only (libtpu or the CUDA plugin), each from its own Python
>= 3.12 venv with jax 0.12. Set-up, from the repository root (the CUDA venv is ~5.5 GB)::

    PY312=/root/.pyenv/versions/3.12.1/bin/python
    $PY312 -m venv /tmp/dl-tpu && /tmp/dl-tpu/bin/pip install "jax[tpu]==0.12.0.1"
    /tmp/dl-tpu/bin/pip install --no-deps -e .
    $PY312 -m venv /tmp/dl-cuda && /tmp/dl-cuda/bin/pip install "jax[cuda12]==0.12.0.1"
    /tmp/dl-cuda/bin/pip install --no-deps -e .

``--target all`` (the default) runs this module once per target with that target's interpreter
(``--tpu-python``/``--cuda-python``; else ``$JAXPMAC_DL_TPU_PYTHON``/``$JAXPMAC_DL_CUDA_PYTHON``;
else ``/tmp/dl-tpu/bin/python`` and ``/tmp/dl-cuda/bin/python``) and collects the JSON line it
prints per result. A target's process compiles each (program, library) in a child process of its
own, so that a compile that runs past ``--timeout`` seconds or ``--max-rss-gb`` of memory is
stopped and recorded as ``timeout`` or ``failed`` with the reason; the child's peak RSS is
recorded either way. jax is imported only in those children, so this module imports under any
Python (the tests import it where libtpu is absent).

Targets: ``tpu`` is one TPU v5e chip (``jax.experimental.topologies.get_topology_desc`` with
topology ``v5e:1x1``, from libtpu). ``cuda`` is one NVIDIA H100 SXM 80GB described by
``benchmarks/deviceless_h100.pbtxt``: XLA's GPU target config for an H100 SXM (a
``GpuTargetConfigProto`` in protobuf text format: 132 SMs, 3.35 TB/s, compute capability 9.0,
CUDA 12.8, cuDNN 9.7), the device facts the compiler would otherwise query from the GPU.

Code that picks a lowering at trace time from ``jax.default_backend()`` (jaxpmac up to commit
68ab9e5) would see the host's CPU here, so while tracing ``jax.default_backend()`` reports the
target's platform (``tpu`` or ``gpu``): jaxpmac then traces the program it would trace on the
accelerator. A choice made by a primitive's per-platform lowering rules (jaxpmac's
``by_platform``) or ``lax.platform_dependent`` follows ``lowering_platforms`` and needs none of
this; ``jax.random`` consults neither. Each target's results name the jaxpmac
revision compiled (the commit, and whether ``jaxpmac/`` had uncommitted changes).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import functools
import json
import operator
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from typing import Optional

from benchmarks._compiler_dumps import dump_counts, dump_environment
from benchmarks._host import available_memory_bytes, host_cpu

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "deviceless"
H100_DESCRIPTION = REPO_ROOT / "benchmarks" / "deviceless_h100.pbtxt"
TPU_TOPOLOGY = "v5e:1x1"

TARGETS = ("tpu", "cuda")
DEFAULT_PYTHONS = {"tpu": ("JAXPMAC_DL_TPU_PYTHON", "/tmp/dl-tpu/bin/python"),
                   "cuda": ("JAXPMAC_DL_CUDA_PYTHON", "/tmp/dl-cuda/bin/python")}
LIBRARIES = ("jax.random", "jaxpmac")

BULK_PROGRAMS = ("bits", "uniform", "normal")
SITE_PROGRAMS = {"sites_5": 5, "sites_20": 20, "sites_200": 200}
# A framework's key operations through ``jax.random`` (a pmac key against threefry): N times
# ``k, sub = split(k)`` and a scalar ``uniform(fold_in(sub, i))``, as NumPyro and Flax do.
KEY_PROGRAMS = {"keys_10": 10}
# NumPyro's programs from a traced seed (benchmarks/frameworks.py): eight schools' NUTS.init and
# one step, an SVI init and one update. Only where asked for (they need numpyro in the venv).
FRAMEWORK_PROGRAMS = {"numpyro_nuts": "NUTS init + one step",
                      "numpyro_svi": "SVI init + one update"}
PROGRAMS = (*BULK_PROGRAMS, "dropout", *SITE_PROGRAMS, *KEY_PROGRAMS, *FRAMEWORK_PROGRAMS)
DEFAULT_PROGRAMS = tuple(p for p in PROGRAMS if p not in FRAMEWORK_PROGRAMS)
QUICK_PROGRAMS = tuple(p for p in DEFAULT_PROGRAMS if p != "sites_200")
DEFAULT_BULK_SIZES = (2 ** 24,)
QUICK_BULK_SIZES = (2 ** 20,)
DROPOUT_SHAPE = (4096, 4096)
DROPOUT_RATE = 0.1
SITE_SHAPE = (64, 64)
DEFAULT_TIMEOUT_S = 900.0
# Share of the memory available at the start that one compile may take before it is stopped.
DEFAULT_RSS_SHARE = 0.75

MEASUREMENT_KEYS = ("device", "jax_version", "traced_as_backend", "trace_lower_s", "compile_s",
                    "fusions", "instructions", "while_loops", "stablehlo_while",
                    "stablehlo_barrier", "bytes_accessed", "flops", "estimated_s", "temp_bytes",
                    "output_bytes", "materialises_input_sized_array")
# Read by this process from the compiler's dump folder (``_compiler_dumps``): cuda's PTX kernels
# and the main one's ALU instructions per value, the TPU's estimated cycles.
DUMP_KEYS = ("kernels", "main_kernel", "alu_per_value", "alu_per_value_all", "tpu_cycles")
#: The dump's columns in each target's table: (record key, title), each with its ratio.
DUMP_COLUMNS = {"cuda": (("alu_per_value", "ALU per value, main kernel"),
                         ("alu_per_value_all", "ALU per value, all kernels")),
                "tpu": (("tpu_cycles", "estimated cycles"),)}
RECORD_KEYS = ("target", "program", "size", "library", "status", "reason",
               "compiler_peak_rss_bytes", *MEASUREMENT_KEYS, *DUMP_KEYS)
ESTIMATE_NOTE = ("XLA's cost analysis (bytes accessed, flops, estimated time) is the compiler's "
                 "estimate, not a measurement, and compile times are on this CPU, so read them "
                 "as ratios.")


# --------------------------------------------------------------------------------------------
# What to compile
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Task:
    """One program to compile with each library.

    Attributes:
        program: a name from ``PROGRAMS``.
        size: the random values it draws (for a bulk draw, its length).
    """

    program: str
    size: int

    @property
    def label(self) -> str:
        """The program as a table row names it, e.g. ``bits 2**20`` or ``sites_5 (5 x 64x64)``."""
        if self.program in SITE_PROGRAMS:
            return f"{self.program} ({SITE_PROGRAMS[self.program]} x {_shape_text(SITE_SHAPE)})"
        if self.program in KEY_PROGRAMS:
            return f"{self.program} ({self.size} x split, fold_in, uniform)"
        if self.program in FRAMEWORK_PROGRAMS:
            return f"{self.program} ({FRAMEWORK_PROGRAMS[self.program]})"
        if self.program == "dropout":
            return f"dropout {_shape_text(DROPOUT_SHAPE)}"
        return f"{self.program} {_size_text(self.size)}"


def plan_tasks(programs, bulk_sizes) -> list[Task]:
    """The tasks for ``programs`` (in ``PROGRAMS`` order), bulk draws once per size."""
    tasks = []
    for program in (p for p in PROGRAMS if p in programs):
        if program in BULK_PROGRAMS:
            tasks += [Task(program, n) for n in bulk_sizes]
        elif program == "dropout":
            tasks.append(Task(program, _count(DROPOUT_SHAPE)))
        elif program in KEY_PROGRAMS:
            tasks.append(Task(program, KEY_PROGRAMS[program]))
        elif program in FRAMEWORK_PROGRAMS:
            tasks.append(Task(program, 1))
        else:
            tasks.append(Task(program, SITE_PROGRAMS[program] * _count(SITE_SHAPE)))
    return tasks


def parse_size(text: str) -> int:
    """A size written as an integer or a power, e.g. ``4096`` or ``2**20``."""
    base, _, exponent = text.strip().partition("**")
    return int(base) ** int(exponent) if exponent else int(base)


def _count(shape) -> int:
    return functools.reduce(operator.mul, shape, 1)


def _shape_text(shape) -> str:
    return "x".join(str(d) for d in shape)


def _size_text(n: int) -> str:
    """``2**k`` for a power of two, else the number."""
    return f"2**{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


# --------------------------------------------------------------------------------------------
# Compiling one (program, library) for a target: runs in a child process, imports jax
# --------------------------------------------------------------------------------------------

def target_device(target: str):
    """The described device that ``target`` compiles for: a TPU v5e chip or an H100."""
    from jax.experimental import topologies

    if target == "tpu":
        topology = topologies.get_topology_desc(topology_name=TPU_TOPOLOGY, platform="tpu")
    else:
        topology = topologies.get_topology_desc(
            platform="cuda", target_config=H100_DESCRIPTION.read_text(), topology="1x1x1")
    return topology.devices[0]


def library_api(library: str):
    """``library``'s key from a seed, fold of a label into a key, and draws by program name."""
    import jax
    import jax.numpy as jnp

    if library == "jaxpmac":
        import jaxpmac as jp

        return jp.key, (lambda key, label: key.split_static(label)), {
            "bits": lambda key, shape: jp.bits(key, shape, jnp.uint32),
            "uniform": lambda key, shape: jp.uniform(key, shape, jnp.float32),
            "normal": lambda key, shape: jp.normal(key, shape, jnp.float32)}
    return jax.random.key, jax.random.fold_in, {
        "bits": lambda key, shape: jax.random.bits(key, shape, jnp.uint32),
        "uniform": lambda key, shape: jax.random.uniform(key, shape, jnp.float32),
        "normal": lambda key, shape: jax.random.normal(key, shape, jnp.float32)}


def build_program(task: Task, library: str):
    """The function ``task`` compiles with ``library``, and its arguments' (shape, dtype).

    The seed is always a traced ``()`` uint32 argument; dropout also takes ``x``.
    """
    import jax.numpy as jnp

    make_key, fold, draw = library_api(library)
    seed_spec = ((), jnp.uint32)
    if task.program in BULK_PROGRAMS:
        return (lambda seed: draw[task.program](make_key(seed), (task.size,))), [seed_spec]
    if task.program == "dropout":
        return ((lambda seed, x: x * (draw["uniform"](make_key(seed), x.shape) > DROPOUT_RATE)),
                [seed_spec, (DROPOUT_SHAPE, jnp.float32)])

    if task.program in KEY_PROGRAMS:
        return functools.partial(key_operations, library=library, count=task.size), [seed_spec]
    if task.program in FRAMEWORK_PROGRAMS:
        from benchmarks import frameworks
        program = {"numpyro_nuts": frameworks.nuts_init_and_step,
                   "numpyro_svi": frameworks.svi_init_and_update}[task.program]
        impl = "pmac" if library == "jaxpmac" else "threefry2x32"
        return functools.partial(program, impl=impl), [seed_spec]

    def sum_of_sites(seed):
        root = make_key(seed)
        return functools.reduce(operator.add, (draw["normal"](fold(root, label), SITE_SHAPE)
                                               for label in range(SITE_PROGRAMS[task.program])))

    return sum_of_sites, [seed_spec]


def key_operations(seed, *, library: str, count: int):
    """``count`` times ``k, sub = split(k)`` and ``uniform(fold_in(sub, i), ())`` with a
    ``jax.random`` key: of jaxpmac's implementation (``impl="pmac"``) or the default one."""
    import jax
    import jax.numpy as jnp

    if library == "jaxpmac":
        import jaxpmac  # noqa: F401  (registers the "pmac" implementation)
    key = jax.random.key(seed, impl="pmac" if library == "jaxpmac" else None)
    values = []
    for i in range(count):
        key, sub = jax.random.split(key)
        values.append(jax.random.uniform(jax.random.fold_in(sub, i), ()))
    return jnp.stack(values)


@contextlib.contextmanager
def default_backend_reported_as(backend: str):
    """Make ``jax.default_backend()`` return ``backend`` inside the block (see the module's
    docstring: jaxpmac picks its lowering from it at trace time)."""
    import jax

    host_default_backend = jax.default_backend
    jax.default_backend = lambda: backend
    try:
        yield
    finally:
        jax.default_backend = host_default_backend


def hlo_counts(text: str) -> dict:
    """Instructions, fusions and while loops in optimized HLO text (fusion bodies included)."""
    opcodes = re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = .*?\b([a-z][\w\-]*)\(", text, re.M)
    return dict(instructions=len(opcodes), fusions=opcodes.count("fusion"),
                while_loops=opcodes.count("while"))


def compile_one(target: str, task: Task, library: str) -> dict:
    """Lower and compile ``task`` with ``library`` for ``target``; its ``MEASUREMENT_KEYS``."""
    import jax

    device = target_device(target)
    sharding = jax.sharding.SingleDeviceSharding(device)
    function, arg_specs = build_program(task, library)
    args = [jax.ShapeDtypeStruct(shape, dtype, sharding=sharding) for shape, dtype in arg_specs]
    start = time.perf_counter()
    with default_backend_reported_as(device.platform):
        lowered = (jax.jit(function, out_shardings=sharding).trace(*args)
                   .lower(lowering_platforms=(target,)))
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    stablehlo = lowered.as_text()
    cost = compiled.cost_analysis() or {}   # None on cuda
    memory = compiled.memory_analysis()
    return dict(
        device=device.device_kind, jax_version=jax.__version__,
        traced_as_backend=device.platform,
        trace_lower_s=round(lowered_at - start, 3), compile_s=round(compiled_at - lowered_at, 3),
        **hlo_counts(compiled.as_text()),
        stablehlo_while=stablehlo.count("stablehlo.while"),
        stablehlo_barrier=stablehlo.count("optimization_barrier"),
        bytes_accessed=cost.get("bytes accessed"), flops=cost.get("flops"),
        estimated_s=cost.get("optimal_seconds"),
        temp_bytes=memory.temp_size_in_bytes, output_bytes=memory.output_size_in_bytes,
        # A temporary as large as x (4 bytes an element): the uniforms or the mask were
        # written out instead of fused into the multiply.
        materialises_input_sized_array=(memory.temp_size_in_bytes >= 4 * _count(DROPOUT_SHAPE)
                                        if task.program == "dropout" else None))


# --------------------------------------------------------------------------------------------
# Child processes: a time and memory limit, and the peak RSS
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class ChildOutcome:
    """How a child process ended.

    Attributes:
        status: ``ok`` (exit code 0), ``timeout`` or ``failed``.
        stdout: what it printed.
        reason: why it is not ``ok``; None when it is.
        peak_rss_bytes: its peak resident memory.
    """

    status: str
    stdout: str
    reason: Optional[str]
    peak_rss_bytes: int


def run_child(argv, *, timeout_s: float, max_rss_bytes: Optional[int] = None,
              env=None) -> ChildOutcome:
    """Run ``argv`` and wait for it, stopping it past ``timeout_s`` or ``max_rss_bytes``."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env, cwd=REPO_ROOT,
                                 start_new_session=True)
        stopped, wait_status, usage = _wait_within(child, timeout_s, max_rss_bytes)
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
    exit_code = os.waitstatus_to_exitcode(wait_status)
    child.returncode = exit_code   # reaped by os.wait4, not by Popen
    peak_rss_bytes = usage.ru_maxrss * 1024   # kilobytes on Linux
    if stopped is not None:
        status, reason = stopped
        return ChildOutcome(status, out, reason, peak_rss_bytes)
    if exit_code != 0:
        return ChildOutcome("failed", out, _failure_reason(exit_code, err), peak_rss_bytes)
    return ChildOutcome("ok", out, None, peak_rss_bytes)


def _wait_within(child: subprocess.Popen, timeout_s: float, max_rss_bytes: Optional[int]):
    """Wait for ``child``, killing its process group past the limits (or if interrupted: it
    runs in a session of its own, which Ctrl-C does not reach).

    Returns:
        ``(status, reason)`` if it was stopped (else None), its wait status, its resource usage.
    """
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            pid, wait_status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                return None, wait_status, usage
            if time.monotonic() > deadline:
                return _kill(child, ("timeout", f"no result after {timeout_s:g} s (--timeout)"))
            if max_rss_bytes is not None and _rss_bytes(child.pid) > max_rss_bytes:
                return _kill(child, ("failed", f"stopped when its memory passed "
                                               f"{max_rss_bytes / 2 ** 30:.1f} GiB (--max-rss-gb)"))
            time.sleep(0.1)
    except BaseException:
        _kill(child, None)
        raise


def _kill(child: subprocess.Popen, stopped):
    """Kill ``child``'s process group and reap it; ``stopped``, its wait status and usage."""
    with contextlib.suppress(ProcessLookupError):   # it may have ended just now
        os.killpg(child.pid, signal.SIGKILL)
    _, wait_status, usage = os.wait4(child.pid, 0)
    return stopped, wait_status, usage


def _rss_bytes(pid: int) -> int:
    """The current resident memory of process ``pid`` (0 once it has gone)."""
    try:
        resident_pages = int(pathlib.Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def _failure_reason(exit_code: int, stderr: str) -> str:
    """The exit code or signal, and the last line of ``stderr`` that is not a log line."""
    if exit_code < 0:
        ended = f"killed by {signal.Signals(-exit_code).name}"
        if -exit_code == signal.SIGKILL:
            ended += " (out of memory?)"
    else:
        ended = f"exit code {exit_code}"
    lines = [line for line in stderr.splitlines()
             if line.strip() and not re.match(r"[IWEF]\d{4} ", line)]   # glog lines
    return f"{ended}: {lines[-1].strip()}" if lines else ended


def record_for(target: str, task: Task, library: str, outcome: ChildOutcome,
               dumped: Optional[dict] = None) -> dict:
    """The result record of one compile child: its measurements and what its compiler dumped
    (``dumped``, :func:`benchmarks._compiler_dumps.dump_counts`), or why there are none."""
    record = dict.fromkeys(RECORD_KEYS)
    record.update(target=target, program=task.program, size=task.size, library=library,
                  status=outcome.status, reason=outcome.reason,
                  compiler_peak_rss_bytes=outcome.peak_rss_bytes)
    if outcome.status == "ok":
        record.update(json.loads(outcome.stdout.strip().splitlines()[-1]), **(dumped or {}))
    return record


# --------------------------------------------------------------------------------------------
# One target, in this process: a compile child per (program, library)
# --------------------------------------------------------------------------------------------

def run_target(target: str, tasks, *, timeout_s: float,
               max_rss_bytes: Optional[int]) -> list[dict]:
    """Compile every task with every library for ``target``, each in a child process.

    Prints each record as a JSON line on stdout as it comes, and progress on stderr.
    """
    # No TPU is opened, so another process's libtpu (a compile running beside this one) must
    # not lock this one out with libtpu's lockfile.
    env = dict(os.environ, JAX_PLATFORMS="cpu", ALLOW_MULTIPLE_LIBTPU_LOAD="1")
    records = []
    for task in tasks:
        for library in LIBRARIES:
            argv = [sys.executable, "-m", "benchmarks.deviceless", "--target", target,
                    "--compile-one", task.program, str(task.size), library]
            outcome = run_child(argv, timeout_s=timeout_s, max_rss_bytes=max_rss_bytes, env=env)
            dumped = None
            if outcome.status == "ok" and task.program in (*BULK_PROGRAMS, "dropout"):
                dumped = compiler_dump_counts(target, argv, timeout_s=timeout_s,
                                              max_rss_bytes=max_rss_bytes, env=env)
            record = record_for(target, task, library, outcome, dumped)
            print(json.dumps(record), flush=True)
            print(_progress_line(record, task), file=sys.stderr, flush=True)
            records.append(record)
    return records


def compiler_dump_counts(target: str, argv, *, timeout_s: float, max_rss_bytes: Optional[int],
                         env) -> Optional[dict]:
    """The same compile again with the compiler's dumps on, read for ``DUMP_KEYS`` (None if it
    fails). A compile of its own: dumping every kernel's PTX or LLO slows the compiler, so the
    timed compile dumps nothing."""
    with tempfile.TemporaryDirectory(prefix="deviceless-dump-") as folder:
        outcome = run_child(argv, timeout_s=timeout_s, max_rss_bytes=max_rss_bytes,
                            env=dump_environment(target, pathlib.Path(folder), env))
        return dump_counts(target, pathlib.Path(folder)) if outcome.status == "ok" else None


def _progress_line(record: dict, task: Task) -> str:
    """One line on a finished compile: its time and fusions, or why it has none."""
    rss = f"rss {record['compiler_peak_rss_bytes'] / 2 ** 30:.2f} GiB"
    if record["status"] != "ok":
        return (f"{record['target']:5} {task.label:24} {record['library']:10} "
                f"{record['status']}: {record['reason']} ({rss})")
    return (f"{record['target']:5} {task.label:24} {record['library']:10} "
            f"compile {record['compile_s']:.2f} s, {record['fusions']} fusions ({rss})")


def run_target_process(target: str, python: str, forwarded_args) -> list[dict]:
    """Run this module for ``target`` under ``python``; the records it printed.

    Its progress goes to this process's stderr. Returns the records that came back, none if
    the interpreter is missing or the process printed none.
    """
    if not pathlib.Path(python).exists():
        print(f"{target}: no interpreter at {python}; its earlier results are kept",
              file=sys.stderr)
        return []
    argv = [python, "-m", "benchmarks.deviceless", "--target", target, "--no-write",
            *forwarded_args]
    completed = subprocess.run(argv, stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT,
                               check=False)
    records = [json.loads(line) for line in completed.stdout.splitlines()
               if line.startswith("{")]
    if completed.returncode != 0:
        print(f"{target}: exit code {completed.returncode} after {len(records)} results",
              file=sys.stderr)
    return records


# --------------------------------------------------------------------------------------------
# Results: results.json (one section per target, merged across runs) and results.md
# --------------------------------------------------------------------------------------------

def target_section(records: list[dict], *, command: str, python: str) -> dict:
    """A target's results with what is needed to read and reproduce them."""
    measured = [r for r in records if r["status"] == "ok"] or [dict.fromkeys(MEASUREMENT_KEYS)]
    return dict(date=datetime.datetime.now().isoformat(timespec="seconds"),
                jax_version=measured[0]["jax_version"], device=measured[0]["device"],
                traced_as_backend=measured[0]["traced_as_backend"],
                jaxpmac_revision=jaxpmac_revision(),
                machine=f"{host_cpu()}, {os.cpu_count()} CPUs", python=python,
                command=command, records=records)


def jaxpmac_revision() -> str:
    """The commit of this checkout, with ``+ uncommitted changes`` when ``jaxpmac/`` has any."""
    def git(*args) -> str:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--", "jaxpmac")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit} + uncommitted changes" if changed else commit


def merge_results(existing: dict, sections: dict) -> dict:
    """``existing`` results with the targets in ``sections`` replaced and the others kept."""
    targets = dict(existing.get("targets", {}))
    targets.update(sections)
    return dict(note=ESTIMATE_NOTE, targets={t: targets[t] for t in sorted(targets)})


def write_results(out_dir: pathlib.Path, sections: dict) -> dict:
    """Merge ``sections`` into ``out_dir``'s results.json and rewrite it and results.md."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "results.json"
    existing = json.loads(json_path.read_text()) if json_path.exists() else {}
    results = merge_results(existing, sections)
    json_path.write_text(json.dumps(results, indent=1) + "\n")
    (out_dir / "results.md").write_text(render_markdown(results))
    return results


def render_markdown(results: dict) -> str:
    """results.md: a header, then per target its run and a table with a row per program."""
    lines = ["# jaxpmac and jax.random compiled for accelerators, on a CPU (deviceless)", "",
             ESTIMATE_NOTE + " Ratios are jaxpmac / jax.random; `-` marks a value XLA does "
             "not report for the target or a compile that did not finish.", ""]
    for target, section in results["targets"].items():
        lines += _target_markdown(target, section)
    return "\n".join(lines) + "\n"


def _target_markdown(target: str, section: dict) -> list[str]:
    """A target's heading, its run's facts and command, the table and the notes under it."""
    lines = [f"## {target}: {section['device']}", "",
             f"{section['date']}, jax {section['jax_version']} ({section['python']}), on "
             f"{section['machine']}; jaxpmac {section['jaxpmac_revision']}, traced with "
             f"`jax.default_backend()` = `{section['traced_as_backend']}`. Reproduce: "
             f"`{section['command']}`", "",
             "| program | jax.random compile s | jaxpmac compile s | ratio "
             "| fusions (jax / jaxpmac) | bytes accessed (jax / jaxpmac) | bytes ratio "
             "| temp bytes (jax / jaxpmac) | jaxpmac while / barrier |"
             + "".join(f" {title} (jax / jaxpmac) | {title} ratio |"
                       for _, title in DUMP_COLUMNS[target]),
             "|---|" + "---:|" * (8 + 2 * len(DUMP_COLUMNS[target]))]
    by_task = _records_by_task(section["records"])
    for task, pair in by_task.items():
        lines.append(_table_row(task, pair.get("jax.random"), pair.get("jaxpmac"),
                                dump_keys=[key for key, _ in DUMP_COLUMNS[target]]))
    lines += [""] + _notes(by_task) + [""]
    return lines


def _records_by_task(records: list[dict]) -> dict:
    """``{Task: {library: record}}`` in ``PROGRAMS`` order, then by size."""
    by_task = {}
    for record in records:
        task = Task(record["program"], record["size"])
        by_task.setdefault(task, {})[record["library"]] = record
    return dict(sorted(by_task.items(), key=lambda kv: (PROGRAMS.index(kv[0].program),
                                                         kv[0].size)))


def _table_row(task: Task, jax_record: Optional[dict], jaxpmac_record: Optional[dict], *,
               dump_keys=()) -> str:
    def both(key, formatted):
        return f"{formatted(_value(jax_record, key))} / {formatted(_value(jaxpmac_record, key))}"

    def ratio(key):
        return _ratio(_value(jaxpmac_record, key), _value(jax_record, key))

    cells = [task.label, _compile_cell(jax_record), _compile_cell(jaxpmac_record),
             ratio("compile_s"),
             both("fusions", _text), both("bytes_accessed", _bytes_text),
             ratio("bytes_accessed"), both("temp_bytes", _bytes_text),
             f"{_text(_value(jaxpmac_record, 'while_loops'))} / "
             f"{_text(_value(jaxpmac_record, 'stablehlo_barrier'))}"]
    for key in dump_keys:
        cells += [both(key, _count_text), ratio(key)]
    return "| " + " | ".join(cells) + " |"


def _notes(by_task: dict) -> list[str]:
    """Lines under a table: dropout's materialised array, and every compile that did not
    finish with its reason and peak memory."""
    notes = []
    for task, pair in by_task.items():
        if task.program == "dropout":
            verdicts = ", ".join(
                f"{library} {_text(_value(record, 'materialises_input_sized_array'))}"
                for library, record in sorted(pair.items()))
            notes.append(f"- dropout writes an array of x's size (temp bytes >= "
                         f"{_bytes_text(4 * _count(DROPOUT_SHAPE))}): {verdicts}.")
        for library, record in sorted(pair.items()):
            if record["status"] != "ok":
                notes.append(f"- {task.label}, {library}: {record['status']}: {record['reason']}"
                             f" (compiler peak RSS "
                             f"{_bytes_text(record['compiler_peak_rss_bytes'])}).")
    return notes


def _value(record: Optional[dict], key: str):
    return None if record is None else record.get(key)


def _compile_cell(record: Optional[dict]) -> str:
    """The compile seconds, or the status of a compile that did not finish."""
    if record is None:
        return "-"
    if record["status"] != "ok":
        return record["status"]
    return f"{record['compile_s']:.2f}"


def _ratio(numerator, denominator) -> str:
    if numerator is None or not denominator:
        return "-"
    ratio = numerator / denominator
    return f"{ratio:.{1 if ratio >= 10 else 2}f}x"


def _text(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _count_text(value) -> str:
    """A count with thousands separated (``650,007``); other numbers as they are."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else _text(value)


def _bytes_text(n) -> str:
    """Bytes in decimal units, three significant digits (``67.1 MB``)."""
    if n is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def parse_args(argv) -> argparse.Namespace:
    """The command line, with ``programs``, ``sizes`` and ``max_rss_gb`` resolved."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.deviceless",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=("all", *TARGETS), default="all",
                        help="all: each target in a process of its own, under its interpreter; "
                             "tpu/cuda: that target, in this process (default all)")
    parser.add_argument("--programs", nargs="+", choices=PROGRAMS, metavar="PROGRAM",
                        help=f"programs to compile, of {', '.join(PROGRAMS)} (default all; "
                             "with --quick, all but sites_200)")
    parser.add_argument("--sizes", nargs="+", type=parse_size,
                        help="lengths of the bulk draws, e.g. 2**20 (default 2**24; with --quick "
                             "2**20)")
    parser.add_argument("--quick", action="store_true",
                        help="a fast check: 2**20 bulk draws and no sites_200")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help="seconds one (program, library) compile may take (default 900)")
    parser.add_argument("--max-rss-gb", type=float,
                        help="GiB of memory one compile may take (default 75%% of the memory "
                             "available at the start)")
    parser.add_argument("--tpu-python", default=_default_python("tpu"),
                        help="interpreter with libtpu, for --target all")
    parser.add_argument("--cuda-python", default=_default_python("cuda"),
                        help="interpreter with the CUDA plugin, for --target all")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help="folder of results.json and results.md")
    parser.add_argument("--no-write", action="store_true",
                        help="print the JSON lines only, leave the results files alone (what "
                             "--target all passes to the target processes)")
    parser.add_argument("--compile-one", nargs=3, metavar=("PROGRAM", "SIZE", "LIBRARY"),
                        help="(internal) compile one program for --target in this process and "
                             "print its measurements as JSON")
    args = parser.parse_args(argv)
    args.programs = args.programs or (QUICK_PROGRAMS if args.quick else DEFAULT_PROGRAMS)
    args.sizes = args.sizes or (QUICK_BULK_SIZES if args.quick else DEFAULT_BULK_SIZES)
    available = available_memory_bytes()
    if args.max_rss_gb is None and available is not None:
        args.max_rss_gb = round(DEFAULT_RSS_SHARE * available / 2 ** 30, 1)
    return args


def _default_python(target: str) -> str:
    variable, fallback = DEFAULT_PYTHONS[target]
    return os.environ.get(variable, fallback)


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    if args.compile_one:
        program, size, library = args.compile_one
        print(json.dumps(compile_one(args.target, Task(program, int(size)), library)))
    elif args.target == "all":
        run_all_targets(args, argv)
    else:
        run_one_target(args, argv)
    return 0


def run_all_targets(args: argparse.Namespace, argv) -> None:
    """Each target in a process of its own, under its interpreter; the results are written as
    each target ends, so an interrupted run keeps the targets it finished."""
    forwarded = ["--programs", *args.programs, "--sizes", *map(str, args.sizes),
                 "--timeout", str(args.timeout)]
    if args.max_rss_gb is not None:
        forwarded += ["--max-rss-gb", str(args.max_rss_gb)]
    command = shlex.join(["python", "-m", "benchmarks.deviceless", *argv])
    for target in TARGETS:
        python = getattr(args, f"{target}_python")
        records = run_target_process(target, python, forwarded)
        if records:
            _save(args, {target: target_section(records, command=command, python=python)})


def run_one_target(args: argparse.Namespace, argv) -> None:
    """``args.target`` in this process (its compiles in child processes)."""
    max_rss_bytes = None if args.max_rss_gb is None else int(args.max_rss_gb * 2 ** 30)
    records = run_target(args.target, plan_tasks(args.programs, args.sizes),
                         timeout_s=args.timeout, max_rss_bytes=max_rss_bytes)
    command = shlex.join([sys.executable, "-m", "benchmarks.deviceless", *argv])
    _save(args, {args.target: target_section(records, command=command, python=sys.executable)})


def _save(args: argparse.Namespace, sections: dict) -> None:
    """Merge ``sections`` into the results files, unless ``--no-write``."""
    if not args.no_write:
        write_results(args.out, sections)
        print(f"wrote {args.out / 'results.md'}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
