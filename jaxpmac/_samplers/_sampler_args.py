"""Validation shared by the samplers: dtypes, parameter arrays and output shapes.

Everything here runs at trace time (outside the jitted implementations), so bad input is a
TypeError/ValueError that names the sampler and argument, never a silent wrong answer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher._words import x64_enabled  # the samplers read the flag through here
from jaxpmac._lowering import _platform
from jaxpmac._message import _inputs
from jaxpmac._samplers import _bits

FLOAT_ACCEPTS = "float16, bfloat16, float32 or float64 (float64 needs jax_enable_x64)"
INT_ACCEPTS = ("int8, int16, int32, int64, uint8, uint16, uint32 or uint64 "
               "(64-bit types need jax_enable_x64)")

_FLOATS = tuple(jnp.dtype(d) for d in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64))
_INTS = tuple(jnp.dtype(d) for d in (jnp.int8, jnp.int16, jnp.int32, jnp.int64,
                                     jnp.uint8, jnp.uint16, jnp.uint32, jnp.uint64))


def _output_dtype(dtype, *, name: str, builtin, allowed, accepts: str, narrow: str) -> np.dtype:
    """``dtype`` resolved and checked against ``allowed``; ``None`` or the ``builtin`` type is
    JAX's default (64-bit with x64 on, else 32-bit). A 64-bit dtype with x64 off is a
    TypeError that says how to enable it, rather than a silent 32-bit result."""
    if dtype is None or dtype is builtin:
        return jnp.dtype(jnp.result_type(builtin))
    try:
        resolved = jnp.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name} dtype accepts {accepts}, but was given {dtype!r}") from None
    if resolved not in allowed:
        raise TypeError(f"{name} dtype accepts {accepts}, but was given {resolved}")
    if resolved.itemsize == 8 and not x64_enabled():
        raise TypeError(f"{name} dtype {resolved} needs 64-bit types: enable them with "
                        f"jax.config.update('jax_enable_x64', True), or use {narrow}")
    return resolved


def float_dtype(dtype, *, name: str) -> np.dtype:
    """A float output dtype; ``None`` (or ``float``) is JAX's default float, like
    ``jax.random``."""
    return _output_dtype(dtype, name=name, builtin=float, allowed=_FLOATS,
                         accepts=FLOAT_ACCEPTS, narrow="float32")


def widest_float() -> np.dtype:
    """float64 with x64 on, else float32: the dtype the count samplers compute in."""
    return jnp.dtype(jnp.float64 if x64_enabled() else jnp.float32)


def int_dtype(dtype, *, name: str) -> np.dtype:
    """An integer output dtype; ``None`` (or ``int``) is JAX's default int."""
    return _output_dtype(dtype, name=name, builtin=int, allowed=_INTS, accepts=INT_ACCEPTS,
                         narrow="a 32-bit type")


def real_param(value, *, name: str, dtype) -> jax.Array:
    """A real-valued parameter (Python number or int/float array, traced or not) as an array of
    the computation ``dtype``. Bools, complex numbers and non-numeric input are a TypeError.

    A subnormal parameter is read as zero, on every platform: XLA's CPU and TPU backends flush
    subnormals to zero in compiled code, a GPU need not, and a sampler's branch on a
    parameter's sign (``truncated_normal`` mirrors a positive lower bound) must not differ.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating, np.ndarray, jax.Array)):
        raise TypeError(f"{name} accepts real numbers or arrays of them, but was given "
                        f"{_inputs.describe(value)}")
    if hasattr(value, "dtype") and not (jnp.issubdtype(value.dtype, jnp.integer)
                                        or jnp.issubdtype(value.dtype, jnp.floating)):
        raise TypeError(f"{name} accepts real numbers or arrays of them, but was given "
                        f"{_inputs.describe(value)}")
    if not _inputs.is_traced(value):
        known = _known_param(value, dtype)
        if known is not None:
            return known
    return _subnormals_to_zero(jnp.asarray(value).astype(dtype), jnp)


def _subnormals_to_zero(param, xp):
    """``param`` with its subnormal elements zero, computed with ``xp`` (``numpy`` or
    ``jax.numpy``); integer parameters as they are."""
    if not jnp.issubdtype(param.dtype, jnp.floating):
        return param
    # Zeros stay as they are (their sign, and their derivatives through the sampler).
    subnormal = (xp.abs(param) < jnp.finfo(param.dtype).tiny) & (param != 0)
    return xp.where(subnormal, xp.zeros_like(param), param)


def _known_param(value, dtype) -> jax.Array | None:
    """:func:`real_param` of a value known at trace time, computed in NumPy where that is exact:
    each of JAX's eager operations would compile a program of its own, once a process, in a
    process' first draw. None where the conversion to
    ``dtype`` rounds (XLA's and NumPy's rounding need not agree): the caller's JAX path."""
    try:
        # The type jnp.asarray gives it, converted on the host as JAX does.
        as_jax = np.asarray(value, dtype=jnp.result_type(value))
    except (OverflowError, TypeError, ValueError):
        return None                             # the JAX path says what is wrong
    param = as_jax.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        exact = param.astype(as_jax.dtype)
    if not np.array_equal(exact, as_jax, equal_nan=bool(np.issubdtype(exact.dtype, np.inexact))):
        return None
    return jax.device_put(_subnormals_to_zero(param, np))


def output_shape(shape, params, *, name: str) -> tuple[int, ...]:
    """The output shape: ``shape`` checked, with every parameter broadcastable to it; or, when
    ``shape`` is None, the broadcast shape of the parameters (like ``jax.random``)."""
    param_shapes = [tuple(np.shape(p)) for p in params]
    if shape is None:
        try:
            return tuple(jnp.broadcast_shapes(*param_shapes)) if param_shapes else ()
        except ValueError:
            raise ValueError(f"{name} parameters must broadcast together, but have shapes "
                             f"{param_shapes}") from None
    shape = _bits.check_shape(shape, name=name)
    for param_shape in param_shapes:
        try:
            ok = tuple(jnp.broadcast_shapes(shape, param_shape)) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name} parameters must broadcast to shape {shape}, but have "
                             f"shapes {param_shapes}")
    return shape


def kernel_operands(shape: tuple[int, ...], *params):
    """``params`` as they are, or broadcast to ``shape`` inside a Pallas kernel: there a concrete
    scalar is a literal of the kernel's jaxpr, and Pallas' Triton lowering fails on an operation
    whose operand is one (jax 0.12: ``'TypedNdArray' object has no attribute 'type'``), as on
    ``-upper``. Broadcast, they are values of the kernel like any other."""
    if not _platform.in_kernel():
        return params
    return tuple(jnp.broadcast_to(param, shape) for param in params)
