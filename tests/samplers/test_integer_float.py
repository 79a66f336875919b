"""float32 division and square root in integer arithmetic (the kernel form of the correctly
rounded primitives): IEEE 754's round-to-nearest-even bits, as NumPy computes them on this CPU,
for every class of operand."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxpmac._samplers import _integer_float

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 3.0, 0.5, 7.0,
                     1e-45, -1e-45, 5.9e-39, 1.1754942e-38, 1.1754944e-38, 3.4028235e38,
                     -3.4028235e38, 1e-30, 1e30], np.float32)


def _operands(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values, ``n`` pairs of random bit patterns (subnormals, NaNs and
    infinities among them) and ``n`` pairs of quotients near 1."""
    rng = np.random.default_rng(seed)
    random_bits = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64).astype(np.uint32)
    near = rng.random((2, n)).astype(np.float32) + np.float32(0.5)
    a = np.concatenate([np.repeat(SPECIALS, SPECIALS.size), random_bits[0].view(np.float32),
                        near[0]])
    b = np.concatenate([np.tile(SPECIALS, SPECIALS.size), random_bits[1].view(np.float32),
                        near[1]])
    return a, b


def _assert_same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    both_nan = np.isnan(got) & np.isnan(want)
    differ = (got.view(np.uint32) != want.view(np.uint32)) & ~both_nan
    assert not differ.any(), (f"{int(differ.sum())} values differ, e.g. got {got[differ][:3]} "
                              f"for {want[differ][:3]}")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_division_is_numpys_correctly_rounded_quotient(jit):
    a, b = _operands(100_000, seed=1)
    divide = jax.jit(_integer_float.divide) if jit else _integer_float.divide
    with np.errstate(all="ignore"):
        _assert_same_bits(divide(jnp.asarray(a), jnp.asarray(b)), a / b)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_square_root_is_numpys_correctly_rounded_root(jit):
    a, _ = _operands(100_000, seed=2)
    sqrt = jax.jit(_integer_float.sqrt) if jit else _integer_float.sqrt
    with np.errstate(all="ignore"):
        _assert_same_bits(sqrt(jnp.asarray(a)), np.sqrt(a))


def test_under_vmap_the_same_values():
    a, b = _operands(1000, seed=3)
    a, b = a[:2000].reshape(40, 50), b[:2000].reshape(40, 50)
    with np.errstate(all="ignore"):
        _assert_same_bits(jax.vmap(_integer_float.divide)(a, b), a / b)
        _assert_same_bits(jax.vmap(_integer_float.sqrt)(a), np.sqrt(a))


float32s = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


# Jitted once (a scalar program each): op by op, 300 examples took 10-20 s; the eager forms are
# checked above.
_divide_jitted, _sqrt_jitted = jax.jit(_integer_float.divide), jax.jit(_integer_float.sqrt)


@settings(max_examples=300, deadline=None)
@given(float32s, float32s)
def test_any_pair_of_floats(a, b):
    a, b = np.float32(a), np.float32(b)
    with np.errstate(all="ignore"):
        _assert_same_bits(_divide_jitted(jnp.float32(a), jnp.float32(b)), a / b)
        _assert_same_bits(_sqrt_jitted(jnp.float32(a)), np.sqrt(a))
