"""Stream marks: what :func:`jaxpmac.check_streams` reads of each draw while it traces.

While a check traces a function (:func:`marking`), every public sampler binds one
``jaxpmac_stream_mark`` equation after drawing: its operands are the state's words (static ones
as constants, traced ones as the program's values, so two draws of one state read the same
variables), and its params say which sampler drew how many values of which dtype from which
``offset``, and where in the user's code. Its batching rule is called by every ``vmap`` around
the draw, batched operands or not, and records whether the state varied over that ``vmap``'s
lanes. Outside a check nothing is bound: a draw's program is unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import threading
import traceback

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_JAX_DIR = os.path.dirname(os.path.abspath(jax.__file__))


@dataclasses.dataclass(frozen=True)
class Mark:
    """The static part of a draw's mark (the equation's ``mark`` param).

    Attributes:
        sampler: the public sampler's name.
        where: the user's source line of the draw (or the implicit site that made it).
        structure: the state's static structure (labels and word counts): two states of other
            structures are other messages.
        n: values drawn; dtype: their dtype.
        offset: the draw's static ``offset=`` (its first element), or None where traced (the
            traced offset is then the last operand).
    """
    sampler: str
    where: str
    structure: object
    n: int
    dtype: str
    offset: int | None


class _Context(threading.local):
    def __init__(self):
        self.depth = 0
        self.site = None        # set by the implicit pass while it draws a site
        self.drawing = 0        # public samplers running (one inside another marks nothing)


_CONTEXT = _Context()


# JAX caches the traces of jitted functions and loop bodies; each check traces under a fresh
# value of this user context (part of JAX's cache keys), so that it sees every draw, marked,
# and no trace holding marks is reused outside it.
_CHECK_TOKEN = jax.make_user_context(default_value=0)
_TOKENS = itertools.count(1)


@contextlib.contextmanager
def marking():
    """Draws traced inside this block bind their marks."""
    with _CHECK_TOKEN(next(_TOKENS)):
        _CONTEXT.depth += 1
        try:
            yield
        finally:
            _CONTEXT.depth -= 1


def active() -> bool:
    return _CONTEXT.depth > 0


@contextlib.contextmanager
def at_site(description: str | None):
    """Names the draws made inside this block (the implicit pass: a keyless draw's site; None
    outside a check, where nothing is marked)."""
    outer, _CONTEXT.site = _CONTEXT.site, description
    try:
        yield
    finally:
        _CONTEXT.site = outer


stream_mark_p = Primitive("jaxpmac_stream_mark")


def _abstract_eval(*avals, mark, lanes):
    del avals, mark, lanes
    return jax.core.ShapedArray((), jnp.int32)


def _impl(*operands, mark, lanes):
    del operands, mark, lanes
    return jnp.int32(0)


def _batcher(axis_data, vals, dims, *, mark, lanes):
    varies = any(d is not None for d in dims)
    vals = [batching.bdim_at_front(v, d, axis_data.size) if d is not None else v
            for v, d in zip(vals, dims)]
    # vmaps batch from the inside out: this (outer) one goes in front.
    return stream_mark_p.bind(*vals, mark=mark, lanes=(varies, *lanes)), None


stream_mark_p.def_abstract_eval(_abstract_eval)
stream_mark_p.def_impl(_impl)
batching.fancy_primitive_batchers[stream_mark_p] = _batcher
# A mark computes nothing; should one reach a compiled program, it is a constant.
mlir.register_lowering(stream_mark_p, mlir.lower_fun(_impl, multiple_results=False))


def in_library(filename: str) -> bool:
    """Whether ``filename`` is a source file of jaxpmac or jax (not the user's)."""
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIR) or path.startswith(_JAX_DIR)


def user_line(frames) -> str:
    """The first of ``(file, line)`` pairs (innermost first) in the user's code: outside
    jaxpmac and jax."""
    for filename, lineno in frames:
        if not in_library(filename):
            return f"{filename}:{lineno}"
    return "<unknown>"


def _user_line() -> str:
    return user_line((frame.filename, frame.lineno)
                     for frame in reversed(traceback.extract_stack()[:-2]))


def marked(sampler: str, draw):
    """``draw`` (the public sampler ``sampler``), binding its mark when a check is tracing.
    A sampler that another one calls marks nothing: the outer draw is the user's."""
    def call(*args, **kwargs):
        if not active() or _CONTEXT.drawing:
            return draw(*args, **kwargs)
        _CONTEXT.drawing += 1
        try:
            result = draw(*args, **kwargs)
        finally:
            _CONTEXT.drawing -= 1
        state = args[0] if args else kwargs.get("state")
        mark(sampler, state, result, kwargs.get("offset", 0))
        return result
    return call


def mark(sampler: str, state, result, offset) -> None:
    """Binds the mark of ``sampler``'s draw of ``result`` from ``state`` (at ``offset``)."""
    words, structure = jax.tree_util.tree_flatten(state)
    words = [jnp.asarray(word) for word in words]
    static_offset = None
    if isinstance(offset, (int, np.integer)) and not isinstance(offset, bool):
        static_offset = int(offset)
    elif offset is not None:
        words.append(jnp.asarray(offset))
    leaves = jax.tree.leaves(result)
    n = int(sum(np.size(leaf) for leaf in leaves))
    dtype = str(leaves[0].dtype) if leaves else ""
    where = _CONTEXT.site or _user_line()
    stream_mark_p.bind(*words, mark=Mark(sampler, where, structure, n, dtype, static_offset),
                       lanes=())
