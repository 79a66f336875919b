"""The samplers' front door: every check of a sampler's arguments, in one place.

A sampler's prologue is one call, :func:`checked` (the state, the output dtype, the real
parameters and their domains, the output shape, the offset), or, where a sampler takes other
arguments, the same checks called one by one. Everything here runs at trace time (outside the
jitted implementations), so bad input is a TypeError (wrong kind) or ValueError (right kind,
wrong value) that names the sampler and argument, never a silent wrong answer; each message
is the sentence of :func:`rejected` (docs/errors.md).

Parameter domains are data: :data:`DOMAINS` holds each sampler's, in the spirit of NumPyro's
``arg_constraints``, and :func:`check_domain` applies them. A concrete parameter outside its
domain is a ValueError naming what it accepts and what it was given (the first element outside,
for an array). Concrete means known while tracing: Python numbers, NumPy values, jax arrays
outside ``jit``/``vmap`` and constants closed over under ``jit``. A traced parameter cannot be
checked before it runs: it gives the output each sampler documents (NaN, -1, or
``jax.random``'s answer). Each rule tests the values that are *outside* the domain, so NaN passes
every rule (but ``bernoulli``'s ``p``, where NaN gives a plausible False): a NaN parameter gives
the NaN (or -1) its sampler documents, concrete or traced, as in NumPy.

Example:
    >>> import jaxpmac as jp
    >>> jp.gamma(jp.key(0), -1.0)
    Traceback (most recent call last):
    ...
    ValueError: gamma a accepts values >= 0 (or NaN, which gives NaN), but was given float -1.0
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _stream
from jaxpmac._cipher import _words as w
from jaxpmac._cipher._words import x64_enabled  # the samplers read the flag through here
from jaxpmac._lowering import _platform
from jaxpmac._message import _inputs
from jaxpmac._message._state import RNGState
from jaxpmac._samplers import _unit


# -- the error template -------------------------------------------------------------------------
def rejected(subject: str, accepts: str, given: str) -> str:
    """The sentence of every argument error: ``<function> <argument> accepts <what is
    accepted>, but was given <what was received>``."""
    return f"{subject} accepts {accepts}, but was given {given}"


# -- the state --------------------------------------------------------------------------------
STATE_ACCEPTS = ("a jaxpmac RNGState (from jaxpmac.key, or jaxpmac.state_of(key) for a "
                 "jax.random key<pmac>)")


def check_state(state, *, name: str) -> RNGState:
    if not isinstance(state, RNGState):
        raise TypeError(rejected(name, STATE_ACCEPTS, _describe_state(state)))
    return state


def _describe_state(value) -> str:
    # A typed jax.random key is the likeliest wrong state (code written for jax.random): say
    # what it is and what to do with it.
    if isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
        impl = jax.random.key_impl(value)
        if str(impl) == "pmac":
            return (f"a jax.random key<pmac>: pass jaxpmac.state_of(key) (samplers take "
                    f"states, so that a switch from jax.random's algorithm is visible)")
        return (f"a jax.random key of impl {impl} (dtype {value.dtype}): jaxpmac draws only "
                f"from its own states, and keys of jaxpmac.prng_impl through jaxpmac.state_of")
    return _inputs.describe(value)


# -- shapes -----------------------------------------------------------------------------------
SHAPE_ACCEPTS = "a sequence of non-negative ints"


def check_shape(shape, *, name: str) -> tuple[int, ...]:
    """A static shape: a non-negative int or a sequence of them."""
    entries = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        entries = tuple(entries)
    except TypeError:
        raise TypeError(rejected(f"{name} shape", SHAPE_ACCEPTS,
                                 _inputs.describe(shape))) from None
    for entry in entries:
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (int, np.integer)):
            raise TypeError(rejected(f"{name} shape", SHAPE_ACCEPTS,
                                     f"{shape!r} (entry {_inputs.describe(entry)})"))
        if entry < 0:
            raise ValueError(rejected(f"{name} shape", SHAPE_ACCEPTS, repr(shape)))
    return tuple(int(entry) for entry in entries)


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
    shape = check_shape(shape, name=name)
    for param_shape in param_shapes:
        try:
            ok = tuple(jnp.broadcast_shapes(shape, param_shape)) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name} parameters must broadcast to shape {shape}, but have "
                             f"shapes {param_shapes}")
    return shape


def batch_of(param, event_dims: int) -> jax.ShapeDtypeStruct:
    """What broadcasts of a parameter whose last ``event_dims`` dimensions are one draw's
    (``dirichlet``'s ``alpha``: the categories), for :func:`output_shape`."""
    return jax.ShapeDtypeStruct(param.shape[:param.ndim - event_dims], jnp.bool_)


# -- offsets ----------------------------------------------------------------------------------
OFFSET_ACCEPTS = ("a Python int in [0, 2**64) or a non-negative integer scalar array "
                  "(traced or not)")


def check_offset(offset, *, name: str) -> w.Word:
    """A stream offset as one word: a static int or a dynamic ``Pair``."""
    if isinstance(offset, int) and not isinstance(offset, bool) and not 0 <= offset <= w.MASK64:
        raise ValueError(rejected(f"{name} offset", OFFSET_ACCEPTS, str(offset)))
    (word,) = _inputs.words_of(offset, name=f"{name} offset", allow_vector=False,
                               accepts=OFFSET_ACCEPTS)
    # A concrete negative array would otherwise wrap to an offset near 2**64. (A traced signed
    # offset cannot be checked at trace time; it sign-extends like every other word.)
    if w.is_static(word) and not isinstance(offset, int) and np.asarray(offset) < 0:
        raise ValueError(rejected(f"{name} offset", OFFSET_ACCEPTS,
                                  f"{_inputs.describe(offset)} with value "
                                  f"{np.asarray(offset)}"))
    return word


# -- dtypes -----------------------------------------------------------------------------------
class DtypeRule(NamedTuple):
    """The output dtypes a sampler accepts: ``allowed``, described by ``accepts``; ``default``
    is the Python type (``float``, ``int``) whose JAX default ``None`` means, or None where a
    dtype must be given; ``narrow`` is what to do instead of a 64-bit type with x64 off."""
    allowed: tuple[np.dtype, ...]
    accepts: str
    default: type | None
    narrow: str


def _dtypes(*names) -> tuple[np.dtype, ...]:
    return tuple(jnp.dtype(name) for name in names)


FLOAT = DtypeRule(_dtypes("float16", "bfloat16", "float32", "float64"),
                  "float16, bfloat16, float32 or float64 (float64 needs jax_enable_x64)",
                  float, "use float32")
INT = DtypeRule(_dtypes("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
                "int8, int16, int32, int64, uint8, uint16, uint32 or uint64 (64-bit types need "
                "jax_enable_x64)", int, "use a 32-bit type")
# Signed: -1 and +1 (rademacher).
SIGNED = DtypeRule(_dtypes("int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                           "float64"),
                   "int8, int16, int32, int64, float16, bfloat16, float32 or float64 (64-bit "
                   "types need jax_enable_x64)", int, "use a 32-bit type")
# The raw stream (bits): the dtype has a default of its own, uint32.
STREAM = DtypeRule(_dtypes(*_stream.STREAM_DTYPES),
                   "uint8, uint16, uint32 or uint64 (uint64 needs jax_enable_x64)", None,
                   "draw uint32")


def output_dtype(dtype, rule: DtypeRule, *, name: str) -> np.dtype:
    """``dtype`` resolved and checked against ``rule``; ``None`` or the rule's default type is
    JAX's default (64-bit with x64 on, else 32-bit). A 64-bit dtype with x64 off is a
    TypeError that says how to enable it, rather than a silent 32-bit result."""
    if rule.default is not None and (dtype is None or dtype is rule.default):
        return jnp.dtype(jnp.result_type(rule.default))
    try:
        resolved = jnp.dtype(dtype)
    except TypeError:
        raise TypeError(rejected(f"{name} dtype", rule.accepts, repr(dtype))) from None
    if resolved not in rule.allowed:
        raise TypeError(rejected(f"{name} dtype", rule.accepts, str(resolved)))
    if resolved.itemsize == 8 and not x64_enabled():
        raise TypeError(f"{name} dtype {resolved} needs 64-bit types: enable them with "
                        f"jax.config.update('jax_enable_x64', True), or {rule.narrow}")
    return resolved


def widest_float() -> np.dtype:
    """float64 with x64 on, else float32: the dtype the count samplers compute in."""
    return jnp.dtype(jnp.float64 if x64_enabled() else jnp.float32)


def float_of(value) -> np.dtype:
    """float64 for a float64 array with x64 on, else float32: what ``bernoulli``'s ``p`` and
    ``categorical``'s logits compute in."""
    return jnp.dtype(jnp.float64 if getattr(value, "dtype", None) == jnp.float64
                     and x64_enabled() else jnp.float32)


# -- other arguments ----------------------------------------------------------------------------
def check_flag(value, *, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(rejected(name, "True or False", _inputs.describe(value)))
    return bool(value)


def check_mode(mode, *, name: str, modes: tuple = (None, "low", "high")) -> None:
    """``jax.random``'s ``mode``, accepted for compatibility: every mode draws the same."""
    if mode not in modes:
        accepts = ", ".join(repr(m) for m in modes[:-1]) + f" or {modes[-1]!r}"
        raise ValueError(rejected(f"{name} mode", accepts, repr(mode)))


# -- real parameters ----------------------------------------------------------------------------
REAL_ACCEPTS = "real numbers or arrays of them"


def real_param(value, *, name: str, dtype) -> jax.Array:
    """A real-valued parameter (Python number or int/float array, traced or not) as an array of
    the computation ``dtype``. Bools, complex numbers and non-numeric input are a TypeError.

    A subnormal parameter is read as zero, on every platform: XLA's CPU and TPU backends flush
    subnormals to zero in compiled code, a GPU need not, and a sampler's branch on a
    parameter's sign (``truncated_normal`` mirrors a positive lower bound) must not differ.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating, np.ndarray, jax.Array)):
        raise TypeError(rejected(name, REAL_ACCEPTS, _inputs.describe(value)))
    if hasattr(value, "dtype") and not (jnp.issubdtype(value.dtype, jnp.integer)
                                        or jnp.issubdtype(value.dtype, jnp.floating)):
        raise TypeError(rejected(name, REAL_ACCEPTS, _inputs.describe(value)))
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


def known_real_param(value, *, dtype) -> np.ndarray | None:
    """:func:`real_param` of a value known at trace time, computed in NumPy where that is exact
    (a NumPy array), else None (traced, or a conversion to ``dtype`` that rounds: XLA's and
    NumPy's rounding need not agree; the caller's JAX path)."""
    if _inputs.is_traced(value):
        return None
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
    return _subnormals_to_zero(param, np)


def known_scalar(value, *, dtype) -> np.generic | None:
    """:func:`known_real_param` where it is one number (a scalar, or an array of one value),
    as a NumPy scalar; else None. Kernels decide from it at trace time."""
    known = known_real_param(value, dtype=dtype)
    if known is None or np.unique(known).size != 1:
        return None
    return known.flat[0]


def _known_param(value, dtype) -> jax.Array | None:
    """:func:`known_real_param` on the device: each of JAX's eager operations would compile a
    program of its own, once a process, in a process' first draw."""
    known = known_real_param(value, dtype=dtype)
    return None if known is None else jax.device_put(known)


def kernel_operands(shape: tuple[int, ...], *params):
    """``params`` as they are, or broadcast to ``shape`` inside a Pallas kernel: there a concrete
    scalar is a literal of the kernel's jaxpr, and Pallas' Triton lowering fails on an operation
    whose operand is one (jax 0.12: ``'TypedNdArray' object has no attribute 'type'``), as on
    ``-upper``. Broadcast, they are values of the kernel like any other."""
    if not _platform.in_kernel():
        return params
    return tuple(jnp.broadcast_to(param, shape) for param in params)


# -- parameter domains ----------------------------------------------------------------------------
class Rule(NamedTuple):
    """A domain: ``outside(*values)`` is True (elementwise, broadcast) where the values of the
    arguments ``names`` are outside it; ``accepts`` says, in words, what is inside."""
    names: tuple[str, ...]
    accepts: str
    outside: Callable


# The domains the samplers use (NaN passes each but not_nan_probability).
def at_least_zero(name: str, nan: str = "NaN") -> Rule:
    return Rule((name,), f"values >= 0 (or NaN, which gives {nan})", lambda x: x < 0)


def above_zero(name: str, nan: str = "NaN") -> Rule:
    return Rule((name,), f"values > 0 (or NaN, which gives {nan})", lambda x: x <= 0)


def finite_above_zero(name: str) -> Rule:
    return Rule((name,), "finite values > 0 (or NaN, which gives NaN)",
                lambda x: (x <= 0) | (x == np.inf))


def finite_at_least_zero(name: str, what: str) -> Rule:
    return Rule((name,), f"finite {what} >= 0 (or NaN, which gives NaN counts)",
                lambda x: (x < 0) | (x == np.inf))


def probability(name: str, nan: str = "NaN") -> Rule:
    return Rule((name,), f"values in [0, 1] (or NaN, which gives {nan})",
                lambda x: (x < 0) | (x > 1))


def not_nan_probability(name: str) -> Rule:
    return Rule((name,), "values in [0, 1]", lambda x: ~((x >= 0) & (x <= 1)))


def ordered(low: str, high: str, *, strict: bool) -> Rule:
    sign = "<" if strict else "<="
    return Rule((low, high), f"{low} {sign} {high} (elementwise, after broadcasting)",
                (lambda a, b: a >= b) if strict else (lambda a, b: a > b))


#: Public sampler name -> its parameters' domains: a concrete value outside is a ValueError; a
#: traced one gives the output the sampler's docstring states (NaN, -1, or jax.random's
#: answer). Where a boundary is inside (chisquare df = 0, lognormal sigma = 0, scales of 0),
#: the sampler gives the distribution's limit there. Every sampler of jaxpmac has an entry;
#: value rules that are not elementwise are its own: ``truncated_normal``'s bounds (compared in
#: the computation dtype), ``randint``'s bounds against the dtype's range, ``choice``'s weights
#: and ``categorical``'s rows of logits.
DOMAINS: dict[str, tuple[Rule, ...]] = {
    # raw bits and distributions without parameters
    "bits": (), "normal": (), "exponential": (), "gumbel": (), "laplace": (), "logistic": (),
    "cauchy": (), "maxwell": (), "rademacher": (), "orthogonal": (), "permutation": (),
    "multivariate_normal": (), "truncated_normal": (), "choice": (), "categorical": (),
    # uniform and integers
    "uniform": (ordered("minval", "maxval", strict=False),),
    "randint": (ordered("minval", "maxval", strict=True),),
    "bernoulli": (not_nan_probability("p"),),
    # counts
    "poisson": (at_least_zero("lam", nan="-1"),),
    "binomial": (at_least_zero("n"), probability("p")),
    "geometric": (probability("p", nan="-1"),),
    "multinomial": (finite_at_least_zero("n", "values"), finite_at_least_zero("p", "weights")),
    # the gamma family
    "gamma": (at_least_zero("a"),),
    "beta": (at_least_zero("a"), at_least_zero("b")),
    "dirichlet": (at_least_zero("alpha"),),
    # derived continuous
    "t": (above_zero("df"),),
    "chisquare": (at_least_zero("df"),),
    "f": (above_zero("dfnum"), above_zero("dfden")),
    "loggamma": (at_least_zero("a"),),
    "lognormal": (at_least_zero("sigma"),),
    "pareto": (above_zero("b"),),
    "weibull_min": (at_least_zero("scale"), above_zero("concentration")),
    "rayleigh": (at_least_zero("scale"),),
    "double_sided_maxwell": (at_least_zero("scale"),),
    "wald": (above_zero("mean"),),
    "generalized_normal": (finite_above_zero("p"),),
    "triangular": (Rule(("left", "mode", "right"),
                        "left <= mode <= right (elementwise, after broadcasting)",
                        lambda left, mode, right: (left > mode) | (mode > right)),),
    # random geometry
    "ball": (finite_above_zero("p"),),
}


def _concrete(value):
    """``value`` as a NumPy array where it is a concrete real number or array, else None (a
    traced value, or a bad type that the sampler's own conversion rejects with a TypeError)."""
    if isinstance(value, (bool, np.bool_)) or _inputs.is_traced(value):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return np.asarray(value)
    if isinstance(value, (np.ndarray, jax.Array)) and (
            jnp.issubdtype(value.dtype, jnp.integer) or jnp.issubdtype(value.dtype, jnp.floating)):
        array = np.asarray(value)
        # Compare in float64 (bfloat16/float16 hold exactly there), integers as they are.
        return array.astype(np.float64) if jnp.issubdtype(array.dtype, jnp.floating) else array
    return None


def _element(value, shape, index) -> str:
    """The element of ``value`` (broadcast to ``shape``) at ``index``, as its own dtype prints
    it (a float32 0.1 as 0.1, not its float64 expansion)."""
    if isinstance(value, (int, float)):
        return repr(value)
    return str(np.broadcast_to(np.asarray(value), shape)[tuple(index)])


def _describe(value, shape, index) -> str:
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f"{type(value).__name__} {value!r}"
    where = f" at index {tuple(int(i) for i in index)}" if len(shape) else ""
    return (f"array of dtype {value.dtype} and shape {tuple(value.shape)} holding "
            f"{_element(value, shape, index)}{where}")


def check_domain(name: str, **values) -> None:
    """Raises ValueError for the first rule of ``DOMAINS[name]`` that a concrete value breaks
    (see the module).

    Args:
        name: the sampler's public name, as the message starts.
        **values: each argument a rule names, as the user passed it.
    """
    for rule in DOMAINS[name]:
        arrays = [_concrete(values[arg]) for arg in rule.names]
        if any(a is None for a in arrays):
            continue           # traced (or a type the sampler rejects itself)
        try:
            broadcast = np.broadcast_arrays(*arrays)
        except ValueError:
            continue           # the sampler's shape check says so
        with np.errstate(invalid="ignore"):
            outside = np.asarray(rule.outside(*broadcast))
        if not outside.any():
            continue
        index = np.unravel_index(int(np.argmax(outside)), outside.shape)
        if len(rule.names) == 1:
            (arg,) = rule.names
            raise ValueError(rejected(f"{name} {arg}", rule.accepts,
                                      _describe(values[arg], outside.shape, index)))
        where = f" at index {tuple(int(i) for i in index)}" if outside.ndim else ""
        received = " and ".join(f"{arg} {_element(values[arg], outside.shape, index)}"
                                for arg in rule.names) + where
        raise ValueError(f"{name} {', '.join(rule.names)} accept {rule.accepts}, but was "
                         f"given {received}")


# -- the prologue -------------------------------------------------------------------------------
class Checked(NamedTuple):
    """A sampler's arguments, checked: the output dtype, the real parameters (arrays of the
    computation dtype, in the order given), the output shape and the offset word."""
    dtype: np.dtype
    params: tuple[jax.Array, ...]
    shape: tuple[int, ...]
    offset: w.Word


_NO_OFFSET = object()


def checked(name: str, state, dtype, shape, params: dict | None = None, *,
            output: DtypeRule = FLOAT, compute=None, offset=_NO_OFFSET) -> Checked:
    """The arguments of sampler ``name``, checked in this order: the state, the output dtype
    (``output``), the real parameters (converted to ``compute``, default
    ``_unit.compute_dtype`` of the output dtype), their domains (:data:`DOMAINS`), the output
    shape and the ``offset`` (where the sampler takes one; else 0).

    ``shape`` is the sampler's: with parameters, None means their broadcast shape; without,
    a shape must be given. (A sampler whose parameters hold whole draws -- ``dirichlet``'s
    ``alpha``, ``multivariate_normal``'s ``cov`` -- makes these checks one by one, its own
    check of those dimensions before :func:`output_shape` of :func:`batch_of` them.)
    """
    params = params or {}
    check_state(state, name=name)
    dtype = output_dtype(dtype, output, name=name)
    cdtype = _unit.compute_dtype(dtype) if compute is None else compute
    values = tuple(real_param(value, name=f"{name} {param}", dtype=cdtype)
                   for param, value in params.items())
    check_domain(name, **params)
    if params:
        shape = output_shape(shape, values, name=name)
    else:
        shape = check_shape(shape, name=name)
    offset = 0 if offset is _NO_OFFSET else check_offset(offset, name=name)
    return Checked(dtype, values, shape, offset)
