"""Hail's random functions, bit for bit (docs/spec.md section 3; Hail 0.2.139).

Each function draws ONE value (or one array: ``rand_norm2d``, ``shuffle``, ``size=``,
``rand_dirichlet``, ``rand_multi_hyper``) from a state, exactly as Hail's function of the same
name does from the same message, with Hail's parameter names (without ``seed``). To draw many,
``vmap`` over states (or call it per state). Algorithms and stream words: ``docs/hail.md``;
jdistlib's samplers (``rand_pois``, ``rand_gamma``, ``rand_beta``, ``rand_dirichlet``,
``rand_hyper``, ``rand_multi_hyper``, x64 only): ``docs/hail_distributions.md``.

**From Hail to a state.** In Hail, ``hl.init(global_seed=G)`` and ``hl.rand_*(..., seed=S)``
evaluated at uids ``u...`` (for ``hl.utils.range_table(n)`` the row index; inside
``hl.range(start, stop).map(...)`` the element's value, outer loops first; none for a bare
``hl.eval``) draw from the state::

    jp.key(G).split(*u).split_static(-S - 1)

that is: nonce ``G``, the dynamic words ``u...`` and ONE static word ``-S - 1``. (A state with
other static labels is a valid state too, just not one Hail can name.)

Example: ``hl.init(global_seed=0); hl.eval(hl.rand_unif(0, 1, seed=0))`` is 0.2664972565962568,
and with ``global_seed=7`` and uids ``(0, 0)`` (row 0, element 0 of an ``hl.range`` inside a
range table) ``hl.rand_int32(1000, seed=1)`` is 428:

>>> import jax, jax.numpy as jnp, jaxpmac as jp
>>> from jaxpmac import hail
>>> with jax.enable_x64(True):
...     print(float(hail.rand_unif(jp.key(0).split_static(-0 - 1))))
0.2664972565962568
>>> print(int(hail.rand_int32(jp.key(7).split(0, 0).split_static(-1 - 1), 1000)))
428
>>> rows = jax.vmap(lambda i: hail.rand_int32(jp.key(7).split(i).split_static(-2), 10))
>>> rows(jnp.arange(5)).shape
(5,)

**Precision (``jax_enable_x64``).** Hail's floats are float64. With x64 on, ``rand_unif``,
``rand_norm`` and ``rand_bool`` equal Hail's values exactly (``rand_norm`` up to XLA's ``log``,
which may differ from Java's ``StrictMath.log`` in the last bit). Java rounds every product
before the following sum; XLA would fuse them into one multiply-add, which is prevented (and
checked on CPU; not yet checked on GPU). With x64 off (JAX's default):

* ``rand_unif`` returns float32: Hail's exact float64 ``u`` rounded once to the nearest float32,
  then ``u * (upper - lower) + lower`` in float32 (so for the default bounds, exactly
  ``float32(Hail's value)``).
* ``rand_norm`` returns float32: Hail's polar method with each engine double rounded to float32
  and the arithmetic in float32. It is Hail's value to about float32 precision, except in the
  rare states (about one in 10**7) whose acceptance test ``s < 1`` is decided within float32
  rounding of 1, where a different pair may be accepted. Turn x64 on for Hail's values.
* ``rand_bool`` is exact: the float64 ``u`` is compared with ``p`` as IEEE bit patterns in
  ``uint32`` arithmetic, never rounded (a Python float ``p`` is compared as the float64 it is).
* ``rand_int32`` is exact in both modes (int32); ``rand_int64`` needs x64 (TypeError otherwise).
* ``size=`` forms and ``rand_norm2d`` return float32 from float32 arithmetic on each engine
  double rounded once to float32 (as ``rand_norm``); ``rand_cat`` runs its scan in float32
  (Hail's index except within float32 rounding of a category boundary); ``shuffle`` is exact
  (its keys are compared as float64 bit patterns).

All functions work under ``jit`` and ``vmap`` (over states and parameters alike), and read only
the blocks they need: scalar ``rand_unif``, ``rand_bool``, ``rand_cat``, ``rand_int32`` and
``rand_int64()`` one block, the engine's draws (``size=``, ``rand_norm``, ``rand_int64(a)``)
one block per four words, inside ``while_loop``s, until they are done (``rand_norm``: the
first block suffices in about 95% of states).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _words as w
from jaxpmac._hail import _engine as engine
from jaxpmac._message import _inputs
from jaxpmac._samplers._sampler_args import check_state
from jaxpmac._samplers._registry import sampler

__all__ = [
    "rand_beta",
    "rand_bool",
    "rand_cat",
    "rand_dirichlet",
    "rand_gamma",
    "rand_hyper",
    "rand_int32",
    "rand_int64",
    "rand_multi_hyper",
    "rand_norm",
    "rand_norm2d",
    "rand_pois",
    "rand_unif",
    "shuffle",
]

INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1
INT32_RANGE = (-(1 << 31), INT32_MAX)
INT64_RANGE = (-(1 << 63), INT64_MAX)
REAL_ACCEPTS = ("a Python float or int, or a real scalar array (traced or not; vmap over "
                "states to draw many values)")
N_ACCEPTS = ("a Python int in [1, 2**31), or an integer scalar array (traced or not; vmap "
             "over states to draw many values)")
N64_ACCEPTS = ("a Python int in [1, 2**63), or an integer scalar array (traced or not; vmap "
               "over states to draw many values)")
BOUND_ACCEPTS = ("a Python int or an integer scalar array (traced or not), with a < b and "
                 "b - a < 2**{bits} when both are concrete")
SIZE_ACCEPTS = ("None or a tuple (nrows, ncols) of two positive Python ints (Hail's size=; the "
                "result is an (nrows, ncols) array)")
VECTOR_ACCEPTS = ("a sequence of {length}real numbers or a real 1-D array (traced or not) of "
                  "{shape}")
X64_HINT = ("enable them with jax.config.update('jax_enable_x64', True) or within "
            "`with jax.enable_x64(True):`")


def _check_real(value, *, name: str):
    """A real scalar parameter: Python number or 0-d real array."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} accepts {REAL_ACCEPTS}, but was given {_inputs.describe(value)}")
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, (jax.Array, np.ndarray, np.generic)):
        raise TypeError(f"{name} accepts {REAL_ACCEPTS}, but was given {_inputs.describe(value)}")
    dtype = value.dtype
    if not (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)):
        raise TypeError(f"{name} accepts {REAL_ACCEPTS}, but was given {_inputs.describe(value)}")
    if np.ndim(value) != 0:
        raise ValueError(f"{name} accepts {REAL_ACCEPTS}, but was given {_inputs.describe(value)}")
    return value


def _integer_scalar(value, *, name: str, accepts: str):
    """The type and rank checks Hail's integer arguments share: ``value`` (a Python int, or an
    integer scalar array) as a Python int where it is concrete, else the traced array."""
    if isinstance(value, (bool, np.bool_, float)) or not (
            isinstance(value, int)
            or (isinstance(value, (jax.Array, np.ndarray, np.generic))
                and jnp.issubdtype(value.dtype, jnp.integer))):
        raise TypeError(f"{name} accepts {accepts}, but was given {_inputs.describe(value)}")
    if isinstance(value, int):
        return value
    if np.ndim(value) != 0:
        raise ValueError(f"{name} accepts {accepts}, but was given {_inputs.describe(value)}")
    return value if _inputs.is_traced(value) else int(np.asarray(value))


def _given(value, concrete: int) -> str:
    """How an out-of-range concrete integer argument is named: as given, or its value and
    what held it."""
    return str(concrete) if isinstance(value, int) else f"{concrete} ({_inputs.describe(value)})"


def _check_n(n, *, name: str, bits: int = 32):
    """Hail's bound ``n`` of ``rand_int32(n)`` (``bits`` 32) or ``rand_int64(n)`` (64): a
    Python int in ``[1, 2**(bits-1))`` or an integer scalar array, as an int32 / int64."""
    accepts, largest = (N_ACCEPTS, INT32_MAX) if bits == 32 else (N64_ACCEPTS, INT64_MAX)
    value = _integer_scalar(n, name=name, accepts=accepts)
    if _inputs.is_traced(value):
        return value
    if not 1 <= value <= largest:
        raise ValueError(f"{name} accepts {accepts}, but was given {_given(n, value)}")
    return (np.int32 if bits == 32 else np.int64)(value)


def _check_int_bound(value, *, name: str, bits: int):
    """An integer scalar of Hail's int32/int64 argument: Python int in range, or int array."""
    accepts = BOUND_ACCEPTS.format(bits=bits - 1)
    low, high = INT32_RANGE if bits == 32 else INT64_RANGE
    checked = _integer_scalar(value, name=name, accepts=accepts)
    if not _inputs.is_traced(checked) and not low <= checked <= high:
        raise ValueError(f"{name} accepts {accepts} (an int{bits}), but was given "
                         f"{_given(value, checked)}")
    return checked


def _bound_difference(a, b, *, fn: str, bits: int):
    """Hail's ``b - a`` (wrapping in int32/int64), checked ``1 <= b - a < 2**(bits-1)`` when
    both are concrete."""
    a = _check_int_bound(a, name=f"{fn} a", bits=bits)
    b = _check_int_bound(b, name=f"{fn} b", bits=bits)
    if isinstance(a, int) and isinstance(b, int):
        if not 1 <= b - a <= (1 << (bits - 1)) - 1:
            raise ValueError(f"{fn} accepts a < b with b - a < 2**{bits - 1} (Hail draws "
                             f"rand_{'int32' if bits == 32 else 'int64'}(b - a) + a), but was "
                             f"given a={a}, b={b} (b - a = {b - a})")
    dtype = np.int32 if bits == 32 else np.int64
    if isinstance(a, int) and isinstance(b, int):
        return dtype(a), dtype(b - a)
    a, b = (jnp.asarray(v, dtype) if isinstance(v, int) else v.astype(dtype) for v in (a, b))
    return a, b - a          # wraps, as Hail's int32 / int64 arithmetic


def _check_size(size, *, name: str):
    """Hail's ``size=``: None or two positive ints ``(nrows, ncols)``."""
    if size is None:
        return None
    if not isinstance(size, (tuple, list)) or len(size) != 2 or any(
            isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer))
            for d in size):
        raise TypeError(f"{name} accepts {SIZE_ACCEPTS}, but was given {_inputs.describe(size)}")
    nrows, ncols = (int(d) for d in size)
    if nrows < 1 or ncols < 1:
        raise ValueError(f"{name} accepts {SIZE_ACCEPTS}, but was given {size!r}")
    return nrows, ncols


def _check_vector(value, *, name: str, length: int | None):
    """A real 1-D parameter (Hail's array<float64>): a sequence of numbers or a 1-D array."""
    accepts = VECTOR_ACCEPTS.format(
        length=f"{length} " if length else "one or more ",
        shape=f"shape ({length},)" if length else "nonzero length")
    given = _inputs.describe(value)
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(
                v, (int, float, np.integer, np.floating, jax.Array, np.ndarray)) for v in value):
            raise TypeError(f"{name} accepts {accepts}, but was given {given}")
        value = jnp.asarray(value, engine.float_dtype())
    if not isinstance(value, (jax.Array, np.ndarray, np.generic)):
        raise TypeError(f"{name} accepts {accepts}, but was given {given}")
    if not (jnp.issubdtype(value.dtype, jnp.floating) or jnp.issubdtype(value.dtype, jnp.integer)):
        raise TypeError(f"{name} accepts {accepts}, but was given {given}")
    if np.ndim(value) != 1 or (length and value.shape[0] != length) or value.shape[0] == 0:
        raise ValueError(f"{name} accepts {accepts}, but was given {given}")
    return value


def _column_major(values: jax.Array, nrows: int, ncols: int) -> jax.Array:
    """Hail's ``size=`` layout: draw ``j * nrows + i`` is element ``[i, j]``."""
    return values.reshape(ncols, nrows).T


@sampler(prefix="hail_")
def rand_unif(state, lower=0.0, upper=1.0, size=None) -> jax.Array:
    """Hail's ``hl.rand_unif(lower, upper, size=size)``: uniform floats in ``[lower, upper)``.

    Without ``size``, ``u`` is built from output block ``T_0`` alone, as if an infinitely precise
    uniform fraction were rounded down to a float64 (every float64 in ``(0, 1)`` can occur); the
    result is ``u * (upper - lower) + lower``. On XLA:CPU, subnormal float64 bounds and results
    (magnitude below 2.2e-308) are flushed to zero, where Hail's Java keeps them.

    With ``size=(nrows, ncols)`` (Hail's ``rand_unif_nd``) one engine draws ``nrows * ncols``
    values ``lower + (upper - lower) * nextDouble()`` in column-major order: element ``[i, j]``
    is draw ``j * nrows + i``. (So ``size=(1, 1)`` is not the scalar value: the engine's
    ``nextDouble`` and the product's order differ from the scalar's.)

    Args:
        state: an :class:`~jaxpmac.RNGState` (see the module docstring for Hail's mapping).
        lower: the lower bound: a Python number or a real scalar array.
        upper: the upper bound: a Python number or a real scalar array.
        size: None (one value) or ``(nrows, ncols)``, two positive Python ints.

    Returns:
        A scalar, or an ``(nrows, ncols)`` array: float64 equal to Hail's values when
        ``jax_enable_x64`` is on; float32 when it is off (Hail's ``u`` -- or each
        ``nextDouble`` -- correctly rounded to float32, then the affine map in float32).

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> s = jp.key(0).split(0).split_static(-1 - 1)   # global_seed=0, seed=1, row 0
        >>> with jax.enable_x64(True):
        ...     print(float(hail.rand_unif(s)))
        0.543383983978762
        >>> print(float(hail.rand_unif(s, 10.0, 20.0)) // 1)
        15.0
        >>> hail.rand_unif(s, -1.0, 2.0, size=(2, 3)).shape
        (2, 3)
    """
    check_state(state, name="rand_unif")
    lower = _check_real(lower, name="rand_unif lower")
    upper = _check_real(upper, name="rand_unif upper")
    size = _check_size(size, name="rand_unif size")
    final_tweak, h = engine.state_hash(state)
    if size is None:
        return engine.uniform(h, lower, upper, final_tweak=final_tweak)
    values = engine.uniform_sequence(h, lower, upper, final_tweak=final_tweak,
                                     count=size[0] * size[1])
    return _column_major(values, *size)


@sampler(prefix="hail_")
def rand_norm(state, mean=0.0, sd=1.0, size=None) -> jax.Array:
    """Hail's ``hl.rand_norm(mean, sd, size=size)``: normal floats (Marsaglia's polar method).

    Hail's engine draws pairs ``v1 = 2 * nextDouble() - 1``, ``v2 = 2 * nextDouble() - 1``
    until ``0 < s = v1**2 + v2**2 < 1``; with ``m = sqrt(-2 log(s) / s)``, ``nextGaussian``
    returns ``v1 * m`` and keeps ``v2 * m`` for its next call. A value is
    ``mean + sd * nextGaussian()``. The loop is a ``lax.while_loop`` that reads output blocks
    lazily, so any number of rejections is reproduced, under ``jit`` and ``vmap`` alike.

    Without ``size`` one value is drawn (the first normal of the first accepted pair). With
    ``size=(nrows, ncols)`` (Hail's ``rand_norm_nd``) one engine draws ``nrows * ncols``
    values -- consecutive values are the two normals of one pair -- in column-major order:
    element ``[i, j]`` is draw ``j * nrows + i``.

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        mean: a Python number or a real scalar array.
        sd: a Python number or a real scalar array.
        size: None (one value) or ``(nrows, ncols)``, two positive Python ints.

    Returns:
        A scalar, or an ``(nrows, ncols)`` array: float64 when ``jax_enable_x64`` is on --
        Hail's values, the ``log`` being this project's fdlibm algorithm (Java's
        ``StrictMath.log``); float32 when it is off -- Hail's method with the engine's doubles
        rounded to float32 and float32 arithmetic: Hail's value to about float32 precision,
        except in rare states (about one in 10**7) where rounding flips the acceptance test
        and a different pair is accepted. On XLA:CPU, subnormal float64 ``mean``, ``sd`` and
        results (magnitude below 2.2e-308) are flushed to zero, where Hail's Java keeps them.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> s = jp.key(0).split_static(-0 - 1)            # global_seed=0, seed=0
        >>> with jax.enable_x64(True):
        ...     print(round(float(hail.rand_norm(s)), 12))
        ...     print(hail.rand_norm(s, 0.0, 1.0, size=(3, 2)).shape)
        0.10191492175
        (3, 2)
    """
    check_state(state, name="rand_norm")
    mean = _check_real(mean, name="rand_norm mean")
    sd = _check_real(sd, name="rand_norm sd")
    size = _check_size(size, name="rand_norm size")
    final_tweak, h = engine.state_hash(state)
    if size is None:
        return engine.normal(h, mean, sd, final_tweak=final_tweak)
    values = engine.normal_sequence(h, mean, sd, final_tweak=final_tweak,
                                    count=size[0] * size[1])
    return _column_major(values, *size)


@sampler(prefix="hail_")
def rand_int32(state, a, b=None) -> jax.Array:
    """Hail's ``hl.rand_int32(a)`` (uniform in ``[0, a)``) or ``hl.rand_int32(a, b)`` (in
    ``[a, b)``), exactly.

    ``rand_int32(a)`` is Hail's engine ``nextInt(a)`` (the nearly divisionless method of Swift's
    ``random(in:)``): ``x = nextInt()`` (the HIGH half of ``T_0[0]``), ``r = (a * x) >> 32``;
    when the fraction ``(a * x) mod 2**32`` is at least ``2**32 - a``, two more nextInt
    (``T_0[0]``'s low half, ``T_0[1]``'s high half) decide a carry into ``r``. Both paths are
    computed and selected per lane (no loop: at most three 32-bit draws, all from ``T_0``).
    ``rand_int32(a, b)`` is, as in Hail's Python, ``rand_int32(b - a) + a`` in int32
    arithmetic.

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        a: without ``b``, the bound ``n`` of ``[0, n)``: a Python int in ``[1, 2**31)`` or an
            integer scalar array; with ``b``, the lower bound: a Python int or an integer
            scalar array (int32 values).
        b: None, or the upper bound (exclusive), as ``a``. Concrete bounds are checked
            (``1 <= b - a < 2**31``); traced ones are converted to int32 (wrapping), and for a
            traced bound ``n <= 0`` (``b - a <= 0``) the result is what Hail returns for it
            (the high word of ``n * x``, then ``+ a``), which is not in the range.

    Returns:
        An int32 scalar, in both x64 modes.

    Example:
        >>> import jaxpmac as jp
        >>> from jaxpmac import hail
        >>> print(int(hail.rand_int32(jp.key(0).split_static(-1), 1000)))
        65
        >>> print(int(hail.rand_int32(jp.key(0).split_static(-1), 10, 15)))
        10
    """
    check_state(state, name="rand_int32")
    if b is None:
        offset, n = None, _check_n(a, name="rand_int32 a")
    else:
        offset, n = _bound_difference(a, b, fn="rand_int32", bits=32)
    final_tweak, h = engine.state_hash(state)
    value = engine.bounded_int32(h, n, final_tweak=final_tweak)
    return value if offset is None else value + offset


@sampler(prefix="hail_")
def rand_int64(state, a=None, b=None) -> jax.Array:
    """Hail's ``hl.rand_int64()``, ``hl.rand_int64(a)`` (in ``[0, a)``) or
    ``hl.rand_int64(a, b)`` (in ``[a, b)``), as int64.

    * ``rand_int64()``: the state's first 64-bit stream word ``T_0[0]``.
    * ``rand_int64(a)``: Hail's engine ``nextLong(a)``, Java's method: ``x = nextLong() >>> 1``
      (63 bits), ``r = x % a``, drawn again (the next word) while ``x - r + (a - 1)``
      overflows; a ``lax.while_loop`` (for ``a`` near ``2**63`` about half the words are
      redrawn; for ``a`` below ``2**40``, about one in ``2**23`` or fewer).
    * ``rand_int64(a, b)``: ``rand_int64(b - a) + a`` in int64 arithmetic, as Hail's Python.

    Needs ``jax_enable_x64`` (TypeError otherwise, at trace time). With x64 off, the word of
    ``rand_int64()`` is ``jaxpmac.bits(state, (2,), jnp.uint32)`` (low half, then high half).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        a: None; without ``b`` the bound ``n`` of ``[0, n)``: a Python int in ``[1, 2**63)``
            or an integer scalar array; with ``b``, the lower bound (an int64 value).
        b: None, or the upper bound (exclusive); needs ``a``. Concrete bounds are checked
            (``1 <= b - a < 2**63``); traced ones are converted to int64 (wrapping) and a
            traced bound ``n <= 0`` gives what ``x % n`` gives, not an error (Hail raises
            Java's ArithmeticException for ``n = 0``; jaxpmac returns ``lax.rem``'s value).

    Returns:
        An int64 scalar.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     print(int(hail.rand_int64(jp.key(0).split_static(-1))))
        ...     print(int(hail.rand_int64(jp.key(0).split_static(-1), 10)))
        1217282681397866191
        5
    """
    check_state(state, name="rand_int64")
    if not w.x64_enabled():
        raise TypeError("rand_int64 returns int64, which needs 64-bit types: " + X64_HINT
                        + "; with them off, jaxpmac.bits(state, (2,), jnp.uint32) gives the "
                        "same word as rand_int64()'s (low half, high half)")
    if a is None:
        if b is not None:
            raise TypeError(f"rand_int64 b needs a (Hail's rand_int64(a, b) draws in [a, b)), "
                            f"but was given a=None, b={_inputs.describe(b)}")
        final_tweak, h = engine.state_hash(state)
        return engine.word0_int64(h, final_tweak=final_tweak)
    if b is None:
        offset, n = None, _check_n(a, name="rand_int64 a", bits=64)
    else:
        offset, n = _bound_difference(a, b, fn="rand_int64", bits=64)
    final_tweak, h = engine.state_hash(state)
    value = engine.bounded_int64(h, n, final_tweak=final_tweak)
    return value if offset is None else value + offset


@sampler(prefix="hail_")
def rand_bool(state, p) -> jax.Array:
    """Hail's ``hl.rand_bool(p)``: ``rand_unif(0, 1) < p``, exactly in both x64 modes.

    With x64 off the float64 ``u`` is never rounded: it is compared with ``p`` as IEEE bit
    patterns in ``uint32`` arithmetic. A Python float (or any concrete ``p``) is compared as the
    float64 it is; a traced ``p`` has its own dtype's value (float32 at most with x64 off).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        p: the probability of True: a Python number or a real scalar array (``p <= 0`` or NaN
            gives False, ``p >= 1`` True).

    Returns:
        A bool scalar.

    Example:
        >>> import jaxpmac as jp
        >>> from jaxpmac import hail
        >>> print(bool(hail.rand_bool(jp.key(0).split_static(-1), 0.3)))
        True
    """
    check_state(state, name="rand_bool")
    p = _check_real(p, name="rand_bool p")
    final_tweak, h = engine.state_hash(state)
    if w.x64_enabled():
        return engine.bernoulli_x64(h, p, final_tweak=final_tweak)
    if _inputs.is_traced(p):
        p_bits = engine.positive_float32_as_double_bits(jnp.asarray(p))
    else:
        hi, lo = engine.positive_double_bits_static(float(np.asarray(p, np.float64)))
        p_bits = w.Pair(np.uint32(hi), np.uint32(lo))
    return engine.bernoulli_exact(h, p_bits, final_tweak=final_tweak)


@sampler(prefix="hail_")
def rand_norm2d(state, mean=None, cov=None) -> jax.Array:
    """Hail's ``hl.rand_norm2d(mean, cov)``: a 2-D normal vector, shape ``(2,)``.

    As Hail's Python: ``x[k] = rand_norm(0, 1)`` drawn at ``state.split(k)`` for ``k = 0, 1``
    (Hail's ``hl.range(0, 2).map(...)`` appends the element index to the message), then with
    ``mean = [m1, m2]``, ``cov = [s11, s12, s22]``::

        [m1 + sqrt(s11) * x[0],
         m2 + (s12 / sqrt(s11)) * x[0] + sqrt(s22 - s12 * s12 / s11) * x[1]]

    each operation rounded as Java's (correctly rounded ``sqrt`` and ``/``, no fused
    multiply-add). ``cov`` is not checked, as in Hail (``s22 - s12**2 / s11 < 0`` gives NaN).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        mean: None (``[0, 0]``) or two real numbers: a sequence or a real array of shape
            ``(2,)`` (traced or not).
        cov: None (``[1, 0, 1]``) or the covariance ``[s11, s12, s22]``: three real numbers,
            as ``mean``.

    Returns:
        A ``(2,)`` array: float64 equal to Hail's value when ``jax_enable_x64`` is on; float32
        when it is off (the float32 normals of :func:`rand_norm` and float32 arithmetic).

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> s = jp.key(-3).split_static(8)                # global_seed=-3, seed=-9
        >>> with jax.enable_x64(True):
        ...     print(hail.rand_norm2d(s).tolist())
        [0.4846102911739796, 0.7673185801166219]
    """
    check_state(state, name="rand_norm2d")
    dtype = engine.float_dtype()
    mean = jnp.zeros(2, dtype) if mean is None else _check_vector(mean, name="rand_norm2d mean",
                                                                  length=2)
    cov = (jnp.asarray([1.0, 0.0, 1.0], dtype) if cov is None
           else _check_vector(cov, name="rand_norm2d cov", length=3))
    normals = []
    for k in range(2):
        final_tweak, h = engine.state_hash(state.split(k))
        normals.append(engine.normal(h, 0.0, 1.0, final_tweak=final_tweak))
    return engine.bivariate_normal(mean, cov, *normals)


@sampler(prefix="hail_")
def rand_cat(state, prob) -> jax.Array:
    """Hail's ``hl.rand_cat(prob)``: an index ``i`` with probability ``prob[i] / sum(prob)``.

    As Hail's ``rand_cat``: ``r = u * sum(prob)``, with ``u`` the uniform of
    :func:`rand_unif` (from output block ``T_0`` alone, not the engine) and the sum taken left
    to right; then from ``i = 0``, while ``r > prob[i]``: ``r -= prob[i]``, ``i += 1``. The
    weights are not checked, as in Hail (if rounding leaves ``r`` above every weight, the
    result is ``len(prob)``, as Hail's).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        prob: the unnormalized weights: a non-empty sequence of real numbers or a real 1-D
            array (traced or not; its length is static).

    Returns:
        An int32 scalar. With ``jax_enable_x64`` on, Hail's value exactly; with it off, the
        same method in float32 (``u`` and the weights rounded to float32): Hail's value except
        where ``u * sum`` falls within float32 rounding of a boundary between categories.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> s = jp.key(-3).split(5, -817574220).split_static(-12)
        >>> with jax.enable_x64(True):
        ...     print(int(hail.rand_cat(s, [0.0, 1.7, 2.0])))
        1
    """
    check_state(state, name="rand_cat")
    prob = _check_vector(prob, name="rand_cat prob", length=None)
    final_tweak, h = engine.state_hash(state)
    return engine.categorical(h, prob, final_tweak=final_tweak)


@sampler(prefix="hail_")
def shuffle(state, a, *, uids=None) -> jax.Array:
    """Hail's ``hl.shuffle(a)``: ``a`` permuted, sorted by one uniform key per element.

    As Hail's Python (``sorted(a, key=lambda _: hl.rand_unif(0, 1))``): element ``j``'s key is
    :func:`rand_unif` drawn at ``state.split(uids[j])``, where ``uids[j]`` is the word Hail's
    map over the array appends to the message for that element. Hail's ``shuffle`` ignores
    ``seed=``: its state's static word is an automatic uid (see the module docstring). The keys
    are compared as float64 bit patterns, exactly in both x64 modes; the sort is stable (equal
    keys -- probability about ``n**2 / 2**54`` -- keep index order; Hail's order for ties was
    not checked).

    Which word Hail appends depends on how the array was built: an array literal or any
    stored array gives each element its index (the default, ``uids=None``); ``hl.range(start,
    stop, step)`` gives each element its own *value*, so ``hl.shuffle(hl.range(3, 9))`` is
    ``shuffle(s, a, uids=a)`` with ``a = jnp.arange(3, 9)``; a ``filter`` or ``map`` keeps the
    words of the elements it came from.

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        a: the array to permute: a sequence of numbers or a 1-D array of any dtype (its length
            is static).
        uids: keyword-only; ``None`` (each element's index) or one message word per element
            of ``a``: a sequence of Python ints in ``[-2**63, 2**64)`` or a 1-D integer array
            (traced or not) of ``a``'s length. Signed values sign-extend to 64 bits, as in
            :meth:`~jaxpmac.RNGState.split`.

    Returns:
        ``a`` (as an array, its own dtype) permuted.

    Example:
        >>> import jaxpmac as jp
        >>> from jaxpmac import hail
        >>> s = jp.key(-3).split(14, 18).split_static(2)   # automatic static uid 2
        >>> print(hail.shuffle(s, [0, 1, 2, 3, 4]).tolist())
        [4, 0, 3, 2, 1]
        >>> r = jnp.arange(3, 8)                            # hl.shuffle(hl.range(3, 8))
        >>> print(hail.shuffle(s, r, uids=r).tolist())
        [4, 7, 3, 6, 5]
    """
    check_state(state, name="shuffle")
    if isinstance(a, (list, tuple)):
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(
                v, (int, float, np.integer, np.floating)) for v in a):
            raise TypeError(f"shuffle a accepts a sequence of numbers or a 1-D array, but was "
                            f"given {_inputs.describe(a)}")
        a = jnp.asarray(a)
    if not isinstance(a, (jax.Array, np.ndarray)):
        raise TypeError(f"shuffle a accepts a sequence of numbers or a 1-D array, but was given "
                        f"{_inputs.describe(a)}")
    if np.ndim(a) != 1:
        raise ValueError(f"shuffle a accepts a sequence of numbers or a 1-D array, but was "
                         f"given {_inputs.describe(a)}")
    a = jnp.asarray(a)
    uids = _check_uids(uids, length=a.shape[0])
    if a.shape[0] == 0:
        return a
    return engine.sort_by_keys(a, _shuffle_keys(state, uids))


UIDS_ACCEPTS = ("None (each element's index) or one word per element of a: a sequence of "
                "Python ints in [-2**63, 2**64) or a 1-D integer array (traced or not) of a's "
                "length ({length})")


def _check_uids(uids, *, length: int):
    """``shuffle``'s ``uids``: the index words ``0 .. length - 1`` (Python ints) for ``None``,
    else the argument checked: a list of Python ints (64-bit words) for a concrete one, the
    1-D integer array itself for a traced one."""
    if uids is None:
        return list(range(length))
    accepts = UIDS_ACCEPTS.format(length=length)
    rejected = f"shuffle uids accepts {accepts}, but was given {_inputs.describe(uids)}"
    if isinstance(uids, (list, tuple)):
        if not all(isinstance(u, (int, np.integer)) and not isinstance(u, (bool, np.bool_))
                   for u in uids):
            raise TypeError(rejected)
        words = [_inputs.int_word(int(u), name="shuffle uids") for u in uids]
    elif isinstance(uids, (jax.Array, np.ndarray)):
        if np.ndim(uids) != 1:
            raise ValueError(rejected)
        words = _inputs.words_of(uids, name="shuffle uids", allow_vector=True, accepts=accepts)
    else:
        raise TypeError(rejected)
    if len(words) != length:
        raise ValueError(rejected)
    return words if all(w.is_static(word) for word in words) else uids


def _shuffle_keys(state, uids) -> w.Pair:
    """Bits of ``rand_unif`` at ``state.split(u)`` for each ``u`` in ``uids``, as ``(n,)``
    arrays.

    ``uids``: Python ints (64-bit words) or a traced 1-D integer array. A concrete state with
    concrete words is hashed at trace time (in Python: no program per message length); else
    the hash is in the program, vmapped over the words.
    """
    if isinstance(uids, list) and state.is_static:
        hashes = [engine.state_hash(state.split(u)) for u in uids]
        h = tuple(w.Pair(jnp.stack([jnp.asarray(hj[k].hi, jnp.uint32) for _, hj in hashes]),
                         jnp.stack([jnp.asarray(hj[k].lo, jnp.uint32) for _, hj in hashes]))
                  for k in range(len(hashes[0][1])))
        return engine.uniform_key_bits(h, final_tweak=hashes[0][0])

    def key(u):
        final_tweak, h = engine.state_hash(state.split(u))
        return engine.uniform_key_bits(h, final_tweak=final_tweak)

    if isinstance(uids, list):
        array = _word_array(uids)
        if array is None:   # 64-bit words without x64: one hash per word in the program
            return jax.tree.map(lambda *parts: jnp.stack(parts), *(key(u) for u in uids))
        uids = array
    return jax.vmap(key)(uids)


def _word_array(words: list):
    """64-bit words as an integer array that sign-extends back to them: int32 where they all
    are sign-extended 32-bit values (indices, ``hl.range`` values), int64 with x64 on; ``None``
    where neither holds."""
    signed = [u - (1 << 64) if u >> 63 else u for u in words]
    if all(INT32_RANGE[0] <= u <= INT32_MAX for u in signed):
        return jnp.asarray(np.array(signed, np.int32))
    if w.x64_enabled():
        return jnp.asarray(np.array(signed, np.int64))
    return None


# jdistlib-based functions
#
# Hail runs jdistlib 0.4.5's samplers (R's nmath, ported to Java) on its engine for these; the
# ports are in jaxpmac._hail._jdistlib (docs/hail_distributions.md). They compute in float64
# only: Hail's integers (rand_pois's counts, rand_hyper's) come out of float64 rejection
# tests, so a float32 computation would give other integers, not just rounded values.

from jaxpmac._hail import _jdistlib  # noqa: E402

JDISTLIB_X64 = ("{name} reproduces Hail's float64 computation (jdistlib's rejection samplers), "
                "which needs 64-bit types: " + X64_HINT)
NONNEGATIVE_ACCEPTS = ("a non-negative Python float or int, or a real scalar array (traced or "
                       "not; vmap over states to draw many values)")
POSITIVE_ACCEPTS = ("a positive Python float or int, or a real scalar array (traced or not; "
                    "vmap over states to draw many values)")
COUNT_ACCEPTS = ("a Python int in [0, 2**31), or an integer scalar array (traced or not)")


def _needs_x64(name: str):
    if not w.x64_enabled():
        raise TypeError(JDISTLIB_X64.format(name=name))


def _check_bound(value, *, name: str, accepts: str, ok) -> object:
    """A real scalar that, where concrete, must satisfy ``ok`` (else a ValueError naming it)."""
    value = _check_real(value, name=name)
    if not _inputs.is_traced(value):
        concrete = float(np.asarray(value, np.float64))
        if not ok(concrete):
            raise ValueError(f"{name} accepts {accepts}, but was given {concrete!r}")
    return value


def _check_count(value, *, name: str) -> object:
    """An int32 count (Hail's ``expr_int32``): concrete values must lie in ``[0, 2**31)``."""
    if isinstance(value, (bool, np.bool_, float)):
        raise TypeError(f"{name} accepts {COUNT_ACCEPTS}, but was given "
                        f"{_inputs.describe(value)}")
    if isinstance(value, int):
        if not 0 <= value <= INT32_MAX:
            raise ValueError(f"{name} accepts {COUNT_ACCEPTS}, but was given {value}")
        return np.int32(value)
    if (not isinstance(value, (jax.Array, np.ndarray, np.generic))
            or not jnp.issubdtype(value.dtype, jnp.integer) or np.ndim(value) != 0):
        raise TypeError(f"{name} accepts {COUNT_ACCEPTS}, but was given "
                        f"{_inputs.describe(value)}")
    if not _inputs.is_traced(value):
        concrete = int(np.asarray(value))
        if not 0 <= concrete <= INT32_MAX:
            raise ValueError(f"{name} accepts {COUNT_ACCEPTS}, but was given {concrete}")
    return value


@sampler(prefix="hail_")
def rand_pois(state, lamb) -> jax.Array:
    """Hail's ``hl.rand_pois(lamb)``: a Poisson count, as a float (Hail returns ``4.0``).

    jdistlib's ``Poisson.random`` (R's ``rpois``, Ahrens & Dieter 1982) on Hail's engine: for
    ``lamb < 10``, inversion of one ``nextDouble`` against the cumulative table
    ``pp[0..35]`` (redrawn past ``pp[35]``); from 10 on, ``lamb + sqrt(lamb) * z`` with ``z``
    jdistlib's normal (two ``nextDouble``, inverted with AS 241), accepted at once above
    ``floor(lamb - 1.1484)``, else squeeze, quotient and Laplace-hat tests, redrawing with
    ``exp_rand`` and ``nextDouble`` (docs/hail_distributions.md). Bit for bit with Hail
    (``jax_enable_x64`` required).

    Args:
        state: an :class:`~jaxpmac.RNGState` (see the module docstring for Hail's mapping).
        lamb: the mean, ``>= 0``: a Python number or a real scalar array. A concrete negative
            value is a ValueError; a traced one gives NaN, as Hail does (and 0 gives 0).

    Returns:
        A float64 scalar: Hail's value.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     print(float(hail.rand_pois(jp.key(1).split_static(-5 - 1), lamb=3.0)))
        2.0
    """
    check_state(state, name="rand_pois")
    _needs_x64("rand_pois")
    lamb = _check_bound(lamb, name="rand_pois lamb", accepts=NONNEGATIVE_ACCEPTS,
                        ok=lambda x: x >= 0)
    final_tweak, h = engine.state_hash(state)
    return _jdistlib.pois(h, lamb, final_tweak=final_tweak)


@sampler(prefix="hail_")
def rand_gamma(state, shape, scale) -> jax.Array:
    """Hail's ``hl.rand_gamma(shape, scale)``: a gamma variate with this shape and SCALE.

    jdistlib's ``Gamma.random(shape, scale)`` (R's ``rgamma``): below shape 1 Ahrens &
    Dieter's GS (``p = (1 + shape / e) u``, then ``x = -log((e' - p) / shape)`` or
    ``p**(1 / shape)``, accepted against ``exp_rand``); from 1 on their GD (a normal deviate
    with immediate, squeeze and quotient acceptance, then a double-exponential hat). The
    result is ``scale * x``. Bit for bit with Hail (``jax_enable_x64`` required).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        shape: ``>= 0`` (0 gives 0.0, as in Hail): a Python number or a real scalar array.
        scale: ``>= 0`` (0 gives 0.0): a Python number or a real scalar array. Concrete
            negative values are a ValueError; traced ones give NaN as in Hail (and infinite or
            NaN ones +inf, as jdistlib returns).

    Returns:
        A float64 scalar: Hail's value.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     x = hail.rand_gamma(jp.key(1).split(2, 458767848, 15).split_static(-6), 0.3, 1.0)
        ...     print(float(x))
        0.0028467544396454537
    """
    check_state(state, name="rand_gamma")
    _needs_x64("rand_gamma")
    shape = _check_bound(shape, name="rand_gamma shape", accepts=NONNEGATIVE_ACCEPTS,
                         ok=lambda x: x >= 0)
    scale = _check_bound(scale, name="rand_gamma scale", accepts=NONNEGATIVE_ACCEPTS,
                         ok=lambda x: x >= 0)
    final_tweak, h = engine.state_hash(state)
    return _jdistlib.gamma(h, shape, scale, final_tweak=final_tweak)


@sampler(prefix="hail_")
def rand_beta(state, a, b, lower=None, upper=None) -> jax.Array:
    """Hail's ``hl.rand_beta(a, b[, lower, upper])``: a beta variate, optionally truncated.

    jdistlib's ``Beta.random(a, b)`` (R's ``rbeta``, Cheng 1978: BC when ``min(a, b) <= 1``,
    else BB; two ``nextDouble`` per candidate). With ``lower``/``upper``, Hail redraws from the
    same engine until ``lower <= x <= upper`` (one of them alone defaults the other to 0 or 1,
    as Hail's Python does; Hail 0.2.139 itself fails on that form). Bit for bit with Hail
    (``jax_enable_x64`` required).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        a: ``> 0``: a Python number or a real scalar array.
        b: ``> 0``: a Python number or a real scalar array. Concrete non-positive values are a
            ValueError; traced ones give NaN, as in Hail.
        lower: optional lower bound of the truncation.
        upper: optional upper bound. Concrete ``lower > upper`` is a ValueError (Hail would
            loop forever); so is a truncation with no mass, which no check can see: it loops.

    Returns:
        A float64 scalar: Hail's value.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     print(float(hail.rand_beta(jp.key(1).split_static(-6), 0.5, 0.5, 0.2, 0.8)))
        0.7912202898593984
    """
    check_state(state, name="rand_beta")
    _needs_x64("rand_beta")
    a = _check_bound(a, name="rand_beta a", accepts=POSITIVE_ACCEPTS, ok=lambda x: x > 0)
    b = _check_bound(b, name="rand_beta b", accepts=POSITIVE_ACCEPTS, ok=lambda x: x > 0)
    bounded = lower is not None or upper is not None
    lower = _check_real(0.0 if lower is None else lower, name="rand_beta lower")
    upper = _check_real(1.0 if upper is None else upper, name="rand_beta upper")
    if bounded and not (_inputs.is_traced(lower) or _inputs.is_traced(upper)):
        lo, hi = float(np.asarray(lower, np.float64)), float(np.asarray(upper, np.float64))
        if not lo <= hi:
            raise ValueError(f"rand_beta lower and upper accept lower <= upper (a non-empty "
                             f"interval), but were given lower={lo!r}, upper={hi!r}")
    final_tweak, h = engine.state_hash(state)
    return _jdistlib.beta(h, a, b, lower, upper, final_tweak=final_tweak, bounded=bounded)


def _check_real_vector(value, *, name: str):
    """A 1-D real array-like (list of numbers or an array), returned as a float64 array."""
    accepts = "a non-empty list of non-negative numbers or a 1-D real array"
    if isinstance(value, (list, tuple)):
        if not value or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                for v in value):
            raise TypeError(f"{name} accepts {accepts}, but was given {value!r}")
        value = np.asarray(value, np.float64)
    if (not isinstance(value, (jax.Array, np.ndarray))
            or not (jnp.issubdtype(value.dtype, jnp.floating)
                    or jnp.issubdtype(value.dtype, jnp.integer))
            or np.ndim(value) != 1 or value.shape[0] == 0):
        raise TypeError(f"{name} accepts {accepts}, but was given {_inputs.describe(value)}")
    if not _inputs.is_traced(value):
        concrete = np.asarray(value, np.float64)
        if not (concrete >= 0).all():
            raise ValueError(f"{name} accepts {accepts}, but was given {concrete.tolist()}")
    return value


@sampler(prefix="hail_")
def rand_dirichlet(state, a) -> jax.Array:
    """Hail's ``hl.rand_dirichlet(a)``: a point of the simplex, one float per element of ``a``.

    Hail's Python: ``g[j] = rand_gamma(a[j], 1)`` drawn at the message with ``j`` appended
    (``state.split(j)`` here), ``0.0`` where ``a[j] == 0``, then ``g / sum(g)`` (the sum left to
    right). Bit for bit with Hail (``jax_enable_x64`` required).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        a: the concentrations, ``>= 0``: a list of numbers or a 1-D real array (its length is
            static; its values may be traced). All zeros give NaNs (0 / 0), as in Hail.

    Returns:
        A float64 array of ``a``'s length.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     x = hail.rand_dirichlet(jp.key(-3).split_static(8), [0.5, 2.0, 0.0, 3.0])
        ...     print([round(float(v), 12) for v in x])
        [0.089731662764, 0.542055607022, 0.0, 0.368212730214]
    """
    check_state(state, name="rand_dirichlet")
    _needs_x64("rand_dirichlet")
    a = _check_real_vector(a, name="rand_dirichlet a")
    hashes = [engine.state_hash(state.split(j)) for j in range(a.shape[0])]
    final_tweak = hashes[0][0]
    hs = tuple(w.Pair(jnp.stack([h[1][i].hi for h in hashes]),
                      jnp.stack([h[1][i].lo for h in hashes])) for i in range(4))
    return _jdistlib.dirichlet(hs, a, final_tweak=final_tweak)


@sampler(prefix="hail_")
def rand_hyper(state, popsize, ngood, nsample) -> jax.Array:
    """Hail's ``hl.rand_hyper(popsize, ngood, nsample)``: good items in a sample drawn without
    replacement, an int32.

    ``(int) rhyper(ngood, popsize - ngood, nsample)`` with jdistlib's ``HyperGeometric.random``
    (R's ``rhyper``, Kachitvichyanukul & Schmeiser 1985: HIN inversion when the mode is within
    10 of the smallest value, else H2PE), on Hail's engine. Bit for bit with Hail
    (``jax_enable_x64`` required: the algorithm is float64 throughout).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        popsize: the population size: a Python int in ``[0, 2**31)`` or an integer scalar
            array.
        ngood: the good items, ``<= popsize``.
        nsample: the sample size, ``<= popsize``. Concrete values outside these ranges are a
            ValueError; traced ones give 0, as Hail does (jdistlib's NaN, cast to int).

    Returns:
        An int32 scalar: Hail's value.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     print(int(hail.rand_hyper(jp.key(1).split_static(-123458), 20, 7, 12)))
        5
    """
    check_state(state, name="rand_hyper")
    _needs_x64("rand_hyper")
    popsize = _check_count(popsize, name="rand_hyper popsize")
    ngood = _check_count(ngood, name="rand_hyper ngood")
    nsample = _check_count(nsample, name="rand_hyper nsample")
    concrete = [None if _inputs.is_traced(x) else int(np.asarray(x))
                for x in (popsize, ngood, nsample)]
    if concrete[0] is not None:
        for name, value in (("ngood", concrete[1]), ("nsample", concrete[2])):
            if value is not None and value > concrete[0]:
                raise ValueError(f"rand_hyper {name} accepts an int in [0, popsize], but was "
                                 f"given {value} with popsize={concrete[0]}")
    final_tweak, h = engine.state_hash(state)
    return _jdistlib.hyper(h, popsize, ngood, nsample, final_tweak=final_tweak)


@sampler(prefix="hail_")
def rand_multi_hyper(state, colors, nsample) -> jax.Array:
    """Hail's ``hl.rand_multi_hyper(colors, nsample)``: per color, the items of that color in
    a sample of ``nsample`` drawn without replacement, an int32 array.

    One engine: ``remaining = sum(colors)``; for each color ``n`` in order,
    ``remaining -= n``, ``drawn = (int) rhyper(n, remaining, to_sample)`` (jdistlib's
    ``HyperGeometric.random``), ``to_sample -= drawn``. Bit for bit with Hail
    (``jax_enable_x64`` required).

    Args:
        state: an :class:`~jaxpmac.RNGState`.
        colors: the number of items of each color: a non-empty list of non-negative ints or a
            1-D integer array (its length static, its values may be traced).
        nsample: the sample size, ``<= sum(colors)`` (concrete values are checked).

    Returns:
        An int32 array of ``colors``' length.

    Example:
        >>> import jax, jaxpmac as jp
        >>> from jaxpmac import hail
        >>> with jax.enable_x64(True):
        ...     print(hail.rand_multi_hyper(jp.key(-3).split_static(-6), [2, 7, 1], 4).tolist())
        [0, 4, 0]
    """
    check_state(state, name="rand_multi_hyper")
    _needs_x64("rand_multi_hyper")
    accepts = "a non-empty list of ints in [0, 2**31) or a 1-D integer array"
    if isinstance(colors, (list, tuple)):
        if not colors or not all(isinstance(c, int) and not isinstance(c, bool)
                                 for c in colors):
            raise TypeError(f"rand_multi_hyper colors accepts {accepts}, but was given "
                            f"{colors!r}")
        colors = np.asarray(colors, np.int64)
    if (not isinstance(colors, (jax.Array, np.ndarray))
            or not jnp.issubdtype(colors.dtype, jnp.integer) or np.ndim(colors) != 1
            or colors.shape[0] == 0):
        raise TypeError(f"rand_multi_hyper colors accepts {accepts}, but was given "
                        f"{_inputs.describe(colors)}")
    nsample = _check_count(nsample, name="rand_multi_hyper nsample")
    if not _inputs.is_traced(colors):
        concrete = np.asarray(colors, np.int64)
        if not ((concrete >= 0).all() and (concrete <= INT32_MAX).all()
                and concrete.sum() <= INT32_MAX):
            raise ValueError(f"rand_multi_hyper colors accepts {accepts} with a sum below "
                             f"2**31, but was given {concrete.tolist()}")
        if not _inputs.is_traced(nsample) and int(np.asarray(nsample)) > concrete.sum():
            raise ValueError(f"rand_multi_hyper nsample accepts an int in [0, sum(colors)], "
                             f"but was given {int(np.asarray(nsample))} with sum(colors)="
                             f"{int(concrete.sum())}")
        colors = concrete.astype(np.int32)
    final_tweak, h = engine.state_hash(state)
    return _jdistlib.multi_hyper(h, colors, nsample, final_tweak=final_tweak)
