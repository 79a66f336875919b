"""``randint``, ``permutation``, ``choice`` and ``categorical``."""

from __future__ import annotations

import math
import operator
from functools import partial, reduce

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _limbs
from jaxpmac._lowering import _platform
from jaxpmac._message import _inputs
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _simple_continuous
from jaxpmac._samplers import _unit
from jaxpmac._samplers._hashed import hashed
from jaxpmac._samplers._registry import sampler

_BOUND_ACCEPTS = "an int or an integer array"


# -- randint ---------------------------------------------------------------------------------

def _bound_limbs(value, *, name: str, dtype, n_limbs: int, inclusive_top: bool):
    """A bound as ``n_limbs`` little-endian uint32 limbs of its two's complement value.

    Concrete bounds must lie in ``dtype``'s range (``maxval`` may be one past its maximum);
    traced ones are clipped into it, like ``jax.random.randint``.
    """
    info = jnp.iinfo(dtype)
    top = info.max + 1 if inclusive_top else info.max
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, np.integer, np.ndarray, jax.Array)):
        raise TypeError(_sampler_args.rejected(name, _BOUND_ACCEPTS, _inputs.describe(value)))
    if not isinstance(value, int) and not jnp.issubdtype(value.dtype, jnp.integer):
        raise TypeError(_sampler_args.rejected(name, _BOUND_ACCEPTS, _inputs.describe(value)))
    if isinstance(value, int):
        if not info.min <= value <= top:
            raise ValueError(f"{name} must lie in [{info.min}, {top}] for dtype {dtype}, but "
                             f"was given {value}")
        word = value % (1 << (32 * n_limbs))
        return [np.uint32((word >> (32 * k)) & 0xFFFFFFFF) for k in range(n_limbs)]
    if isinstance(value, (np.integer, np.ndarray)) and value.size:
        # Checked before jnp.asarray: with x64 off it would wrap int64 bounds to int32.
        low, high = int(np.min(value)), int(np.max(value))
        if low < info.min or high > top:
            raise ValueError(f"{name} must lie in [{info.min}, {top}] for dtype {dtype}, but "
                             f"was given values in [{low}, {high}]")
    value = value if _inputs.is_traced(value) else jnp.asarray(value)
    if not _inputs.is_traced(value) and value.size:
        low, high = int(np.min(np.asarray(value))), int(np.max(np.asarray(value)))
        if low < info.min or high > top:
            raise ValueError(f"{name} must lie in [{info.min}, {top}] for dtype {dtype}, but "
                             f"was given values in [{low}, {high}]")
    else:
        own = jnp.iinfo(value.dtype)
        value = jnp.clip(value, max(info.min, own.min), min(top, own.max))
    signed = jnp.issubdtype(value.dtype, jnp.signedinteger)
    if value.dtype.itemsize == 8:
        as_u64 = (lax.bitcast_convert_type(value, jnp.uint64) if signed
                  else value.astype(jnp.uint64))
        limbs = [as_u64.astype(jnp.uint32), (as_u64 >> np.uint64(32)).astype(jnp.uint32)]
    else:
        limbs = [lax.bitcast_convert_type(value.astype(jnp.int32), jnp.uint32) if signed
                 else value.astype(jnp.uint32)]
    fill = (jnp.where(value < 0, np.uint32(0xFFFFFFFF), np.uint32(0)) if signed
            else jnp.zeros(value.shape, jnp.uint32))
    return limbs + [fill] * (n_limbs - len(limbs))


def _from_limbs(limbs, dtype):
    dtype = jnp.dtype(dtype)
    signed = jnp.issubdtype(dtype, jnp.signedinteger)
    if dtype.itemsize == 8:
        as_u64 = (limbs[1].astype(jnp.uint64) << np.uint64(32)) | limbs[0].astype(jnp.uint64)
        return lax.bitcast_convert_type(as_u64, dtype) if signed else as_u64
    if signed:
        return lax.bitcast_convert_type(limbs[0], jnp.int32).astype(dtype)
    return limbs[0].astype(dtype)


def random_limbs(state, n: int, n_limbs: int) -> list:
    """``n_limbs`` uint32 limbs of ``n`` random integers; element ``i`` is 32-bit stream
    elements ``n_limbs*i ..`` (little-endian: its 64-bit stream words, low word first)."""
    if _platform.in_kernel():
        # A kernel has no strided slice (nor 64-bit types): each 64-bit word's two limbs come
        # from one strided window of the word stream, one cipher per value and word.
        words = n_limbs // 2
        return [limb for k in range(words)
                for limb in state.stream_halves(n, per_element=words, part=k)]
    flat = state.stream(n * n_limbs, jnp.uint32, per_element=n_limbs).reshape(n, n_limbs)
    return [flat[:, k] for k in range(n_limbs)]


def bounded_limbs(x: list, minval: list, span: list, width_limbs: int) -> list:
    """``minval + floor(x * span / 2**(32*len(x)))`` mod ``2**(32*width_limbs)``."""
    offset = _limbs.scaled_high(x, span, width_limbs)
    return _limbs.add(minval[:width_limbs], offset)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _randint_impl(state, minval, maxval, *, shape, dtype):
    width_limbs = 2 if jnp.dtype(dtype).itemsize == 8 else 1
    n = math.prod(shape)
    span = _limbs.subtract(maxval, minval)               # maxval - minval, with a sign limb
    # Limb by limb, not a stack of them: Pallas' Triton lowering stacks only on the last axis.
    empty = reduce(operator.and_, [limb == 0 for limb in span])
    empty = ((span[-1] >> np.uint32(31)) == 1) | empty
    x = random_limbs(state, n, 2 * width_limbs)
    x = [limb.reshape(shape) for limb in x]
    span = [jnp.broadcast_to(limb, shape) for limb in span]
    values = bounded_limbs(x, minval, span, width_limbs)
    values = [jnp.where(empty, jnp.broadcast_to(low, shape), v)
              for low, v in zip(minval, values)]
    return _from_limbs(values, dtype)


@sampler
def randint(state, shape, minval, maxval, dtype=None, *, offset=0):
    """Uniform integers in ``[minval, maxval)``, like ``jax.random.randint``.

    Algorithm: a rejection-free wide multiply. Element ``i`` reads a ``K``-bit integer ``x``
    from the stream (``K = 64``: 64-bit word ``i`` for 8- to 32-bit dtypes; ``K = 128``: words
    ``2i`` (low) and ``2i+1`` (high) for 64-bit dtypes) and returns
    ``minval + floor(x * (maxval - minval) / 2**K)``, computed exactly in 32-bit limbs. Each of
    the ``R = maxval - minval`` values then has probability ``floor(2**K / R) / 2**K`` or
    ``ceil(2**K / R) / 2**K``: within ``2**-K`` of ``1 / R`` for every range, including
    ranges wider than ``2**32`` and the full range of the dtype (where it is exact). A range of
    one value (``maxval == minval + 1``) always gives ``minval``. Concrete bounds with
    ``maxval <= minval`` (an empty range) are a ValueError; traced ones give ``minval`` (as
    ``jax.random.randint``).

    Args:
        state: an :class:`RNGState`.
        shape: output shape; the bounds must broadcast to it.
        minval: inclusive lower bound(s): int or integer array.
        maxval: exclusive upper bound(s); may be one past the dtype's maximum.
        dtype: int8..int64 or uint8..uint64 (64-bit types need x64); default JAX's default int.
        offset: keyword-only; element ``i`` of the flattened output is element ``offset + i``
            of the same draw with a larger shape, so a tile, a shard or a later call can draw
            its own slice (a Python int or an integer scalar array; traced is fine).

    Raises:
        TypeError: float bounds or dtype. ValueError: concrete bounds outside the dtype's range
        (traced bounds are clipped into it, as ``jax.random.randint`` does).

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.randint(jp.key(0), (5,), 0, 10)
        >>> bool(((0 <= x) & (x < 10)).all())
        True
    """
    _sampler_args.check_state(state, name="randint")
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.INT, name="randint")
    n_limbs = 3 if dtype.itemsize == 8 else 2
    shape = _sampler_args.output_shape(shape, [minval, maxval], name="randint")
    low = _bound_limbs(minval, name="randint minval", dtype=dtype, n_limbs=n_limbs,
                       inclusive_top=False)
    high = _bound_limbs(maxval, name="randint maxval", dtype=dtype, n_limbs=n_limbs,
                        inclusive_top=True)
    _sampler_args.check_domain("randint", minval=minval, maxval=maxval)
    offset = _sampler_args.check_offset(offset, name="randint")
    low = list(_sampler_args.kernel_operands(shape, *low))
    high = list(_sampler_args.kernel_operands(shape, *high))
    return _randint_impl(hashed(state, offset), low, high, shape=shape, dtype=dtype)


def _uniform_indices(state, n_draws: int, n: int) -> jax.Array:
    """``[n_draws]`` int32 indices uniform on ``[0, n)`` (``n <= 2**31``): ``randint``'s wide
    multiply, 64-bit word ``i`` for draw ``i``."""
    x = random_limbs(state, n_draws, 2)
    (index,) = _limbs.scaled_high(x, [jnp.full((n_draws,), n, jnp.uint32)], 1)
    return index.astype(jnp.int32)


# -- permutation -----------------------------------------------------------------------------

def _sort_keys(state, shape) -> tuple[jax.Array, jax.Array]:
    """64-bit random sort keys ``(hi, lo)`` of ``shape``: key ``j`` (row-major) is word ``j``."""
    n = math.prod(shape)
    flat = state.stream(2 * n, jnp.uint32).reshape(n, 2)
    return flat[:, 1].reshape(shape), flat[:, 0].reshape(shape)


@partial(jax.jit, static_argnames=("axis", "independent"))
def _permutation_impl(state, x, *, axis, independent):
    if independent:
        hi, lo = _sort_keys(state, x.shape)
        moved = [jnp.moveaxis(v, axis, -1) for v in (hi, lo, x)]
        return jnp.moveaxis(lax.sort(moved, dimension=x.ndim - 1, num_keys=2,
                                     is_stable=True)[2], -1, axis)
    n = x.shape[axis]
    hi, lo = _sort_keys(state, (n,))
    order = lax.sort((hi, lo, lax.iota(jnp.int32, n)), num_keys=2, is_stable=True)[2]
    return jnp.take(x, order, axis=axis)


@sampler
def permutation(state, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``, like
    ``jax.random.permutation``.

    Algorithm: sort by random 64-bit keys; position ``j`` along ``axis`` gets 64-bit stream
    word ``j`` as its key (``independent=True``: element ``j`` of ``x`` in row-major order gets
    word ``j``, and each slice is sorted on its own). Ties (probability about
    ``n**2 / 2**65``) keep the original order, so the bias from uniform is below that bound.

    Example:
        >>> import jaxpmac as jp
        >>> sorted(jp.permutation(jp.key(0), 5).tolist())
        [0, 1, 2, 3, 4]
    """
    _sampler_args.check_state(state, name="permutation")
    x = _as_population(x, name="permutation x")
    independent = _sampler_args.check_flag(independent, name="permutation independent")
    axis = _check_axis(axis, x.ndim, name="permutation")
    return _permutation_impl(hashed(state), x, axis=axis, independent=independent)


_POPULATION_ACCEPTS = "an int or an array with at least one dimension"


def _as_population(x, *, name: str) -> jax.Array:
    """An int (-> ``arange``) or an array with at least one dimension."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        raise TypeError(_sampler_args.rejected(name, _POPULATION_ACCEPTS, _inputs.describe(x)))
    if np.ndim(x) == 0:
        if not jnp.issubdtype(jnp.result_type(x), jnp.integer):
            raise TypeError(_sampler_args.rejected(name, _POPULATION_ACCEPTS,
                                                   _inputs.describe(x)))
        if _inputs.is_traced(x):
            raise TypeError(f"{name} must be a concrete int (it fixes the output shape), but "
                            f"was given {_inputs.describe(x)}")
        n = int(x)
        if n < 0:
            raise ValueError(f"{name} must be non-negative, but was given {n}")
        return jnp.arange(n)
    return jnp.asarray(x)


def _check_axis(axis, ndim: int, *, name: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(_sampler_args.rejected(f"{name} axis", "an int",
                                               _inputs.describe(axis))) from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} axis {axis} is out of range for an array of {ndim} "
                         f"dimensions")
    return axis % ndim


# -- choice ----------------------------------------------------------------------------------

_P_ACCEPTS = "finite non-negative weights with a positive, finite sum"


def _cumulative(p, xp=jnp):
    """The running sums of ``p``: traced, by an associative scan, whose order of additions is
    written out in the program (``jnp.cumsum`` leaves it to each backend's reduce-window or
    scan); concrete, numpy's (only checked against 0 and infinity)."""
    return lax.associative_scan(jnp.add, p) if xp is jnp else np.cumsum(p)


def _weights_are_valid(p, n_draws: int, replace: bool, xp=jnp):
    """Whether ``p`` is a usable weight vector (a bool scalar; ``xp`` is ``jnp`` for traced
    ``p`` or ``np`` for concrete): finite, non-negative, with a positive sum that does not
    overflow (the inverse CDF scales by it), and, without replacement, at least ``n_draws``
    positive weights (Gumbel top-k would otherwise pick zero-weight entries)."""
    total = _cumulative(p, xp)[-1]
    valid = xp.all(p >= 0) & xp.all(xp.isfinite(p)) & (total > 0) & xp.isfinite(total)
    if not replace:
        valid &= xp.sum(p > 0) >= n_draws
    return valid


def _check_concrete_weights(p, shape: tuple, replace: bool, dtype) -> None:
    """ValueError for concrete weights (converted to ``dtype`` on the host: under ``jit`` a
    closed-over constant is still checked) that :func:`_weights_are_valid` rejects, saying
    which entry (or which property) is wrong."""
    n_draws = math.prod(shape)
    values = np.asarray(p).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if _weights_are_valid(values, n_draws, replace, xp=np):
            return
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        i = int(bad[0])
        received = f"p[{i}] = {values[i]}"
    elif not (values > 0).any():
        received = "all-zero weights"
    elif not replace and int((values > 0).sum()) < n_draws:
        raise ValueError(f"choice without replacement draws at most as many entries as p has "
                         f"positive weights, but p has {int((values > 0).sum())} and shape "
                         f"{shape} asks for {n_draws}")
    else:
        received = f"weights whose sum overflows {values.dtype} (rescale p)"
    raise ValueError(_sampler_args.rejected("choice p", _P_ACCEPTS, received))


@partial(jax.jit, static_argnames=("shape", "n", "replace", "has_p"))
def _choice_indices(state, p, *, shape, n, replace, has_p):
    """int32 indices of ``shape``; with weights, -1 everywhere when ``p`` is invalid (it can
    only be checked here when it is traced)."""
    n_draws = math.prod(shape)
    if replace and not has_p:
        return _uniform_indices(state, n_draws, n).reshape(shape)
    if not has_p:
        hi, lo = _sort_keys(state, (n,))
        order = lax.sort((hi, lo, lax.iota(jnp.int32, n)), num_keys=2, is_stable=True)[2]
        return order[:n_draws].reshape(shape)
    if replace:
        cumulative = _cumulative(p)
        u = _unit.open_unit(_unit.words(state, n_draws, 1, p.dtype)[:, 0], p.dtype)
        index = jnp.searchsorted(cumulative, u * cumulative[-1], side="left")
        index = jnp.minimum(index, n - 1).astype(jnp.int32).reshape(shape)
    else:
        gumbel = _simple_continuous.unit_transform(state, (n,), p.dtype, "gumbel")
        keys = _fixed_math.log(p) + gumbel
        index = lax.top_k(keys, n_draws)[1].astype(jnp.int32).reshape(shape)
    return jnp.where(_weights_are_valid(p, n_draws, replace), index, -1)


@sampler
def choice(state, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random entries of ``arange(a)`` (int ``a``) or of ``a`` along ``axis``, like
    ``jax.random.choice``.

    Algorithms (draw ``i`` of the flattened ``shape``):

    * with replacement, uniform: ``randint``'s wide multiply on 64-bit word ``i``
      (probabilities within ``2**-64`` of ``1/n``);
    * with replacement, weights ``p``: inverse CDF, the first index whose running sum of ``p``
      reaches ``u * sum(p)`` with ``u`` in ``(0, 1)`` from word ``i`` (the sums are in
      float32, or float64 with x64: entries with ``p = 0`` are never drawn);
    * without replacement, uniform: the first ``prod(shape)`` entries of :func:`permutation`;
    * without replacement, weights ``p``: Gumbel top-k, the largest ``log(p_j) + g_j`` with
      Gumbel ``g_j`` from word ``j`` -- sequential sampling proportional to ``p`` without
      replacement.

    Args:
        state: an :class:`RNGState`.
        a: an int ``n`` (draw from ``arange(n)``) or an array (draw slices along ``axis``).
        shape: the draws' shape; without replacement ``prod(shape) <= n``.
        replace: with (default) or without replacement.
        p: optional weights of length ``n``: finite, non-negative, with a positive sum that
            is finite in the computation dtype (need not sum to 1); without replacement at
            least ``prod(shape)`` of them positive. Concrete ``p`` (a NumPy array, or a jax
            array outside ``jit``/``vmap``) that breaks these rules is a ``ValueError``.
            Traced ``p`` cannot be checked at trace time, so invalid weights are flagged in
            the output instead of drawn from: every draw is ``-1`` for an int ``a`` and, for an
            array ``a``, the fill value of ``jnp.take(..., mode="fill")`` (NaN for floats, the
            dtype's minimum for signed ints, its maximum for unsigned ints, True for bools).
            This differs on purpose from ``jax.random.choice``, which returns valid-looking
            indices for invalid weights.
        axis: the axis of ``a`` to draw along.
        mode: accepted for compatibility (None, "low" or "high" draw the same).

    Example:
        >>> import jaxpmac as jp
        >>> jp.choice(jp.key(0), 10, (3,), replace=False).shape
        (3,)
    """
    _sampler_args.check_state(state, name="choice")
    _sampler_args.check_mode(mode, name="choice")
    shape = _sampler_args.check_shape(shape, name="choice")
    population_is_int = np.ndim(a) == 0
    a = _as_population(a, name="choice a")
    axis = _check_axis(axis, a.ndim, name="choice")
    n = a.shape[axis]
    n_draws = math.prod(shape)
    replace = _sampler_args.check_flag(replace, name="choice replace")
    if n == 0 and n_draws > 0:
        raise ValueError("choice needs a non-empty population to draw from, but a has "
                         "length 0 along axis")
    if not replace and n_draws > n:
        raise ValueError(f"choice without replacement draws at most {n} entries, but shape "
                         f"{shape} asks for {n_draws}")
    if n > 2 ** 31 - 1:
        raise ValueError(f"choice draws from at most 2**31 - 1 entries, but a has {n}")
    has_p = p is not None
    if has_p:
        p_dtype = _sampler_args.widest_float()
        p_given = p  # checked on the host when concrete (under jit, p below is traced)
        p = _sampler_args.real_param(p, name="choice p", dtype=p_dtype)
        _sampler_args.check_domain("choice", p=p_given)
        if p.shape != (n,):
            raise ValueError(f"choice p must have shape ({n},) to match a, but was given "
                             f"shape {p.shape}")
        if n and not _inputs.is_traced(p_given):
            _check_concrete_weights(p_given, shape, replace, p_dtype)
    else:
        p = jnp.zeros((0,), jnp.float32)
    if n_draws == 0:
        index = jnp.zeros(shape, jnp.int32)
    else:
        index = _choice_indices(hashed(state), p, shape=shape, n=n, replace=replace,
                                has_p=has_p)
    if population_is_int:
        return index.astype(a.dtype)
    # Invalid traced weights (index -1) take an out-of-range slice: fill values, not a[-1].
    return jnp.take(a, jnp.where(index < 0, n, index), axis=axis, mode="fill")


# -- categorical -----------------------------------------------------------------------------

_LOGITS_ACCEPTS = ("rows (along axis) without NaN, with at least one entry above -inf and at "
                   "most one +inf")


def _logit_rows_are_valid(logits, n_draws: int, replace: bool, xp=jnp):
    """Per row (categories last) whether the logits define a distribution to draw ``n_draws``
    categories from (``xp`` is ``jnp`` for traced logits or ``np`` for concrete): no NaN (it
    would always win the argmax), an entry above ``-inf`` (or, without replacement, at least
    ``n_draws`` of them: Gumbel top-k would otherwise return impossible categories), and at
    most one ``+inf`` (several make softmax undefined; the argmax would pick the first)."""
    possible = xp.sum(logits > -xp.inf, axis=-1)
    return (~xp.any(xp.isnan(logits), axis=-1)
            & (possible >= (1 if replace else n_draws))
            & (xp.sum(logits == xp.inf, axis=-1) <= 1))


def _row_name(row: tuple, axis: int) -> str:
    """``logits[i, :, j]``: batch row ``row`` with the category axis put back at ``axis``."""
    index = [str(i) for i in row]
    index.insert(axis, ":")
    return f"logits[{', '.join(index)}]"


def _entry_name(index: tuple) -> str:
    return f"logits[{', '.join(str(int(i)) for i in index)}]"


def _first(bad) -> tuple:
    """The row-major index of the first True in ``bad``."""
    return tuple(int(i) for i in np.unravel_index(np.argmax(bad), bad.shape))


def _check_concrete_logits(logits, *, axis: int, shape: tuple, n_draws: int, replace: bool,
                           dtype) -> None:
    """ValueError for concrete logits (converted to ``dtype`` on the host, so a closed-over
    constant is checked under ``jit`` too) with a row that :func:`_logit_rows_are_valid`
    rejects, naming the first offending entry or row (indices into ``logits`` as given)."""
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.asarray(logits).astype(dtype)
        rows = np.moveaxis(values, axis, -1)
        valid = _logit_rows_are_valid(rows, n_draws, replace, xp=np)
    if valid.all():
        return
    possible = np.sum(rows > -np.inf, axis=-1)
    several_inf = np.sum(rows == np.inf, axis=-1) > 1
    if np.isnan(values).any():
        received = f"{_entry_name(_first(np.isnan(values)))} = nan"
    elif (possible == 0).any():
        received = f"only -inf in {_row_name(_first(possible == 0), axis)}"
    elif several_inf.any():
        row = _first(several_inf)
        first, second = (_entry_name(row[:axis] + (int(k),) + row[axis:])
                         for k in np.flatnonzero(rows[row] == np.inf)[:2])
        received = (f"{first} = inf and {second} = inf in one row (several +inf make softmax "
                    f"undefined)")
    else:
        row = _first(possible < n_draws)
        raise ValueError(f"categorical without replacement draws at most as many categories "
                         f"as a row of logits has entries above -inf, but "
                         f"{_row_name(row, axis)} has {int(possible[row])} and shape {shape} "
                         f"asks for {n_draws}")
    raise ValueError(_sampler_args.rejected("categorical logits", _LOGITS_ACCEPTS, received))


@partial(jax.jit, static_argnames=("shape", "replace"))
def _categorical_impl(state, logits, *, shape, replace):
    """Category indices of ``shape``; -1 for the draws of every row that
    :func:`_logit_rows_are_valid` rejects (it can only be checked here when traced)."""
    # logits: batch_shape + (n_categories,), categories last.
    batch_shape, n_categories = logits.shape[:-1], logits.shape[-1]
    if replace:
        noise_shape = shape + (n_categories,)
        noise = _simple_continuous.unit_transform(state, noise_shape, logits.dtype, "gumbel")
        index = jnp.argmax(logits + noise, axis=-1)
        # The batch shape broadcasts to the end of shape, so the row flags do too.
        return jnp.where(_logit_rows_are_valid(logits, 1, True), index, -1)
    n_draws = math.prod(shape[:len(shape) - len(batch_shape)])
    noise = _simple_continuous.unit_transform(state, logits.shape, logits.dtype, "gumbel")
    top = lax.top_k(logits + noise, n_draws)[1]          # batch_shape + (n_draws,)
    top = jnp.where(_logit_rows_are_valid(logits, n_draws, False)[..., None], top, -1)
    return jnp.moveaxis(top, -1, 0).reshape(shape)


@sampler
def categorical(state, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities ``softmax(logits)`` along ``axis``, like
    ``jax.random.categorical``.

    Algorithm: Gumbel-max. With replacement, draw ``i`` (row-major over ``shape``) adds
    Gumbel noise from words ``i*n .. i*n+n-1`` to the ``n`` logits and returns the argmax.
    Without replacement (``replace=False``), one Gumbel per logit (word ``j`` for logit ``j``
    in row-major order of the logits with categories last) and the top ``k`` indices, ``k``
    the product of the leading dimensions of ``shape`` beyond the batch shape. The noise is
    computed in float32 (float64 with x64 and float64 logits).

    Every row of ``logits`` (the entries along ``axis`` for one batch index) must define a
    distribution: no NaN, at least one entry above ``-inf`` (without replacement, at least as
    many as the draws per row) and at most one ``+inf`` (a single ``+inf`` is a point mass on
    that category; several make ``softmax`` undefined). Concrete logits (NumPy arrays, jax
    arrays outside ``jit``/``vmap``, constants closed over under ``jit``) that break this are a
    ``ValueError`` naming the first offending entry or row. Traced logits cannot be checked at
    trace time, so every draw from an invalid row is ``-1`` instead (never a valid index); the
    other rows draw as usual. This differs on purpose from ``jax.random.categorical``, which
    always draws a NaN logit, draws category 0 from a row of only ``-inf``, and the first of
    several ``+inf``.

    Args:
        state: an :class:`RNGState`.
        logits: unnormalised log-probabilities; ``-inf`` marks impossible categories.
        axis: the category axis.
        shape: the draws' shape; it must end with a shape the batch shape (``logits`` without
            ``axis``) broadcasts to. None: the batch shape.
        replace: with (default) or without replacement.
        mode: accepted for compatibility (None, "low" or "high" draw the same).

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> jp.categorical(jp.key(0), jnp.log(jnp.array([0.2, 0.8])), shape=(3,)).shape
        (3,)
    """
    _sampler_args.check_state(state, name="categorical")
    _sampler_args.check_mode(mode, name="categorical")
    replace = _sampler_args.check_flag(replace, name="categorical replace")
    dtype = _sampler_args.float_of(logits)
    logits_given = logits  # checked on the host when concrete (under jit, logits is traced)
    logits = _sampler_args.real_param(logits, name="categorical logits", dtype=dtype)
    _sampler_args.check_domain("categorical", logits=logits_given)
    if logits.ndim == 0:
        raise ValueError("categorical logits must have at least one dimension, but was given "
                         "a scalar")
    axis = _check_axis(axis, logits.ndim, name="categorical")
    logits = jnp.moveaxis(logits, axis, -1)
    batch_shape = logits.shape[:-1]
    if shape is None:
        shape = batch_shape
    else:
        shape = _sampler_args.check_shape(shape, name="categorical")
        tail = shape[len(shape) - len(batch_shape):] if batch_shape else ()
        try:
            ok = len(shape) >= len(batch_shape) and tuple(
                jnp.broadcast_shapes(tail, batch_shape)) == tail
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"categorical shape {shape} must end with a shape that the batch "
                             f"shape {batch_shape} broadcasts to")
    if not replace:
        tail = shape[len(shape) - len(batch_shape):] if batch_shape else ()
        if tail != batch_shape:
            raise ValueError(f"categorical without replacement needs shape to end with the "
                             f"batch shape {batch_shape}, but was given {shape}")
        n_draws = math.prod(shape[:len(shape) - len(batch_shape)])
        if n_draws > logits.shape[-1]:
            raise ValueError(f"categorical without replacement draws at most "
                             f"{logits.shape[-1]} categories, but shape {shape} asks for "
                             f"{n_draws}")
    if math.prod(shape) == 0 or logits.shape[-1] == 0:
        if logits.shape[-1] == 0 and math.prod(shape):
            raise ValueError("categorical needs at least one category")
        return jnp.zeros(shape, jnp.int64 if _sampler_args.x64_enabled() else jnp.int32)
    if not _inputs.is_traced(logits_given):
        _check_concrete_logits(logits_given, axis=axis, shape=tuple(shape),
                               n_draws=math.prod(shape[:len(shape) - len(batch_shape)]),
                               replace=replace, dtype=dtype)
    return _categorical_impl(hashed(state), logits, shape=tuple(shape),
                             replace=replace)
