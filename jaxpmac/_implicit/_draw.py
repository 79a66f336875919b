"""``draw_p``: a keyless random draw, staged into a jaxpr for :func:`jaxpmac.randomized`.

A keyless draw (``jaxpmac.rand.normal(shape)``) carries no state. It binds ``draw_p``, whose
params name the explicit sampler and its static arguments, and whose operands are the sampler's
array arguments followed by ``uids``: an int32 array ``batch_shape + (k,)`` holding, per example
of the enclosing ``vmap``\\ s, its ``k`` lane indices (outermost vmap first). The elaboration pass
(:mod:`jaxpmac._implicit._table`, :mod:`jaxpmac._implicit._eval`) later gives each draw equation its
site state; the lanes and loop indices are its dynamic words.

How lanes are recorded: only by ``draw_p``'s batching rule. A keyless draw is traced without
any lanes (``uids`` of shape ``(0,)``), whatever ``vmap``\\ s surround it, so its trace does not
depend on where it is traced and JAX may reuse it anywhere (JAX caches the traces of ``jit``\\ ted
functions and loop bodies by function identity). Each ``vmap`` between the draw and the
``randomized`` root then prepends its lane index (an ``iota`` along its axis) when it batches the
draw: ``draw_p`` is a "fancy" batching primitive, whose rule JAX calls even when no operand is
batched, and JAX's ``scan``/``while``/``cond``/``jit``/``checkpoint`` batching rules batch their
sub-jaxprs (so reach the draw) even when none of their inputs is batched. Vmaps batch from the
inside out, so the lanes end up outermost first.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching

from jaxpmac._message import _inputs
from jaxpmac._message import _state
from jaxpmac._samplers._registry import SAMPLERS

# -- the explicit samplers a keyless draw can name ----------------------------------------------


def sampler(name: str) -> Callable:
    """The explicit sampler ``name`` (``jaxpmac.<name>`` or ``jaxpmac.hail.<name[5:]>``)."""
    return SAMPLERS[name]


# -- the randomized root: which trace a keyless draw belongs to ---------------------------------

class _Roots(threading.local):
    def __init__(self):
        self.depth = 0      # how many randomized functions this thread is tracing
        self.keys = []      # the uids of the enclosing keyed_by blocks, innermost last


_ROOTS = _Roots()

# JAX caches traced sub-jaxprs (jit, scan bodies) by function and shapes. Within one randomized
# call that reuse is harmless (a draw's trace holds no lanes; see the module docstring), but a
# jaxpr holding draws must never be reused outside a randomized call, where no pass elaborates
# it: each call traces under a fresh value of this user context, which is part of JAX's cache
# keys, so a later plain call of the same function retraces and its keyless draw raises.
# (Only tracing misses the caches; the explicit samplers run afterwards, outside it.)
_TRACE_TOKEN = jax.make_user_context(default_value=0)
_TOKENS = itertools.count(1)


@contextlib.contextmanager
def root_context():
    """Marks the dynamic extent of a ``randomized`` function's tracing (keyless draws work only
    inside it), under a fresh trace token."""
    with _TRACE_TOKEN(next(_TOKENS)):
        _ROOTS.depth += 1
        try:
            yield
        finally:
            _ROOTS.depth -= 1


@contextlib.contextmanager
def keyed_by(uid):
    """Keyless draws in this block are keyed by ``uid`` (e.g. an example's id, inside the
    function a ``vmap`` maps) rather than by positions: wherever ``uid`` varies over a ``vmap``
    around the draw, its lane index is dropped, and wherever it varies with a loop, the loop's
    iteration index is; ``uid`` is the draw's first dynamic word. So per-example noise is the
    same however the batch is cut, ordered or mapped (``lax.map(batch_size=k)`` included).
    Lanes and loops over which ``uid`` does not vary (inside the block, or outside it over
    other things) are kept. Blocks nest: the innermost uid keys the draw."""
    if not _ROOTS.depth:
        raise RuntimeError("jaxpmac.rand.keyed_by works only inside a function transformed by "
                           "jaxpmac.randomized, but was used outside one")
    _inputs.words_of(uid, name="jaxpmac.rand.keyed_by uid", allow_vector=False,
                     accepts="an int or an integer scalar array (traced or not)")
    _ROOTS.keys.append(jnp.asarray(uid))
    try:
        yield
    finally:
        _ROOTS.keys.pop()


# -- the primitive ---------------------------------------------------------------------------

draw_p = Primitive("jaxpmac_draw")


def _draw_impl(*args, **params):
    raise RuntimeError(
        f"jaxpmac.rand.{params['sampler']}: a keyless draw was evaluated outside "
        "jaxpmac.randomized. Keyless draws have no state of their own; wrap the function in "
        "jaxpmac.randomized, or call the explicit sampler with a state.")


def _draw_abstract_eval(*avals, sampler, static, operand_names, base_shape, dtype, batch_ndim,
                        name, keyed):
    del sampler, static, operand_names, name, keyed
    uids = avals[-1]
    return jax.core.ShapedArray(tuple(uids.shape[:batch_ndim]) + tuple(base_shape), dtype)


def _draw_batcher(axis_data, vals, dims, *, batch_ndim, **params):
    size = axis_data.size
    *operands, uids = vals
    *operand_dims, uids_dim = dims
    # Batch axes live at the front, outer vmaps first: this (outer) vmap's axis goes to 0.
    operands = [batching.bdim_at_front(x, d, size) for x, d in zip(operands, operand_dims)]
    # A keyed draw whose uid (its last operand) varies over this vmap takes no lane from it.
    keyed_here = params["keyed"] and operand_dims[-1] is not None
    if uids_dim is None and not keyed_here:
        # This vmap's lane, outside every lane recorded so far (those of inner vmaps).
        uids = batching.bdim_at_front(uids, None, size)
        lane = lax.broadcast_in_dim(lax.iota(jnp.int32, size), uids.shape[:-1] + (1,), (0,))
        uids = lax.concatenate([lane, uids], uids.ndim - 1)
    else:
        uids = batching.bdim_at_front(uids, uids_dim, size)
    out = draw_p.bind(*operands, uids, batch_ndim=batch_ndim + 1, **params)
    return out, 0


def _draw_jvp(primals, tangents, **params):
    del tangents
    out = draw_p.bind(*primals, **params)
    return out, ad.Zero.from_primal_value(out)


draw_p.def_impl(_draw_impl)
draw_p.def_abstract_eval(_draw_abstract_eval)
batching.fancy_primitive_batchers[draw_p] = _draw_batcher
ad.primitive_jvps[draw_p] = _draw_jvp


# -- binding a keyless draw ------------------------------------------------------------------

def _is_array(value) -> bool:
    return isinstance(value, (jax.Array, np.ndarray, np.generic))


def _static_value(value, *, name: str, sampler_name: str):
    if isinstance(value, list):
        value = tuple(value)
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"jaxpmac.rand.{sampler_name} {name} accepts arrays or hashable "
                        f"static values, but was given {_inputs.describe(value)}") from None
    return value


def _abstract(x) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))


def _check_concrete_values(sample: Callable, operands: list) -> None:
    """Runs the explicit sampler's checks of the *values* of concrete array arguments (NumPy
    arrays and scalars, concrete jax arrays): ``randint``'s bounds against its dtype,
    ``truncated_normal``'s ``lower <= upper``, ``choice``'s weights, ... Once bound, an operand
    may be traced (batched by a vmap, or under jit) by the time the explicit sampler sees it,
    which could then only clip or flag it, so the explicit sampler is traced here (abstractly,
    nothing is computed) with the concrete operands closed over, as the explicit call
    ``jaxpmac.<sampler>(state, ...)`` would see them."""
    concrete = [not _inputs.is_traced(x) for x in operands]
    if not any(concrete):
        return

    def with_concrete(*traced):
        rest = iter(traced)
        return sample(*[x if c else next(rest) for x, c in zip(operands, concrete)])

    jax.eval_shape(with_concrete, *[_abstract(x) for x, c in zip(operands, concrete) if not c])


def split_kwargs(static, operand_names, operands) -> dict[str, Any]:
    """The sampler's keyword arguments from a draw's static params and array operands."""
    kwargs = dict(static)
    kwargs.update(zip(operand_names, operands))
    return kwargs


def draw(sampler_name: str, site_name: str | None = None, **kwargs) -> jax.Array:
    """Binds a keyless draw of ``jaxpmac.<sampler_name>(state, **kwargs)``, named
    ``site_name`` (None: numbered by its place in the program)."""
    if not _ROOTS.depth:
        raise RuntimeError(
            f"jaxpmac.rand.{sampler_name} draws without a state and works only inside a "
            "function transformed by jaxpmac.randomized (which threads the state), but was "
            f"called outside one. Wrap the function: jaxpmac.randomized(f)(state, ...), or call "
            f"the explicit sampler with a state.")
    operand_names, operands, static = [], [], []
    for name, value in kwargs.items():
        if isinstance(value, (list, tuple)) and any(_is_array(v) for v in value):
            value = jnp.asarray(value)
        if _is_array(value):
            operand_names.append(name)
            operands.append(value)
        else:
            static.append((name, _static_value(value, name=name, sampler_name=sampler_name)))
    static = tuple(static)
    if site_name is not None and (not isinstance(site_name, str) or not site_name):
        raise TypeError(f"jaxpmac.rand.{sampler_name} name accepts a non-empty str or None, "
                        f"but was given {_inputs.describe(site_name)}")
    explicit = sampler(sampler_name)

    def sample(*arrays):
        return explicit(_state.key(0), **split_kwargs(static, operand_names, arrays))

    # Validates the arguments now (the sampler's own TypeErrors/ValueErrors) and gives the
    # output's shape and dtype.
    out = jax.eval_shape(sample, *[_abstract(x) for x in operands])
    _check_concrete_values(sample, operands)
    # No lanes yet: each vmap around this draw adds its own in draw_p's batching rule.
    uids = jnp.zeros((0,), jnp.int32)
    keyed = bool(_ROOTS.keys)
    if keyed:
        operands = [*operands, _ROOTS.keys[-1]]
    return draw_p.bind(*operands, uids, sampler=sampler_name, static=static,
                       operand_names=tuple(operand_names), base_shape=tuple(out.shape),
                       dtype=np.dtype(out.dtype), batch_ndim=0, name=site_name, keyed=keyed)
