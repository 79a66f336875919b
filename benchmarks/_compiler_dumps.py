"""What XLA's accelerator compilers dump, read back: the H100's PTX and libtpu's static profile.

Two yardsticks of a program's arithmetic that need no accelerator (``benchmarks/deviceless.py``
compiles for a described H100 and TPU v5e on a CPU):

- **ALU instructions per value** in the main GPU kernel, from the PTX that XLA's GPU compiler
  writes with ``XLA_FLAGS="--xla_dump_to=DIR --xla_dump_emitter_re=.*"``. The main kernel is the
  fusion with the most output elements in the optimized HLO dumped beside it (the one that runs
  on the most threads). Its instructions are counted once each, as written (a kernel's code, not
  a trace of it), data movement and control flow (``ld``, ``st``, ``mov``, ``cvta``, ``bra``,
  ``ret``, barriers) as zero, and a 64-bit integer ``add``, ``sub``, ``xor``, ``or``, ``and``,
  ``not``, ``neg`` or shift as two: a GPU runs it on 32-bit registers. A value is 4 bytes that
  the kernel stores to global memory, so a thread that stores a ``v4.u32`` has made 4 values.
  Where a draw is a kernel of its own and its consumer another (both store as many values), the
  main kernel is the consumer, so the count over **all kernels** is given too: each kernel's
  instructions times its threads (its fusion's output bytes over the bytes a thread stores),
  summed, per value of the main kernel's output.
- **Estimated TPU cycles**: the sum of ``estimated_cycles`` over the ops of libtpu's static LLO
  profile, written with ``LIBTPU_INIT_ARGS="--xla_jf_dump_to=DIR
  --xla_jf_dump_static_llo_profile_to=DIR/prof"``; fusions and Mosaic (Pallas) kernels alike.
  The compiler's estimate of the chip's work, not a measurement.

Both flags are read when the compiler's backend starts, so each compile needs a process of its
own with its own folder (:func:`dump_environment`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import re
from typing import Iterator, Mapping, Optional

#: An instruction line of PTX: an optional predicate guard, then the opcode and its modifiers
#: (``@%p1 st.global.v4.u32``: ``st.global.v4.u32``).
INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)\b")
#: Opcodes that move data or steer control: no ALU work.
NO_ALU = frozenset({"ld", "st", "mov", "cvta", "bra", "ret", "exit", "bar", "membar",
                    "griddepcontrol"})
#: Integer opcodes that a GPU runs twice on a 64-bit operand (two 32-bit halves).
TWICE_ON_64_BITS = frozenset({"add", "sub", "xor", "or", "and", "not", "neg", "shl", "shr"})
#: A kernel: ``.entry NAME(params) [directives] { body }`` up to the closing brace at a line's
#: start.
_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\((.*?)\)[^{]*\{(.*?)\n\}", re.S)
#: A fusion in optimized HLO text, with its result type(s).
_FUSION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = (.*?) fusion\(", re.M)
_ARRAY_TYPE = re.compile(r"\b([a-z]+)(\d*)\[([\d,]*)\]")
_PROFILED_OP = re.compile(r'hlo_op_name: "([^"]+)"\s+estimated_cycles: (\d+)')


@dataclasses.dataclass(frozen=True)
class Kernel:
    """One PTX kernel's static counts.

    Attributes:
        name: its ``.entry`` name (an HLO fusion's name with ``.`` and ``-`` as ``_``).
        alu: ALU instructions, 64-bit integer ones counted twice.
        stored_bytes: bytes its stores to global memory write, per thread.
    """

    name: str
    alu: int
    stored_bytes: int


def ptx_kernels(ptx: str) -> Iterator[Kernel]:
    """The kernels of one PTX file, counted."""
    for entry in _ENTRY.finditer(ptx):
        alu = stored = 0
        for line in entry.group(3).splitlines():
            match = INSTRUCTION.match(line.split("//", 1)[0])
            if match is None:
                continue
            opcode, *modifiers = match.group(1).split(".")
            if opcode == "st" and "global" in modifiers:
                stored += _store_bytes(modifiers)
            if opcode in NO_ALU:
                continue
            on_64_bits = any(m[1:] == "64" and m[0] in "bsu" for m in modifiers)
            alu += 2 if opcode in TWICE_ON_64_BITS and on_64_bits else 1
        yield Kernel(entry.group(1), alu, stored)


def _store_bytes(modifiers) -> int:
    """Bytes one ``st`` writes: its vector length (``v2``, ``v4``) times its type's width."""
    vector = next((int(m[1:]) for m in modifiers if re.fullmatch(r"v\d", m)), 1)
    width = next((int(m[1:]) for m in reversed(modifiers) if re.fullmatch(r"[bsuf]\d+", m)), 32)
    return vector * width // 8


def fusion_outputs(hlo: str) -> dict[str, tuple[int, int]]:
    """``(elements, bytes)`` of each fusion's output in optimized HLO text, by its PTX kernel
    name (``pred`` is a byte; ``u32`` four)."""
    outputs = {}
    for fusion in _FUSION.finditer(hlo):
        elements = size = 0
        for _, bits, dims in _ARRAY_TYPE.findall(fusion.group(2)):
            count = math.prod(int(d) for d in dims.split(",") if d)
            elements += count
            size += count * (int(bits) // 8 if bits else 1)
        outputs[re.sub(r"[.\-]", "_", fusion.group(1))] = (elements, size)
    return outputs


def gpu_kernel_counts(folder: pathlib.Path) -> Optional[dict]:
    """``kernels``, ``main_kernel``, its ``alu_per_value`` and ``alu_per_value_all`` (every
    kernel's) from a GPU dump folder; None where it holds no kernel."""
    folder = pathlib.Path(folder)
    kernels = [k for path in sorted(folder.rglob("*.ptx")) for k in ptx_kernels(path.read_text())]
    if not kernels:
        return None
    outputs = {}
    for path in sorted(folder.rglob("*after_optimizations.txt")):
        outputs.update(fusion_outputs(path.read_text()))
    main = max(kernels, key=lambda k: (outputs.get(k.name, (0, 0))[0], k.stored_bytes, k.alu))
    # Threads of a kernel: its output's bytes over what one thread stores (one thread where
    # either is unknown: the nonce hash's scalar kernels).
    work = sum(k.alu * max(outputs.get(k.name, (0, 0))[1] // max(k.stored_bytes, 1), 1)
               for k in kernels)
    main_values = outputs.get(main.name, (0, 0))[1] / 4
    return dict(kernels=len(kernels), main_kernel=main.name,
                alu_per_value=round(main.alu / max(main.stored_bytes / 4, 1), 1),
                alu_per_value_all=round(work / main_values, 1) if main_values else None)


def tpu_estimated_cycles(folder: pathlib.Path) -> Optional[int]:
    """The sum of ``estimated_cycles`` in a TPU dump folder's static LLO profile (``prof/``);
    None where there is none."""
    profile = pathlib.Path(folder) / "prof"
    cycles = [int(c) for path in sorted(profile.glob("*")) if path.is_file()
              for _, c in _PROFILED_OP.findall(path.read_text(errors="replace"))]
    return sum(cycles) if cycles else None


def dump_environment(target: str, folder: pathlib.Path,
                     environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the flags that make ``target``'s compiler (``cuda`` or ``tpu``) dump
    what :func:`gpu_kernel_counts` or :func:`tpu_estimated_cycles` reads into ``folder``."""
    env = dict(environ)
    if target == "cuda":
        env["XLA_FLAGS"] = " ".join(filter(None, (
            environ.get("XLA_FLAGS"), f"--xla_dump_to={folder}", "--xla_dump_emitter_re=.*")))
    elif target == "tpu":
        env["LIBTPU_INIT_ARGS"] = " ".join(filter(None, (
            environ.get("LIBTPU_INIT_ARGS"), f"--xla_jf_dump_to={folder}",
            f"--xla_jf_dump_static_llo_profile_to={os.path.join(folder, 'prof')}")))
        # With its dumps on, libtpu type-checks every LLO pass; a check that fails (it rejects
        # an int add on a bitcast float, which it compiles without dumps) is logged again and
        # again into /tmp/tpu_logs, over 100 MB a second, until the disk is full.
        env["TPU_LOG_DIR"] = "disabled"
    return env


def dump_counts(target: str, folder: pathlib.Path) -> dict:
    """What ``target``'s dump in ``folder`` tells: ``kernels``, ``main_kernel``,
    ``alu_per_value`` and ``alu_per_value_all`` (cuda), or ``tpu_cycles`` (tpu); None for what it
    does not hold."""
    if target == "cuda":
        return gpu_kernel_counts(folder) or dict(kernels=None, main_kernel=None,
                                                 alu_per_value=None, alu_per_value_all=None)
    return dict(tpu_cycles=tpu_estimated_cycles(folder))
