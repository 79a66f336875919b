"""``check_streams``: which draws of a function can read the same stream, decided from its jaxpr.

A counter-based generator gives wrong numbers in one way only: two draws of one message. Here
each public draw, while the check traces, leaves a mark (:mod:`jaxpmac._samplers._stream_marks`)
whose operands are its state's words. The check then reads the jaxpr:

* two marks whose states have the same static structure and the same words (the same program
  values, or equal constants) draw the same stream, unless both are one sampler's slices of it
  at disjoint static ``offset=`` ranges, or they sit in different branches of one ``cond``;
* where the words differ only in traced values, the messages may or may not be equal at run
  time: "cannot tell", said as such;
* a mark inside a ``scan`` or ``while`` body whose words do not depend on anything the loop
  changes draws the same stream at every iteration;
* a mark that some ``vmap`` around it batched without its state varying draws the same stream
  in every example of that ``vmap``;
* a ``jax.random`` draw (its ``random_bits``) from a typed key, a pmac key from
  ``jp.as_jax_key`` or any other, is a draw of that key's stream: two of one key value read the
  same bits, and one in a loop that does not change the key reads them at every iteration. Keys
  are opaque values, so two draws of other key values are never "cannot tell".

The words' data flow is followed through ``jit``, ``cond``, ``checkpoint``, custom derivatives
and loops (a loop's carried and scanned values vary with it, its constants do not).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import jax
from jax.extend import core as jex

from jaxpmac._implicit import _table
from jaxpmac._samplers import _stream_marks

LOOPS = ("scan", "while")
#: The ``sampler`` of a mark made for a ``jax.random`` draw from a typed key.
JAX_RANDOM = "jax.random"


@dataclasses.dataclass(frozen=True)
class StreamFinding:
    """One way two draws (or one draw, twice) can read the same stream.

    Attributes:
        kind: ``"same stream"`` (two draws of one message, or of one ``jax.random`` key),
            ``"overlapping offsets"`` (slices of one stream that overlap), ``"same every
            iteration"`` (a draw in a loop whose state or key the loop does not change),
            ``"same in every vmap lane"`` (a draw under a ``vmap`` whose state does not vary
            over its lanes), ``"cannot tell"`` (states that differ only in traced words, which
            may be equal when the program runs).
        first: where the (first) draw is: the user's file and line, or an implicit site.
        second: where the other draw is (None for the one-draw kinds).
        why: the reason, in words.
    """
    kind: str
    first: str
    second: str | None
    why: str


@dataclasses.dataclass
class _Use:
    """A mark found in the jaxpr, with what the walk knows of its operands."""
    mark: _stream_marks.Mark
    lanes: tuple
    keys: tuple                      # one per operand: a constant's value, or a value's key
    traced: tuple                    # per operand: a program value (not a constant)
    loops: tuple                     # (loop id, primitive name, varies with it)
    branches: frozenset              # (cond id, branch index) it sits in


def check_streams(f, *args, **kwargs) -> list[StreamFinding]:
    """Traces ``f(*args, **kwargs)`` and reports every pair of its draws that can read the same
    stream (see :class:`StreamFinding`); an empty list when there is none.

    Explicit states and :func:`jaxpmac.randomized` functions alike, and ``jax.random`` draws
    from typed keys (a pmac key from :func:`jaxpmac.as_jax_key` or any other); nothing is
    computed.

    Example:
        >>> import jax, jax.numpy as jnp, jaxpmac as jp
        >>> s = jp.key(0)
        >>> [f.kind for f in jp.check_streams(lambda: (jp.normal(s, (4,)), jp.uniform(s, (4,))))]
        ['same stream']
        >>> jp.check_streams(lambda: (jp.normal(s.split_static("a"), (4,)),
        ...                           jp.uniform(s.split_static("b"), (4,))))
        []
    """
    if not callable(f):
        raise TypeError(f"check_streams accepts a callable, but was given {type(f).__name__}")
    # Traced with jit enabled even under jax.disable_jit (as randomized traces), so that words
    # known when tracing stay the constants they are in the jitted program.
    with _stream_marks.marking(), jax.disable_jit(False):
        closed = jax.make_jaxpr(f)(*args, **kwargs)
    uses = _Walk().uses(closed.jaxpr)
    return _single_findings(uses) + _pair_findings(uses)


class _Walk:
    def __init__(self):
        self.ids = itertools.count()
        self.found: list[_Use] = []
        self.values: dict = {}       # (primitive, params, operand keys) -> its outputs' keys

    def uses(self, jaxpr) -> list[_Use]:
        self.walk(jaxpr, {}, {}, (), frozenset(), None)
        return self.found

    def walk(self, jaxpr, keys: dict, taint: dict, loops: tuple, branches: frozenset,
             where: str | None):
        """``keys``: var -> the key of the value it holds (its outermost var); ``taint``: var ->
        the ids of the loops it varies with; ``loops``: the enclosing (id, name) pairs;
        ``where``: the user's line of the call that this jaxpr belongs to, if it is a library's
        function (JAX caches those traces: an equation inside is shared by every call)."""
        # A jaxpr that JAX cached is walked once per call, with the same variables: a value
        # first seen in this walk is keyed by the walk, so two calls hold two values.
        walk_id = next(self.ids)

        def key(v):
            if isinstance(v, jex.Literal):
                return ("constant", repr(v.val))
            return keys.get(v, (walk_id, v))

        def taint_of(vs):
            return _table.loops_varied(taint, vs)

        for eqn in jaxpr.eqns:
            if eqn.primitive is _stream_marks.stream_mark_p:
                operand_taint = taint_of(eqn.invars)
                self.found.append(_Use(
                    eqn.params["mark"], eqn.params["lanes"], tuple(key(v) for v in eqn.invars),
                    tuple(not isinstance(v, jex.Literal) and not _is_constant(key(v))
                          for v in eqn.invars),
                    tuple((i, name, i in operand_taint) for i, name in loops), branches))
                continue
            if eqn.primitive.name == "random_bits" and _is_key(eqn.invars[0]):
                self.found.append(_Use(
                    _key_draw_mark(eqn, where or _line_of(eqn)), (), (key(eqn.invars[0]),),
                    (not _is_constant(key(eqn.invars[0])),),
                    tuple((i, name, i in taint_of(eqn.invars)) for i, name in loops), branches))
            inner = _table.dataflow_subs(eqn)
            in_taint = taint_of(eqn.invars)
            for sub_index, (sub, operands, varying) in enumerate(inner):
                sub_keys, sub_taint = dict(keys), dict(taint)
                sub_loops, sub_branches = loops, branches
                if eqn.primitive.name in LOOPS:
                    loop = next(self.ids)
                    sub_loops = loops + ((loop, eqn.primitive.name),)
                if eqn.primitive.name == "cond":
                    sub_branches = branches | {(id(eqn), sub_index)}
                for position, v in enumerate(sub.invars):
                    if position < len(operands) and position not in varying:
                        outer = operands[position]
                        sub_keys[v] = key(outer)
                        sub_taint[v] = taint_of([outer])
                    else:
                        sub_taint[v] = (taint_of([operands[position]])
                                        if position < len(operands) else set())
                        if eqn.primitive.name in LOOPS:
                            sub_taint[v] = sub_taint[v] | {sub_loops[-1][0]}
                for v in sub.constvars:
                    sub_taint[v] = set()
                self.walk(sub, sub_keys, sub_taint, sub_loops, sub_branches,
                          (where or _line_of(eqn)) if _is_library(sub) else where)
            for v in eqn.outvars:
                taint[v] = in_taint
            if eqn.primitive.name not in LOOPS and not eqn.effects:
                # The same operation of the same values is the same value (a state built
                # twice from one traced seed or uid holds the same words).
                signature = (eqn.primitive.name, _params_key(eqn.params),
                             tuple(key(v) for v in eqn.invars))
                earlier = self.values.setdefault(signature, [key(v) for v in eqn.outvars])
                for v, value in zip(eqn.outvars, earlier):
                    keys[v] = value


def _line_of(eqn) -> str:
    """The user's source line that made ``eqn``."""
    traceback = eqn.source_info.traceback
    return _stream_marks.user_line((frame.file_name, frame.line_num)
                                   for frame in (traceback.frames if traceback else ()))


def _is_key(var) -> bool:
    """Whether ``var`` holds typed ``jax.random`` keys."""
    return jax.dtypes.issubdtype(var.aval.dtype, jax.dtypes.prng_key)


def _is_library(jaxpr) -> bool:
    """Whether ``jaxpr`` is the trace of a function of JAX or jaxpmac (not the user's)."""
    info = getattr(jaxpr, "debug_info", None)
    source = getattr(info, "func_src_info", None) or ""
    _, _, path = source.rpartition(" at ")
    return _stream_marks.in_library(path.rsplit(":", 1)[0]) if path else False


def _key_draw_mark(eqn, where: str) -> _stream_marks.Mark:
    impl = getattr(eqn.invars[0].aval.dtype, "_impl", None)
    shape = eqn.params["shape"]
    return _stream_marks.Mark(
        JAX_RANDOM, where, ("key", getattr(impl, "name", str(impl)), eqn.invars[0].aval.shape),
        int(math.prod(shape)), f"uint{eqn.params['bit_width']}", None)


def _drawn_by(mark: _stream_marks.Mark) -> str:
    return ("a jax.random draw" if mark.sampler == JAX_RANDOM else f"jp.{mark.sampler}")


def _params_key(params) -> str:
    return repr(sorted(params.items()))


def _is_constant(key) -> bool:
    return isinstance(key, tuple) and key and key[0] == "constant"


def _single_findings(uses: list[_Use]) -> list[StreamFinding]:
    findings = []
    for use in uses:
        for loop_id, loop_name, varies in use.loops:
            if not varies:
                findings.append(StreamFinding(
                    "same every iteration", use.mark.where, None,
                    f"{_drawn_by(use.mark)} inside a {loop_name} loop draws from a "
                    f"{_source(use.mark)} that the loop does not change (nothing in it "
                    "depends on its carry or scanned values): every iteration reads the same "
                    f"stream. {_remedy(use.mark, 'the iteration index')}"))
        if not all(use.lanes):
            findings.append(StreamFinding(
                "same in every vmap lane", use.mark.where, None,
                f"jp.{use.mark.sampler} under vmap draws from a state that does not vary over "
                "the vmap's lanes: every example gets the same values. Split the state by the "
                "example index (state.split(i) with i mapped)."))
    return findings


def _pair_findings(uses: list[_Use]) -> list[StreamFinding]:
    findings = []
    for a, b in itertools.combinations(uses, 2):
        if a.mark.structure != b.mark.structure or len(a.keys) != len(b.keys):
            continue
        if any(cond == other and branch != other_branch
               for cond, branch in a.branches for other, other_branch in b.branches):
            continue                    # other branches of one cond: never both run
        differ = [i for i, (x, y) in enumerate(zip(a.keys, b.keys)) if x != y]
        if not differ:
            kind, why = _same_message(a.mark, b.mark)
            if kind:
                findings.append(StreamFinding(kind, a.mark.where, b.mark.where, why))
        elif a.mark.sampler != JAX_RANDOM and all(a.traced[i] or b.traced[i] for i in differ):
            findings.append(StreamFinding(
                "cannot tell", a.mark.where, b.mark.where,
                f"jp.{a.mark.sampler} and jp.{b.mark.sampler} draw from states with the same "
                "labels whose traced words are other program values: whether they are equal "
                "when the program runs cannot be told from the program."))
    return findings


def _same_message(a: _stream_marks.Mark, b: _stream_marks.Mark) -> tuple[str | None, str]:
    if (a.offset is not None and b.offset is not None and a.sampler == b.sampler
            and a.dtype == b.dtype and (a.offset != b.offset or a.n != b.n)):
        if a.offset + a.n <= b.offset or b.offset + b.n <= a.offset:
            return None, ""
        return ("overlapping offsets",
                f"jp.{a.sampler} reads elements [{a.offset}, {a.offset + a.n}) and "
                f"[{b.offset}, {b.offset + b.n}) of one stream: they overlap.")
    if a.sampler == JAX_RANDOM:
        return ("same stream",
                "two jax.random draws from the same key (a pmac key from jp.as_jax_key reads "
                "its state's stream) read the same bits. "
                f"{_remedy(a, 'a distinct value for each draw')}")
    return ("same stream",
            f"jp.{a.sampler} and jp.{b.sampler} draw from the same state (the same labels and "
            "words), so they read the same stream words.")


def _source(mark: _stream_marks.Mark) -> str:
    return "key" if mark.sampler == JAX_RANDOM else "state"


def _remedy(mark: _stream_marks.Mark, by: str) -> str:
    if mark.sampler == JAX_RANDOM:
        return f"Split the key (jax.random.split or fold_in) by {by}."
    return f"Split the state by {by}."
