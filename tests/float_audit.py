"""A static audit of a compiled CPU program's float arithmetic: every place where the program's
values could depend on the instruction set XLA compiles for (``--xla_cpu_max_isa``), a GPU, or
the compiler's mood.

Three kinds of finding, read from the optimised HLO (what XLA's code generators see):

* ``contraction``: a float ``add``/``subtract`` with a ``multiply`` operand (through ``negate``
  and float-to-float ``convert``), in one computation: LLVM fuses the two into one fused
  multiply-add where the target has one (x86 with FMA, every GPU), rounding once instead of
  twice. Safe, and so not reported: a multiply by a power of two or by zero (exact), and an
  addition of a product and a zero made by a multiply by zero (the product rounded alone,
  ``_fixed_math.rounded``).
* ``xla_math``: one of XLA's own approximations (``exponential``, ``log``, ``tanh``...), whose
  code differs by instruction set.
* ``reduction``: a float ``reduce``, ``dot`` or ``custom-call`` (LAPACK): the order of its
  additions follows the vector width.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
_NUMPY_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
XLA_MATH = {"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "erf",
            "rsqrt", "power", "sine", "cosine", "tan", "atan2", "cbrt", "logistic"}
NARROW_TYPES = ("f16", "bf16")
# Rounded operations: a target with native float16 arithmetic (AVX512-FP16, GPUs) rounds each
# to float16, others compute in float32 and XLA may skip roundings (excess precision).
NARROW_ARITHMETIC = {"add", "subtract", "multiply", "divide", "sqrt", "power", *XLA_MATH}
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*(?P<type>\([^)]*\)|\S+)\s+"
    r"(?P<op>[\w\-]+)\((?P<args>.*?)\)(?P<rest>.*)$")
_OPERAND = re.compile(r"%([\w.\-]+)")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CONSTANT = re.compile(r"constant\((?P<value>[^)]*)\)")
_HEADER = re.compile(r"^(?:ENTRY\s+)?%([\w.\-]+)\s.*\{\s*$")
_TO_APPLY = re.compile(r"to_apply=%([\w.\-]+)")
_FRAME = re.compile(r"stack_frame_id=(\d+)")
_TABLE_ROW = re.compile(r'^(\d+) (?:"(?P<text>[^"]*)"|\{(?P<fields>[^}]*)\})$')


@dataclasses.dataclass(frozen=True)
class Finding:
    kind: str           # "contraction", "xla_math" or "reduction"
    opcode: str
    dtype: str
    where: str          # the innermost source line: "jaxpmac/_samplers/_unit.py:41 (function)"

    def __str__(self):
        return f"{self.kind}: {self.opcode} {self.dtype} at {self.where}"


@dataclasses.dataclass
class _Instruction:
    name: str
    dtype: str
    op: str
    operands: list
    line: str

    def where(self, frames) -> str:
        found = _FRAME.search(self.line)
        if found and int(found.group(1)) in frames:
            return frames[int(found.group(1))]
        found = _OP_NAME.search(self.line)
        return found.group(1) if found else "?"


def _source_lines(hlo_text: str) -> dict:
    """stack_frame_id -> "path:line (function)" from the module's stack frame tables."""
    tables, section = {}, None
    for line in hlo_text.splitlines():
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = tables.setdefault(line, {})
            continue
        row = _TABLE_ROW.match(line)
        if section is None or not row:
            section = None if not row else section
            continue
        if row.group("text") is not None:
            section[int(row.group(1))] = row.group("text")
        else:
            section[int(row.group(1))] = dict(
                (k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", row.group("fields")))
    files, functions = tables.get("FileNames", {}), tables.get("FunctionNames", {})
    locations, frames = tables.get("FileLocations", {}), tables.get("StackFrames", {})
    named = {}
    for frame_id, frame in frames.items():
        location = locations.get(frame["file_location_id"], {})
        path = files.get(location.get("file_name_id"), "?")
        path = path[path.find("jaxpmac/"):] if "jaxpmac/" in path else path
        named[frame_id] = (f"{path}:{location.get('line')} "
                           f"({functions.get(location.get('function_name_id'), '?')})")
    return named


def _computations(hlo_text: str) -> dict:
    """Each computation's name -> its instructions as a name -> _Instruction dict."""
    computations, current = {}, {}
    for line in hlo_text.splitlines():
        header = _HEADER.match(line)
        if header:
            current = computations.setdefault(header.group(1), {})
            continue
        found = _INSTRUCTION.match(line)
        if found:
            dtype = found.group("type").lstrip("(").split("[")[0]
            operands = _OPERAND.findall(found.group("args"))
            current[found.group("name")] = _Instruction(
                found.group("name"), dtype, found.group("op"), operands, line)
    return computations


def _is_exact_reduction(instruction, computations) -> bool:
    """A reduction whose result does not depend on its order: a combiner without float
    arithmetic (max, min, argmax's compare and select), or a custom call that only compares
    (``TopK``)."""
    if instruction.op == "custom-call":
        return 'custom_call_target="TopK"' in instruction.line
    found = _TO_APPLY.search(instruction.line)
    if not found or found.group(1) not in computations:
        return False
    return not any(i.op in ("add", "subtract", "multiply", "divide") and i.dtype in FLOAT_TYPES
                   for i in computations[found.group(1)].values())


def _constant_value(instruction, table):
    """The scalar value of a constant (or a broadcast of one), else None."""
    while instruction is not None and instruction.op in _LAYOUT:
        if not instruction.operands:
            return None
        instruction = table.get(instruction.operands[0])
    if instruction is None or instruction.op != "constant":
        return None
    found = _CONSTANT.search(instruction.line)
    try:
        value = float(found.group("value")) if found else None
    except ValueError:
        return None
    # HLO prints a constant's shortest decimal in its own type: read it back in that type.
    return None if value is None else float(_NUMPY_TYPES.get(instruction.dtype, float)(value))


def _exact_factor(value) -> bool:
    if value is None or not np.isfinite(value):
        return False
    if value == 0:
        return True
    mantissa, _ = np.frexp(abs(value))
    return mantissa == 0.5


_LAYOUT = ("broadcast", "bitcast", "reshape", "copy", "transpose", "slice")


def _see_through(instruction, table):
    """The instruction under any negate, float-to-float convert and change of layout (in a
    fused loop, one value computed and read at several indices)."""
    while instruction is not None and instruction.op in ("negate", "convert", *_LAYOUT) \
            and instruction.operands:
        inner = table.get(instruction.operands[0])
        if inner is None or (instruction.op == "convert" and inner.dtype not in FLOAT_TYPES):
            return instruction
        instruction = inner
    return instruction


def _is_zero_product(instruction, table) -> bool:
    instruction = _see_through(instruction, table)
    return (instruction is not None and instruction.op == "multiply"
            and any(_constant_value(table.get(o), table) == 0 for o in instruction.operands))


def _is_inexact_product(instruction, table) -> bool:
    instruction = _see_through(instruction, table)
    if instruction is None or instruction.op != "multiply":
        return False
    return not any(_exact_factor(_constant_value(table.get(o), table))
                   for o in instruction.operands)


def audit(hlo_text: str) -> list[Finding]:
    """Every finding in an optimised HLO module's text (``compiled.as_text()``)."""
    findings, frames = [], _source_lines(hlo_text)
    computations = _computations(hlo_text)
    for table in computations.values():
        for instruction in table.values():
            if instruction.dtype not in FLOAT_TYPES:
                continue
            kind = None
            if instruction.op in XLA_MATH:
                kind = "xla_math"
            elif instruction.op in ("reduce", "dot", "custom-call", "reduce-window",
                                    "convolution", "scatter", "select-and-scatter"):
                if not _is_exact_reduction(instruction, computations):
                    kind = "reduction"
            elif instruction.dtype in NARROW_TYPES and instruction.op in NARROW_ARITHMETIC:
                kind = "narrow"
            elif instruction.op in ("add", "subtract"):
                operands = [table.get(o) for o in instruction.operands]
                if not any(_is_zero_product(o, table) for o in operands) and any(
                        _is_inexact_product(o, table) for o in operands):
                    kind = "contraction"
            if kind:
                findings.append(Finding(kind, instruction.op, instruction.dtype,
                                        instruction.where(frames)))
    return findings
