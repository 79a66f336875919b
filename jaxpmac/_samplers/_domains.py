"""Parameter domains: each sampler declares its parameters' domains as data, beside its
definition (in the spirit of NumPyro's ``arg_constraints``), and :func:`check` applies them.

A concrete parameter outside its domain is a ValueError at trace time, naming the sampler, the
argument, what it accepts and what it was given (the first element outside, for an array).
Concrete means known while tracing: Python numbers, NumPy values, jax arrays outside
``jit``/``vmap`` and constants closed over under ``jit``. A traced parameter cannot be checked
before it runs: it gives the output each sampler documents (NaN, -1, or ``jax.random``'s
answer), as it did before the checks. Each rule tests the values that are *outside* the domain,
so NaN passes every rule (but ``bernoulli``'s ``p``, where NaN gives a plausible False): a NaN
parameter gives the NaN (or -1) its sampler documents, concrete or traced, as in NumPy.

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

from jaxpmac._message import _inputs


class Rule(NamedTuple):
    """A domain: ``outside(*values)`` is True (elementwise, broadcast) where the values of the
    arguments ``names`` are outside it; ``accepts`` says, in words, what is inside."""
    names: tuple[str, ...]
    accepts: str
    outside: Callable


# -- the domains the samplers use (NaN passes each but NOT_NAN_PROBABILITY) -----------------
def at_least_zero(name: str, nan: str = "NaN") -> Rule:
    return Rule((name,), f"values >= 0 (or NaN, which gives {nan})", lambda x: x < 0)


def above_zero(name: str, nan: str = "NaN") -> Rule:
    return Rule((name,), f"values > 0 (or NaN, which gives {nan})", lambda x: x <= 0)


def probability(name: str, nan: str = "NaN") -> Rule:
    return Rule((name,), f"values in [0, 1] (or NaN, which gives {nan})",
                lambda x: (x < 0) | (x > 1))


def not_nan_probability(name: str) -> Rule:
    return Rule((name,), "values in [0, 1]", lambda x: ~((x >= 0) & (x <= 1)))


def ordered(low: str, high: str, *, strict: bool) -> Rule:
    sign = "<" if strict else "<="
    return Rule((low, high), f"{low} {sign} {high} (elementwise, after broadcasting)",
                (lambda a, b: a >= b) if strict else (lambda a, b: a > b))


# -- checking ---------------------------------------------------------------------------------
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


def check(sampler: str, rules: tuple[Rule, ...], **values) -> None:
    """Raises ValueError for the first rule that a concrete value breaks (see the module).

    Args:
        sampler: the public name, as the message starts.
        rules: the sampler's domain.
        **values: each argument a rule names, as the user passed it.
    """
    for rule in rules:
        arrays = [_concrete(values[name]) for name in rule.names]
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
            (name,) = rule.names
            received = _describe(values[name], outside.shape, index)
            what = f"{name} accepts"
        else:
            where = f" at index {tuple(int(i) for i in index)}" if outside.ndim else ""
            received = " and ".join(f"{name} {_element(values[name], outside.shape, index)}"
                                    for name in rule.names) + where
            what = f"{', '.join(rule.names)} accept"
        raise ValueError(f"{sampler} {what} {rule.accepts}, but was given {received}")
