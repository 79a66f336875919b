"""The flat equation table of a randomized function's jaxpr, and Hail's static site bits.

One row per equation across all nested jaxprs, in pre-order (an equation, then the equations of
its sub-jaxprs, then the next equation): "equation order" with nested bodies in place. Columns
are filled by sweeps over the rows, never by recursion with hidden state:

* ``parent``/``sub``/``index``: the row of the equation owning this row's jaxpr (-1: the top
  jaxpr), which of its sub-jaxprs (param order; ``while``: 0 cond, 1 body), and the position.
* ``kind``: ``draw`` (``draw_p``), ``loop`` (``scan``, ``while``: a dynamic uid per iteration),
  ``transparent`` (``cond``, ``jit``, ``custom_jvp_call``, ``custom_vjp_call``, ``checkpoint``,
  ``closed_call``, ``shard_map``: no structure of their own, see below), ``plain`` (no
  sub-jaxpr), ``unknown`` (any other primitive with a sub-jaxpr).
* ``uses_randomness``: bottom-up (reverse pre-order): a draw, or a row with such a descendant.
* ``scope``: the loop sub-jaxpr a row belongs to, ``(loop row, sub)``, ``(-1, 0)`` at top level;
  transparent containers are looked through.
* ``bits``: top-down, Hail's halving split. The random children of a scope -- the unnamed
  draws and random loops in it, in pre-order -- split its bit string: for ``n`` children the
  first ``n // 2`` get prefix ``0`` and the rest prefix ``1``, recursively, and a single child
  gets nothing (``split(5) = 00, 01, 10, 110, 111``). A random loop's children are its random
  sub-jaxprs (``while``: cond, body), split the same way.
* ``names``: a draw's ``name=`` (None: unnamed). A named draw takes no part in the split (nor
  does a loop holding only named draws): its static words are ``(NAMED_SITE_LABEL, name)``
  wherever it is, so other draws cannot move it, and it moves none of them. Two draws of one
  name are an error.

* ``shard_axes``: a draw in a ``shard_map`` (or ``pmap``) body: the manual axes over which
  its shards draw their windows of the global draw (:func:`shard_axes`).

Transparent containers are looked through because JAX itself treats them as the same program:
``vmap`` with a batched predicate inlines both branches of a ``cond`` (then ``select``\\ s), and
``jit``, ``checkpoint`` and custom derivatives do not change what a function computes. So a draw
gets the same site whichever way a ``cond`` is lowered and whether or not code is wrapped in
``jit``. ``vmap`` leaves no equation at all (its lanes are the draw's own uid operand).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import jax
import numpy as np
from jax.extend import core as jex

from jaxpmac._implicit._draw import draw_p, sampler
from jaxpmac._interop import _jaxpr_readers

LOOPS = frozenset({"scan", "while"})
TRANSPARENT = frozenset({"cond", "jit", "pjit", "custom_jvp_call", "custom_vjp_call",
                         "custom_vjp_call_jaxpr", "remat2", "checkpoint", "remat",
                         "closed_call", "core_call", "shard_map"})
#: ``shard_map`` (and ``pmap``, which jax traces as a ``shard_map``): transparent for the sites,
#: re-emitted by the evaluator with each draw's window of the stream (see :func:`shard_axes`).
SHARD_MAP = "shard_map"
#: The primitives by which JAX marks an invariant value as varying over manual axes.
VARYING_CASTS = frozenset({"pvary", "pcast"})
KINDS = ("plain", "draw", "loop", "transparent", "unknown")
MAX_INT_BITS = 63      # longer bit strings are spelled as a str label
#: The first static word of a named draw's site; its name is the second.
NAMED_SITE_LABEL = "jaxpmac.rand.name"


def sub_jaxprs(params) -> list[tuple[str, int, object]]:
    """``(param name, position in a tuple param or -1, jaxpr)`` for each sub-jaxpr, in param
    order; ``jaxpr`` is a ``ClosedJaxpr`` or an open ``Jaxpr``."""
    found = []
    for name, value in params.items():
        if isinstance(value, (jex.ClosedJaxpr, jex.Jaxpr)):
            found.append((name, -1, value))
        elif isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                if isinstance(item, (jex.ClosedJaxpr, jex.Jaxpr)):
                    found.append((name, i, item))
    return found


def open_jaxpr(jaxpr):
    return jaxpr.jaxpr if isinstance(jaxpr, jex.ClosedJaxpr) else jaxpr


@functools.lru_cache(maxsize=256)
def halving(n: int) -> tuple[str, ...]:
    """Hail's split of ``n`` children: ``halving(5) == ('00', '01', '10', '110', '111')``."""
    if n == 1:
        return ("",)
    first = n // 2
    return (tuple("0" + b for b in halving(first)) + tuple("1" + b for b in halving(n - first)))


def site_words(bits: str) -> tuple:
    """The static words of a bit string: one int, the bits after a leading 1 (``"" -> 1``,
    ``"0" -> 2``, ``"110" -> 14``); strings longer than 63 bits: the string itself as a label."""
    if len(bits) <= MAX_INT_BITS:
        return (int("1" + bits, 2),)
    return (bits,)


@dataclasses.dataclass
class Table:
    eqns: list                 # the JaxprEqn of each row
    parent: np.ndarray
    sub: np.ndarray
    index: np.ndarray
    kind: np.ndarray           # index into KINDS
    uses_randomness: np.ndarray
    scope_loop: np.ndarray     # the enclosing loop row (-1: none)
    scope_sub: np.ndarray      # which of its sub-jaxprs
    bits: list                 # unnamed draws and loops: their bit string; others ""
    scope_bits: dict           # (loop row, sub) -> bit string of that scope
    row_of: dict               # (parent, sub, index) -> row
    names: list                # draws: their name= (None: unnamed); others None
    keyed_loops: dict          # keyed draws: the enclosing loop rows their uid varies with
    shard_axes: dict           # draws in a shard_map: the manual axes they vary over
    shard_layouts: dict        # of those, the ones laid out as an output: its spec, per dim

    def static_words(self, row: int) -> tuple:
        """The static words of draw ``row``'s site."""
        if self.names[row] is not None:
            return (NAMED_SITE_LABEL, self.names[row])
        return site_words(self.bits[row])

    def path(self, row: int) -> tuple[tuple[int, int], ...]:
        steps = []
        while row != -1:
            steps.append((int(self.sub[row]), int(self.index[row])))
            row = int(self.parent[row])
        return tuple(reversed(steps))

    def loops_of(self, row: int) -> list[int]:
        """The loop rows enclosing ``row``, outermost first."""
        loops = []
        loop = int(self.scope_loop[row])
        while loop != -1:
            loops.append(loop)
            loop = int(self.scope_loop[loop])
        return list(reversed(loops))

    def draw_rows(self) -> list[int]:
        return [r for r in range(len(self.eqns)) if KINDS[self.kind[r]] == "draw"]


def _kind(eqn) -> str:
    if eqn.primitive is draw_p:
        return "draw"
    if not sub_jaxprs(eqn.params):
        return "plain"
    name = eqn.primitive.name
    if name in LOOPS:
        return "loop"
    if name in TRANSPARENT:
        return "transparent"
    return "unknown"


def build(jaxpr) -> Table:
    """The table of ``jaxpr`` (an open top-level ``Jaxpr``)."""
    # Sweep 1 (pre-order, explicit stack): rows and their structural columns.
    eqns, parent, sub, index, kind = [], [], [], [], []
    stack = [(-1, 0, jaxpr)]
    while stack:
        owner, sub_index, current = stack.pop()
        # Rows of one jaxpr are emitted with their own sub-jaxprs right after each of them, so
        # the stack holds "the rest of this jaxpr" below "the sub-jaxprs of this equation".
        if isinstance(current, tuple):          # a resumption: (jaxpr, start index)
            current, start = current
        else:
            start = 0
        for i in range(start, len(current.eqns)):
            eqn = current.eqns[i]
            row = len(eqns)
            eqns.append(eqn)
            parent.append(owner)
            sub.append(sub_index)
            index.append(i)
            kind.append(KINDS.index(_kind(eqn)))
            subs = sub_jaxprs(eqn.params)
            if subs:
                if i + 1 < len(current.eqns):
                    stack.append((owner, sub_index, (current, i + 1)))
                for s in reversed(range(len(subs))):
                    stack.append((row, s, open_jaxpr(subs[s][2])))
                break
    n = len(eqns)
    parent = np.array(parent, np.int64)
    sub = np.array(sub, np.int64)
    index = np.array(index, np.int64)
    kind = np.array(kind, np.int64)

    # Sweep 2 (reverse pre-order, children before parents): uses_randomness.
    uses = kind == KINDS.index("draw")
    for row in range(n - 1, -1, -1):
        if uses[row] and parent[row] != -1:
            uses[parent[row]] = True

    # Sweep 3 (pre-order): scopes; unknown higher-order primitives that use randomness fail.
    loop_kind, transparent_kind = KINDS.index("loop"), KINDS.index("transparent")
    scope_loop = np.full(n, -1, np.int64)
    scope_sub = np.zeros(n, np.int64)
    for row in range(n):
        if KINDS[kind[row]] == "unknown" and uses[row]:
            raise NotImplementedError(
                f"jaxpmac.randomized cannot elaborate the higher-order primitive "
                f"'{eqns[row].primitive.name}' (equation path {_path(parent, sub, index, row)}): "
                "its sub-jaxpr draws random numbers, and the pass knows no rule giving its "
                "draws distinct states. Supported: scan, while_loop, fori_loop, map, cond, "
                "switch, jit, checkpoint, custom_jvp, custom_vjp, shard_map, pmap (and vmap).")
        p = parent[row]
        if p == -1:
            continue
        if kind[p] == loop_kind:
            scope_loop[row], scope_sub[row] = p, sub[row]
        elif kind[p] == transparent_kind:
            scope_loop[row], scope_sub[row] = scope_loop[p], scope_sub[p]

    # Sweep 4 (pre-order): names, the random children of each scope, then bits top-down.
    names = [eqn.params.get("name") if kind[row] == KINDS.index("draw") else None
             for row, eqn in enumerate(eqns)]
    _check_unique_names(names, parent, sub, index, eqns)
    # Only unnamed draws are numbered, and only loops holding one take part in the split.
    numbered = (kind == KINDS.index("draw")) & np.array([name is None for name in names], bool)
    for row in range(n - 1, -1, -1):
        if numbered[row] and parent[row] != -1:
            numbered[parent[row]] = True
    is_item = numbered & ((kind == KINDS.index("draw")) | (kind == loop_kind))
    children: dict[tuple[int, int], list[int]] = {}
    position: dict[int, int] = {}
    for row in np.flatnonzero(is_item):
        siblings = children.setdefault((int(scope_loop[row]), int(scope_sub[row])), [])
        position[int(row)] = len(siblings)
        siblings.append(int(row))
    random_subs = {loop: sorted({s for (l, s) in children if l == loop})
                   for loop in np.flatnonzero(kind == loop_kind)}
    bits = [""] * n
    scope_bits = {(-1, 0): ""}
    for row in range(n):
        if not is_item[row]:
            continue
        scope = (int(scope_loop[row]), int(scope_sub[row]))
        siblings = children[scope]
        bits[row] = scope_bits[scope] + halving(len(siblings))[position[row]]
        if kind[row] == loop_kind:
            subs = random_subs[row]
            for s, suffix in zip(subs, halving(len(subs))):
                scope_bits[(row, s)] = bits[row] + suffix
    row_of = {(int(parent[r]), int(sub[r]), int(index[r])): r for r in range(n)}
    row_of_eqn = {id(eqn): row for row, eqn in enumerate(eqns)}
    keyed_loops = _keyed_loops(jaxpr, row_of_eqn)
    shard, layouts = shard_axes(eqns, parent, sub, index, uses, row_of_eqn)
    return Table(eqns, parent, sub, index, kind, uses, scope_loop, scope_sub, bits, scope_bits,
                 row_of, names, keyed_loops, shard, layouts)


def _keyed_loops(jaxpr, row_of_eqn: dict) -> dict:
    """For each keyed draw (``keyed_by``), the rows of the loops around it whose iterations its
    uid varies with: data flow from each loop's carried and scanned values (its constants do
    not vary with it), through every equation and sub-jaxpr."""
    found = {}

    def walk(jaxpr, varies: dict):
        def of(vs):
            return loops_varied(varies, vs)

        for eqn in jaxpr.eqns:
            row = row_of_eqn[id(eqn)]
            if eqn.primitive is draw_p and eqn.params["keyed"]:
                found[row] = frozenset(of([eqn.invars[-2]]))    # the uid, before the lanes
            for sub, operands, loop_inputs in dataflow_subs(eqn):
                inner = {}
                for position, v in enumerate(sub.invars):
                    inner[v] = of([operands[position]]) if position < len(operands) else set()
                    if position in loop_inputs:
                        inner[v] = inner[v] | {row}
                walk(sub, inner)
            for v in eqn.outvars:
                varies[v] = of(eqn.invars)
    walk(jaxpr, {})
    return found


def shard_axes(eqns, parent, sub, index, uses, row_of_eqn) -> tuple[dict, dict]:
    """For each draw inside a ``shard_map`` body: the manual mesh axes it varies over, in the
    mesh's axis order (docs/implicit.md, "shard_map and pmap"); and for each such draw (not
    under a vmap) whose value reaches an output of its own shape whose out_specs name exactly
    those axes: that spec, one tuple of axes per dimension of the draw (its layout).

    Under ``check_vma`` JAX's types say which shards must agree: a draw varies over the axes of
    the ``pvary`` casts its value (or a value computed from it) meets, and of the ``out_specs``
    of the outputs it reaches; over every other manual axis it is replicated. Without
    ``check_vma`` (``pmap``) there are no such types and a draw varies over all manual axes.
    A keyed draw (``keyed_by``) does not vary over the axes its uid varies over (by its type,
    or by data flow from the inputs the in_specs shard): the uid tells the shards apart, as it
    does vmap lanes. Data flow into sub-jaxprs is followed
    conservatively (every input of a sub-jaxpr depends on every operand of its equation)."""
    found, layouts = {}, {}
    for row, eqn in enumerate(eqns):
        if eqn.primitive.name != SHARD_MAP or not uses[row]:
            continue
        above = int(parent[row])
        while above != -1:
            if eqns[above].primitive.name == SHARD_MAP:
                raise NotImplementedError(
                    f"jaxpmac.randomized: a shard_map that draws keyless random numbers (equation "
                    f"path {_path(parent, sub, index, row)}) inside another shard_map "
                    f"({_path(parent, sub, index, above)}) is not supported; draw in the outer "
                    "shard_map and pass the values in, or use one shard_map over both axes.")
            above = int(parent[above])
        params = eqn.params
        order = tuple(params["mesh"].axis_names)
        manual = frozenset(params.get("newly_manual_axes") or params.get("axis_names") or order)
        body = open_jaxpr(params["jaxpr"])
        draws: dict[int, set] = {}
        leading: dict[int, tuple] = {}
        if params.get("check_vma", True):
            _vary_by_casts(body, row_of_eqn, params["out_specs"], draws)
        else:
            _collect_draws(body, row_of_eqn, draws, manual)
        _leading_axes(body, row_of_eqn, params["out_specs"], leading)
        shaped = _output_layouts(body, row_of_eqn, params["out_specs"])
        inputs_axes = _axes_from_inputs(body, params["in_specs"])
        for draw_row, axes in draws.items():
            axes = set(axes) & manual
            draw_params = eqns[draw_row].params
            if draw_params["keyed"]:
                uid = eqns[draw_row].invars[-2]
                axes -= _varying(uid) | inputs_axes.get(uid, set())
            if axes and not has_offset(draw_params["sampler"]):
                raise NotImplementedError(
                    f"jaxpmac.randomized: jaxpmac.rand.{draw_params['sampler']} at equation path "
                    f"{_path(parent, sub, index, draw_row)} draws inside a shard_map (or pmap) "
                    f"and varies over its axes {sorted(axes)}, but its sampler has no offset= "
                    "argument, which gives each shard its own window of the global draw. Draw "
                    "it outside the shard_map and pass the values in (sharded), use a sampler "
                    "with offset= (normal, uniform, bernoulli, randint, bits, exponential, ...), "
                    "or draw explicitly from state.split(jax.lax.axis_index(axis)).")
            # The shards' order: that of the leading entry of an output's out_specs the draw
            # reaches, where it names these axes (P(("y", "x"))); else the mesh's.
            if axes and set(leading.get(draw_row, ())) == axes:
                found[draw_row] = leading[draw_row]
            else:
                found[draw_row] = tuple(a for a in order if a in axes)
            layout = shaped.get(draw_row)
            # (Sharded on the leading dimension only, the window above is that block already.)
            if (axes and layout is not None and draw_params["batch_ndim"] == 0
                    and set().union(*layout) == axes and any(layout[1:])):
                layouts[draw_row] = layout
    return found, layouts


def _output_layouts(body, row_of_eqn, out_specs) -> dict:
    """draw row -> the out_specs, one tuple of axes per dimension, of the first output of
    ``body`` that the draw's value reaches and whose shape is the draw's."""
    taint = _taint(body, row_of_eqn, {}, on_cast=None)
    shapes = {}

    def draw_shapes(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive is draw_p:
                shapes[row_of_eqn[id(eqn)]] = tuple(eqn.outvars[0].aval.shape)
            for _, _, sub_jaxpr in sub_jaxprs(eqn.params):
                draw_shapes(open_jaxpr(sub_jaxpr))

    draw_shapes(body)
    found = {}
    for v, spec in zip(body.outvars, out_specs):
        if isinstance(v, jex.Literal) or spec is None:
            continue
        shape = tuple(v.aval.shape)
        entries = tuple(spec) + (None,) * (len(shape) - len(tuple(spec)))
        per_dim = tuple(() if e is None else tuple(e) if isinstance(e, (tuple, list)) else (e,)
                        for e in entries)
        for row in taint.get(v, ()):
            if shapes.get(row) == shape and any(per_dim):
                found.setdefault(row, per_dim)
    return found


@functools.lru_cache(maxsize=None)
def has_offset(sampler_name: str) -> bool:
    """Whether the explicit sampler takes ``offset=`` (a window of its stream)."""
    return "offset" in inspect.signature(sampler(sampler_name)).parameters


def _varying(v) -> frozenset:
    """The manual axes JAX's type says the value of ``v`` varies over (empty if it does not
    say: no ``check_vma``, or a jax that spells it otherwise)."""
    manual_type = getattr(getattr(v, "aval", None), "manual_axis_type", None)
    return frozenset(getattr(manual_type, "varying", None) or ())


def varying_value(x) -> frozenset:
    """The manual axes a traced value varies over, by its type (empty where JAX does not say)."""
    manual_type = getattr(jax.typeof(x), "manual_axis_type", None)
    return frozenset(getattr(manual_type, "varying", None) or ())


def _collect_draws(jaxpr, row_of_eqn, draws: dict, axes) -> None:
    for eqn in jaxpr.eqns:
        if eqn.primitive is draw_p:
            draws[row_of_eqn[id(eqn)]] = set(axes)
        for _, _, sub_jaxpr in sub_jaxprs(eqn.params):
            _collect_draws(open_jaxpr(sub_jaxpr), row_of_eqn, draws, axes)


def _spec_axes(spec) -> set:
    """The mesh axis names a ``PartitionSpec`` mentions."""
    names = set()
    for entry in (spec or ()):
        if entry is None:
            continue
        names |= set(entry) if isinstance(entry, (tuple, list)) else {entry}
    return names


def _axes_from_inputs(body, in_specs) -> dict:
    """var -> the manual axes its value varies over by data flow from the body's inputs (the
    axes their in_specs name) and ``axis_index``: JAX's types where it keeps none (``pmap``).
    Conservative through sub-jaxprs, like :func:`_taint`."""
    def axes_of(eqn) -> set:
        if eqn.primitive.name != "axis_index":
            return set()
        names = eqn.params.get("axis_name", ())
        return set(names) if isinstance(names, (tuple, list)) else {names}

    def walk(jaxpr, flow: dict) -> set:
        seen = set()
        for eqn in jaxpr.eqns:
            a = axes_of(eqn)
            for v in eqn.invars:
                if not isinstance(v, jex.Literal):
                    a |= flow.get(v, set())
            for _, _, sub_jaxpr in sub_jaxprs(eqn.params):
                inner = open_jaxpr(sub_jaxpr)
                flow.update({v: set(a) for v in inner.invars})
                a |= walk(inner, flow)
            for v in eqn.outvars:
                flow[v] = a
            seen |= a
        return seen

    flow = {v: _spec_axes(spec) for v, spec in zip(body.invars, in_specs)}
    walk(body, flow)
    return flow


def _leading_axes(body, row_of_eqn, out_specs, leading: dict) -> None:
    """``leading[row]``: the axes, in order, of the leading entry of the out_specs of the first
    output draw ``row``'s value reaches (where that entry names any)."""
    draws: dict = {}
    taint = _taint(body, row_of_eqn, draws, on_cast=None)
    for v, spec in zip(body.outvars, out_specs):
        entry = tuple(spec)[0] if spec is not None and len(tuple(spec)) else None
        if isinstance(v, jex.Literal) or entry is None:
            continue
        entry = tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)
        for row in taint.get(v, ()):
            leading.setdefault(row, entry)


def _taint(body, row_of_eqn, draws: dict, on_cast) -> dict:
    """var -> the draw rows its value depends on, through ``body`` and, conservatively, its
    sub-jaxprs; ``draws`` gets every draw row; ``on_cast(axes, rows)`` is called for each
    varying cast."""
    def walk(jaxpr, taint: dict) -> set:
        seen = set()
        for eqn in jaxpr.eqns:
            t = set()
            for v in eqn.invars:
                if not isinstance(v, jex.Literal):
                    t |= taint.get(v, set())
            if eqn.primitive is draw_p:
                row = row_of_eqn[id(eqn)]
                draws.setdefault(row, set())
                t.add(row)
            if eqn.primitive.name in VARYING_CASTS and on_cast is not None:
                axes = eqn.params.get("axes", eqn.params.get("axis_name", ()))
                axes = set(axes) if isinstance(axes, (tuple, list, frozenset, set)) else {axes}
                on_cast(axes, t)
            for _, _, sub_jaxpr in sub_jaxprs(eqn.params):
                inner = open_jaxpr(sub_jaxpr)
                t |= walk(inner, {v: set(t) for v in inner.invars})
            for v in eqn.outvars:
                taint[v] = t
            seen |= t
        return seen

    taint: dict = {}
    walk(body, taint)
    return taint


def _vary_by_casts(body, row_of_eqn, out_specs, draws: dict) -> None:
    """``draws[row]``: the axes of the varying casts and out_specs that draw ``row``'s value
    reaches in ``body`` (see :func:`shard_axes`)."""
    def on_cast(axes, rows):
        for row in rows:
            draws[row] |= axes

    taint = _taint(body, row_of_eqn, draws, on_cast)
    for v, spec in zip(body.outvars, out_specs):
        if not isinstance(v, jex.Literal):
            for row in taint.get(v, ()):
                draws[row] |= _spec_axes(spec)


def loops_varied(varies: dict, values) -> set:
    """The loops any of ``values`` (jaxpr variables or literals) varies with, by ``varies``:
    variable -> the loops it varies with."""
    out = set()
    for v in values:
        if not isinstance(v, jex.Literal):
            out |= varies.get(v, set())
    return out


def dataflow_subs(eqn):
    """``(jaxpr, the outer values of its inputs, the positions that change each iteration)``
    for each sub-jaxpr of ``eqn``."""
    params, name = eqn.params, eqn.primitive.name
    if name == "scan":
        body = open_jaxpr(params["jaxpr"])
        n_consts, _ = _jaxpr_readers.scan_layout(params)
        return [(body, eqn.invars, set(range(n_consts, len(body.invars))))]
    if name == "while":
        cond, body = open_jaxpr(params["cond_jaxpr"]), open_jaxpr(params["body_jaxpr"])
        n_cond, n_body = _jaxpr_readers.while_layout(params)
        carry = eqn.invars[n_cond + n_body:]
        return [(cond, [*eqn.invars[:n_cond], *carry], set(range(n_cond, len(cond.invars)))),
                (body, [*eqn.invars[n_cond:n_cond + n_body], *carry],
                 set(range(n_body, len(body.invars))))]
    if name == "cond":
        return [(open_jaxpr(branch), eqn.invars[1:], set()) for branch in params["branches"]]
    return [(open_jaxpr(j), eqn.invars if len(open_jaxpr(j).invars) == len(eqn.invars) else [],
             set()) for _, _, j in sub_jaxprs(params)]


def _check_unique_names(names, parent, sub, index, eqns) -> None:
    """One name, one site, except among draws keyed by ``keyed_by``: there the uid tells the
    draws apart, and a function traced twice (``lax.map`` with a ``batch_size``: its batches
    and its remainder) makes two equations of one named draw."""
    first_row: dict[str, int] = {}
    for row, name in enumerate(names):
        if name is None:
            continue
        if name in first_row and all(eqns[r].params["keyed"] for r in (row, first_row[name])):
            continue
        if name in first_row:
            other = first_row[name]
            raise ValueError(
                f"jaxpmac.randomized: two draws are named {name!r} (jaxpmac.rand."
                f"{eqns[other].params['sampler']} at equation path "
                f"{_path(parent, sub, index, other)} and jaxpmac.rand."
                f"{eqns[row].params['sampler']} at {_path(parent, sub, index, row)}); a name pins "
                "one draw site, so each name may be used once")
        first_row[name] = row


def _path(parent, sub, index, row) -> str:
    steps = []
    while row != -1:
        steps.append(f"{sub[row]}:{index[row]}")
        row = parent[row]
    return "/".join(reversed(steps))
