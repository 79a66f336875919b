"""Audit the float instructions in the H100 PTX of every golden program, compiled without a GPU.

jaxpmac promises bit-identical sampler values on CPU and GPU. On a real H200 (2026-11-26) the
float32 samplers differed from the CPU because NVPTX compiled float32 division to
``div.full.f32`` and square root to ``sqrt.approx.f32``; ``jaxpmac/_samplers/_correctly_rounded.py``
now computes them in float64 on cuda. This script checks, with no GPU, that the PTX XLA's GPU
compiler makes for each golden case (``tests/golden_values.py``) has no float instruction whose
result can differ from IEEE round-to-nearest arithmetic.

Usage (from the repository root, with a Python >= 3.12 venv holding jax 0.12 and the CUDA
plugin, set up as in ``benchmarks/deviceless.py``'s docstring)::

    /tmp/dl-cuda/bin/python benchmarks/deviceless_ptx_audit.py                 # every case
    /tmp/dl-cuda/bin/python benchmarks/deviceless_ptx_audit.py normal/float32 gamma/a=0.3/float32
    /tmp/dl-cuda/bin/python benchmarks/deviceless_ptx_audit.py --jobs 2 --write
    /tmp/dl-cuda/bin/python benchmarks/deviceless_ptx_audit.py --keep-ptx /tmp/ptx normal/float32

Each case is compiled in a child process of its own (``--timeout`` seconds at most, ``--jobs``
at a time) with ``JAX_PLATFORMS=cpu`` and ``XLA_FLAGS="--xla_dump_to=DIR
--xla_dump_emitter_re=.*"`` (XLA reads its flags when its backend starts, so one process per dump
folder), lowered with ``lowering_platforms=("cuda",)`` for the H100 described by
``benchmarks/deviceless_h100.pbtxt`` (``/work/shared/deviceless/h100.pbtxt`` if the repository's
copy is missing). The parent then reads every ``*.ptx`` file in DIR and counts, per case:

- ``approx``: any ``*.approx.*`` instruction (``div``, ``sqrt``, ``rsqrt``, ``rcp``, ``ex2``,
  ``lg2``, ``sin``, ``cos``, ``tanh``);
- ``div.full``: ``div.full.f32`` (documented as approximate, up to 2 ulp);
- ``fma/mad``: ``fma.*`` and ``mad.*`` on f16/bf16/f32/f64 (a fused multiply-add: one rounding
  where the CPU rounds twice);
- ``ftz``: any float instruction with ``.ftz`` (subnormal inputs or results flushed to zero);
- ``directed``: ``add/sub/mul/div/sqrt/rcp/fma`` rounded ``.rz``, ``.rm`` or ``.rp``;
- ``unrounded``: float ``add/sub/mul`` with no rounding modifier, which ptxas may contract into
  an fma (LLVM writes ``.rn`` where contraction is not allowed);
- for context, not flagged: ``div.rn``, ``sqrt.rn`` and ``rcp.rn`` (correctly rounded), and the
  number of kernels (``.entry``).

It also lists, per case, what the PTX cannot show: the optimized HLO's ``custom-call`` targets
(cuBLAS, cuSOLVER, ...), ``dot`` and ``convolution`` instructions (library code).

It prints a Markdown table; the exit status is 0 if all is clean, else the sum of 1 (a case has a
flagged instruction: every column but the context ones), 2 (a case failed to compile) and 4 (a
case has work outside the PTX). ``--write`` also
rewrites ``benchmarks/results/deviceless/float_ops.md``. These are compiler outputs: nothing
runs on a GPU, and ptxas's SASS is not examined.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))   # run as a script: benchmarks/ is on the path, not the root
from benchmarks._compiler_dumps import INSTRUCTION  # noqa: E402
OUT_FILE = REPO_ROOT / "benchmarks" / "results" / "deviceless" / "float_ops.md"
SHARED_DESCRIPTION = pathlib.Path("/work/shared/deviceless/h100.pbtxt")
REPO_DESCRIPTION = REPO_ROOT / "benchmarks" / "deviceless_h100.pbtxt"

# Flagged columns first, then context columns.
FLAGGED = ("approx", "div.full", "fma/mad", "ftz", "directed", "unrounded")
CONTEXT = ("div.rn", "sqrt.rn", "rcp.rn")
FLOAT_TYPE = re.compile(r"\.(?:bf16x2|bf16|f16x2|f16|f32|f64)$")


def h100_description() -> pathlib.Path:
    """The H100 target description: the repository's copy, else the shared one."""
    if REPO_DESCRIPTION.exists():
        return REPO_DESCRIPTION
    if SHARED_DESCRIPTION.exists():
        return SHARED_DESCRIPTION
    raise SystemExit(f"no H100 description: neither {REPO_DESCRIPTION} nor {SHARED_DESCRIPTION}")


# --------------------------------------------------------------------------------------------
# Child: compile one case for the H100 (XLA_FLAGS with the dump folder set by the parent)
# --------------------------------------------------------------------------------------------

def compile_case(name: str) -> dict:
    """Compile golden case ``name`` for the described H100; the PTX lands in XLA's dump folder."""
    os.environ["JAX_PLATFORMS"] = "cpu"          # before jax is imported
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    sys.path.insert(0, str(REPO_ROOT))
    import jax
    from jax.experimental import topologies
    from golden_values import CASES, ROOT

    topology = topologies.get_topology_desc(
        platform="cuda", target_config=h100_description().read_text(), topology="1x1x1")
    sharding = jax.sharding.SingleDeviceSharding(topology.devices[0])
    case = next(c for c in CASES if c.name == name)
    state = ROOT.split_static(case.name)
    t0 = time.perf_counter()
    with jax.enable_x64(case.x64):
        spec = jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), state)
        lowered = (jax.jit(case.draw, out_shardings=sharding).trace(spec)
                   .lower(lowering_platforms=("cuda",)))
        lowered.compile()
    return dict(case=name, compile_s=round(time.perf_counter() - t0, 2))


# --------------------------------------------------------------------------------------------
# Parent: count float instructions in the PTX
# --------------------------------------------------------------------------------------------

def classify(opcode: str) -> list[str]:
    """The audit columns an opcode (``div.rn.f64``, ``fma.rn.f32``, ...) counts in."""
    parts = opcode.split(".")
    base, modifiers = parts[0], set(parts[1:])
    is_float = bool(FLOAT_TYPE.search(opcode))
    columns = []
    if "approx" in modifiers:
        columns.append("approx")
    if opcode == "div.full.f32":
        columns.append("div.full")
    if base in ("fma", "mad") and is_float:
        columns.append("fma/mad")
    if "ftz" in modifiers and is_float:
        columns.append("ftz")
    if base in ("add", "sub", "mul", "div", "sqrt", "rcp", "fma", "mad") and is_float:
        if modifiers & {"rz", "rm", "rp"}:
            columns.append("directed")
        if base in ("add", "sub", "mul") and not modifiers & {"rn", "rz", "rm", "rp"}:
            columns.append("unrounded")
        if base in ("div", "sqrt", "rcp") and "rn" in modifiers:
            columns.append(f"{base}.rn")
    return columns


def audit_ptx(folder: pathlib.Path) -> dict:
    """Counts per column, flagged opcodes with their counts, kernels and PTX files in ``folder``."""
    counts = collections.Counter({column: 0 for column in FLAGGED + CONTEXT})
    flagged = collections.Counter()
    context = collections.Counter()
    kernels = files = 0
    for path in sorted(folder.rglob("*.ptx")):
        files += 1
        for line in path.read_text(errors="replace").splitlines():
            line = line.split("//", 1)[0]
            if ".entry" in line:
                kernels += 1
            match = INSTRUCTION.match(line)
            if not match:
                continue
            opcode = match.group(1)
            columns = classify(opcode)
            for column in columns:
                counts[column] += 1
            if any(column in FLAGGED for column in columns):
                flagged[opcode] += 1
            elif columns:
                context[opcode] += 1
    calls = collections.Counter()
    for path in sorted(folder.rglob("*gpu_after_optimizations.txt")):
        text = path.read_text(errors="replace")
        calls.update(f"custom-call {target}" for target in
                     re.findall(r'custom-call\(.*?custom_call_target="([^"]+)"', text))
        calls.update(op for op in re.findall(r"= [^=]*?\b(dot|convolution)\(", text))
    return dict(counts=dict(counts), flagged=dict(flagged), context=dict(context),
                kernels=kernels, ptx_files=files, calls=dict(calls))


def run_case(name: str, timeout: float, keep: pathlib.Path | None) -> dict:
    """Compile ``name`` in a child process with the PTX dumped to a fresh folder; audit it."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ptx-audit-"))
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                        f" --xla_dump_to={folder} --xla_dump_emitter_re=.*").strip()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    t0 = time.perf_counter()
    result = dict(case=name)
    try:
        child = subprocess.run([sys.executable, __file__, "--child", name], env=env,
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
        if child.returncode != 0:
            tail = (child.stderr.strip().splitlines() or ["?"])[-1]
            result["error"] = f"exit {child.returncode}: {tail[:300]}"
        else:
            result.update(json.loads(child.stdout.strip().splitlines()[-1]))
    except subprocess.TimeoutExpired:
        result["error"] = f"timeout after {timeout:g} s"
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    if "error" not in result:
        result.update(audit_ptx(folder))
        if result["ptx_files"] == 0:
            result["error"] = "no *.ptx file dumped"
    if keep is not None:
        target = keep / name.replace("/", "_")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(folder, target)
    shutil.rmtree(folder, ignore_errors=True)
    return result


def is_flagged(result: dict) -> bool:
    return any(result.get("counts", {}).get(column, 0) for column in FLAGGED)


def table(results: list[dict]) -> str:
    """The Markdown table: one row per case; flagged non-zero counts in bold."""
    header = ["case", "kernels", *FLAGGED, *CONTEXT, "flagged instructions", "outside the PTX"]
    lines = ["| " + " | ".join(f"`{h}`" if h in FLAGGED + CONTEXT else h for h in header) + " |",
             "|---|" + "---:|" * (1 + len(FLAGGED) + len(CONTEXT)) + "---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['case']} | " + " | ".join(["-"] * (1 + len(FLAGGED) + len(CONTEXT)))
                         + f" | **{r['error']}** | - |")
            continue
        c = r["counts"]
        cells = [str(r["kernels"])]
        cells += [f"**{c[k]}**" if c[k] else "0" for k in FLAGGED]
        cells += [str(c[k]) for k in CONTEXT]
        names = ", ".join(f"`{op}` {n}" for op, n in sorted(r["flagged"].items())) or "-"
        calls = ", ".join(f"**{op}** {n}" for op, n in sorted(r["calls"].items())) or "-"
        lines.append(f"| {r['case']} | " + " | ".join(cells) + f" | {names} | {calls} |")
    return "\n".join(lines)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True).stdout.strip()


def source_state() -> str:
    """HEAD and the uncommitted changes under ``jaxpmac/``: what the children compile."""
    return git("rev-parse", "HEAD") + "\n" + git("diff", "HEAD", "--", "jaxpmac") + \
        git("status", "--porcelain", "--", "jaxpmac")


def versions() -> str:
    from importlib import metadata

    found = []
    for package in ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt"):
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def write_markdown(results: list[dict], command: str, wall_s: float, jobs: int,
                   changed: bool) -> None:
    commit = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--", "jaxpmac")
    dirty_text = ("the working tree had uncommitted changes under `jaxpmac/`: "
                  + ", ".join(f"`{line[3:]}`" for line in dirty.splitlines())
                  if dirty else "no uncommitted changes under `jaxpmac/`")
    if changed:
        dirty_text += ("; **`jaxpmac/` or HEAD changed while this ran**: earlier cases may have "
                       "compiled other sources, rerun")
    flagged = [r for r in results if is_flagged(r)]
    failed = [r for r in results if "error" in r]
    context_ops = collections.Counter()
    for r in results:
        context_ops.update(r.get("context", {}))
    if flagged:
        verdict = (f"**{len(flagged)} of {len(results)} cases have flagged instructions**: "
                   + "; ".join(f"{r['case']} (" + ", ".join(
                       f"`{op}` {n}" for op, n in sorted(r["flagged"].items())) + ")"
                       for r in flagged) + ".")
    else:
        verdict = (f"**No flagged instruction in any of the {len(results) - len(failed)} cases "
                   "compiled**: no approximate division, square root, reciprocal or "
                   "transcendental, no `div.full.f32`, no float fma/mad, no `.ftz`, no directed "
                   "rounding, and every float add/sub/mul carries `.rn`.")
    if failed:
        verdict += (f" {len(failed)} case(s) did not compile: "
                    + ", ".join(f"{r['case']} ({r['error']})" for r in failed) + ".")
    context_text = ", ".join(f"`{op}` {n}" for op, n in sorted(context_ops.items())) or "none"
    text = f"""# Float instructions in the H100 PTX of every golden program (deviceless)

{datetime.date.today().isoformat()}, {versions()}. jaxpmac {commit} ({dirty_text}).
**Compiler outputs only, no GPU run**: XLA's real GPU compiler (the CUDA plugin) targeting an
H100 (sm_90a, `benchmarks/deviceless_h100.pbtxt`) on a CPU-only machine. ptxas's SASS and the
hardware's results are not examined.

Why: a real H200 run on 2026-11-26 (`benchmarks/gpu_check.sh`) found float32 sampler values
differing from the CPU's, because NVPTX compiled float32 division to `div.full.f32` and square
root to `sqrt.approx.f32` (and LLVM merged `1 / sqrt` into `rsqrt.approx.f32`). The fix
(`jaxpmac/_samplers/_correctly_rounded.py`) computes float32 division and square root in float64
on cuda, with an integer identity around the divisor and the result so that neither LLVM nor
XLA can narrow them back.
This file supersedes its previous content (2026-11-25, jaxpmac bd20981: eleven hand-picked
programs compiled before the fix, which found those approximate instructions; see git history).
Since 2026-11-28 the elementary functions' products carry no integer guard against fused
multiply-adds on cuda (`_fixed_math.unfused`): this audit's `fma/mad` and `unrounded` columns
are what show that XLA's CUDA backend rounds each product and addition on its own.

## Method

Each of the {len(results)} cases of `tests/golden_values.py` (`case.draw` of its golden state,
x64 as the case says) is jitted, lowered with `lowering_platforms=("cuda",)` and compiled for the
described H100 in a child process of its own, with
`XLA_FLAGS="--xla_dump_to=DIR --xla_dump_emitter_re=.*"` and a fresh DIR per case. Every
instruction in all `*.ptx` files of DIR (all kernels, libdevice functions included) is counted:
`approx` = any `*.approx.*`; `div.full` = `div.full.f32`; `fma/mad` = `fma`/`mad` on
f16/bf16/f32/f64 (a fused multiply-add); `ftz` = float ops with `.ftz`; `directed` = float
add/sub/mul/div/sqrt/rcp/fma rounded `.rz/.rm/.rp`; `unrounded` = float add/sub/mul without a
rounding modifier (ptxas may contract those into an fma). All six are flagged (the script exits
non-zero). `div.rn`, `sqrt.rn`, `rcp.rn` (correctly rounded) are counted for context. XLA
unrolls elementwise loops, so one operation of the program may appear several times. "outside
the PTX" lists the optimized HLO's `custom-call`s (e.g. cuBLAS, cuSOLVER), `dot`s and
`convolution`s: library code this audit cannot see (exit status 4 if any).

```bash
{command}
```

{jobs} compile(s) at a time; {wall_s / 60:.1f} minutes wall time on this 2-core machine.

## Result

{verdict}

Correctly rounded instructions, all cases together: {context_text}.

{table(results)}
"""
    OUT_FILE.parent.mkdir(parents=True, exist_ok=True)
    OUT_FILE.write_text(text)
    print(f"wrote {OUT_FILE}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="golden case names (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="compiles at a time (default 2)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds per case before its compile is stopped (default 900)")
    parser.add_argument("--write", action="store_true",
                        help=f"rewrite {OUT_FILE.relative_to(REPO_ROOT)}")
    parser.add_argument("--keep-ptx", type=pathlib.Path, metavar="DIR",
                        help="keep each case's dump folder as DIR/<case with / as _>")
    parser.add_argument("--json", action="store_true", help="also print each result as JSON")
    parser.add_argument("--child", metavar="CASE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(compile_case(args.child)))
        return 0

    # Case names only: jax on the CPU, no GPU compile here (the dump flags are the children's).
    os.environ["JAX_PLATFORMS"] = "cpu"
    parent_flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = re.sub(r"--xla_dump_\w+=\S*", "", parent_flags).strip()
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    sys.path.insert(0, str(REPO_ROOT))
    from golden_values import CASES

    known = [case.name for case in CASES]
    unknown = [name for name in args.cases if name not in known]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    names = args.cases or known
    if args.keep_ptx:
        args.keep_ptx.mkdir(parents=True, exist_ok=True)
    print(f"auditing {len(names)} case(s), {args.jobs} at a time, H100 from "
          f"{h100_description()}", file=sys.stderr)
    t0 = time.perf_counter()
    state_before = source_state()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_case, name, args.timeout, args.keep_ptx): name
                   for name in names}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            r = future.result()
            results[r["case"]] = r
            status = r.get("error") or ("FLAGGED " + ", ".join(
                f"{op} {n}" for op, n in sorted(r["flagged"].items())) if is_flagged(r) else "ok")
            print(f"[{done}/{len(names)}] {r['case']}: {r['wall_s']} s, {status}",
                  file=sys.stderr, flush=True)
            if args.json:
                print(json.dumps(r), file=sys.stderr)
    wall_s = time.perf_counter() - t0
    changed = source_state() != state_before
    if changed:
        print("warning: HEAD or jaxpmac/ changed during the run; rerun", file=sys.stderr)
    ordered = [results[name] for name in names]
    print(table(ordered))
    print(f"\n{len(ordered)} case(s) in {wall_s:.0f} s", file=sys.stderr)
    if args.write:
        command = ("cd /work/main && " if REPO_ROOT == pathlib.Path("/work/main") else "") + \
            (f"XLA_FLAGS={shlex.quote(os.environ['XLA_FLAGS'])} " if os.environ["XLA_FLAGS"]
             else "") + \
            shlex.join([sys.executable, "benchmarks/deviceless_ptx_audit.py", *sys.argv[1:]])
        write_markdown(ordered, command, wall_s, args.jobs, changed)
    flagged = any(is_flagged(r) for r in ordered)
    failed = any("error" in r for r in ordered)
    outside = any(r.get("calls") for r in ordered)
    return (1 if flagged else 0) | (2 if failed else 0) | (4 if outside else 0)


if __name__ == "__main__":
    sys.exit(main())
