"""Bad input fails at trace time with a TypeError or ValueError that names the argument, what
was received and what is accepted -- never a silent wrong answer."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

STATE = jp.key(0)
SEED_ACCEPTS = re.escape("a Python int in [-2**63, 2**64)")
INT_RANGE = re.escape("[-2**63, 2**64)")


def _expect(error, pattern, fn, *args):
    """``fn(*args)`` raises ``error`` matching ``pattern``, both eagerly and under jit (where
    the arguments are closed over, so the checks still run at trace time)."""
    with pytest.raises(error, match=pattern):
        fn(*args)
    with pytest.raises(error, match=pattern):
        jax.jit(lambda: fn(*args))()


# -- key -------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed,error,received", [
    (1.5, TypeError, "float 1.5"),
    (True, TypeError, "bool True"),
    (np.bool_(False), TypeError, "bool"),
    ("3", TypeError, "str '3'"),
    (None, TypeError, "NoneType None"),
    (np.float32(1.0), TypeError, "dtype float32"),
    (jnp.ones((), jnp.float32), TypeError, "dtype float32"),
    (2**64, ValueError, "18446744073709551616"),
    (-(2**63) - 1, ValueError, "-9223372036854775809"),
    (jnp.arange(3), ValueError, r"shape \(3,\)"),
])
def test_bad_seed(seed, error, received):
    _expect(error, f"key seed .*{SEED_ACCEPTS}.*but was given .*{received}", jp.key, seed)


def test_traced_bad_seed():
    with pytest.raises(TypeError, match="key seed .*but was given traced array of dtype float32"):
        jax.jit(jp.key)(jnp.float32(1.0))
    with pytest.raises(ValueError,
                       match=r"key seed .*traced array of dtype int32 and shape \(2,\)"):
        jax.jit(jp.key)(jnp.arange(2))


# -- split -------------------------------------------------------------------------------------
@pytest.mark.parametrize("uid,error,received", [
    (1.0, TypeError, "float 1.0"),
    (False, TypeError, "bool False"),
    (np.bool_(True), TypeError, "dtype bool"),
    (2**64, ValueError, "18446744073709551616"),
    (-(2**63) - 1, ValueError, "-9223372036854775809"),
    (jnp.ones((2, 2), jnp.int32), ValueError, r"dtype int32 and shape \(2, 2\)"),
    (np.ones((3,), np.float32), TypeError, r"dtype float32 and shape \(3,\)"),
    (jnp.ones((), jnp.bfloat16), TypeError, "dtype bfloat16"),
    ([1, 2], TypeError, r"list \[1, 2\]"),
])
def test_bad_uid(uid, error, received):
    # The second uid is the bad one: the message names its position.
    _expect(error, f"split argument 1 .*{INT_RANGE}.*but was given .*{received}",
            STATE.split, 7, uid)


def test_traced_bad_uids():
    split = jax.jit(lambda u: jp.bits(STATE.split(u)))
    with pytest.raises(TypeError, match="split argument 0 .*traced array of dtype float32"):
        split(jnp.ones((3,), jnp.float32))
    with pytest.raises(ValueError, match=r"split argument 0 .*traced array .*shape \(2, 3\)"):
        split(jnp.ones((2, 3), jnp.int32))


# -- split_static ------------------------------------------------------------------------------
@pytest.mark.parametrize("label,error,received", [
    (1.5, TypeError, "float 1.5"),
    (True, TypeError, "bool True"),
    (b"bytes", TypeError, "bytes b'bytes'"),
    (2**64, ValueError, "18446744073709551616"),
    (-(2**63) - 1, ValueError, "-9223372036854775809"),
    (np.arange(3), ValueError, r"shape \(3,\)"),
    (np.float64(2.0), TypeError, "dtype float64"),
])
def test_bad_label(label, error, received):
    _expect(error, f"label 1 .*{INT_RANGE}.*but was given .*{received}",
            STATE.split_static, "ok", label)


def test_traced_label_says_use_split():
    with pytest.raises(TypeError, match=r"split_static label 0 must be concrete, but was given "
                       r"traced array of dtype int32.*split\(\)"):
        jax.jit(lambda x: STATE.split_static(x))(jnp.int32(1))


# -- bits: state, shape, dtype, offset -------------------------------------------------------------
@pytest.mark.parametrize("state,received", [
    (42, "int 42"),
    (jax.random.key(0), r"a jax.random key of impl threefry2x32 \(dtype key<fry>\)"),
    (jnp.zeros(4, jnp.uint32), r"array of dtype uint32 and shape \(4,\)"),
    ((STATE,), r"tuple \(RNGState"),
])
def test_bits_needs_a_state(state, received):
    _expect(TypeError, f"bits accepts a jaxpmac RNGState .*, but was given {received}",
            jp.bits, state, (2,))


@pytest.mark.parametrize("shape,error,received", [
    ((-1,), ValueError, r"\(-1,\)"),
    (-3, ValueError, "-3"),
    ((2, -1), ValueError, r"\(2, -1\)"),
    ((2.0,), TypeError, r"entry float 2.0"),
    ((True,), TypeError, r"entry bool True"),
    ((jnp.int32(2),), TypeError, r"entry array of dtype int32"),
    (None, TypeError, "NoneType None"),
])
def test_bad_shape(shape, error, received):
    _expect(error, f"bits shape accepts a sequence of non-negative ints, but was given "
            f".*{received}", jp.bits, STATE, shape)


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.float32, np.int8, jnp.bool_, "uint128"])
def test_unsupported_dtype(dtype):
    _expect(TypeError, "bits dtype accepts uint8, uint16, uint32 or uint64.*but was given",
            jp.bits, STATE, (2,), dtype)


def test_uint64_needs_x64():
    assert not jax.config.jax_enable_x64
    _expect(TypeError, "bits dtype uint64 needs 64-bit types.*jax_enable_x64", jp.bits, STATE,
            (2,), jnp.uint64)
    with jax.enable_x64(True):  # and is accepted with it
        assert jp.bits(STATE, (2,), jnp.uint64).dtype == jnp.uint64


@pytest.mark.parametrize("offset,error,received", [
    (-1, ValueError, "-1"),
    (2**64, ValueError, "18446744073709551616"),
    (jnp.int32(-1), ValueError, "dtype int32 .*value -1"),
    (np.int64(-(2**40)), ValueError, "dtype int64 .*value -1099511627776"),
    (1.5, TypeError, "float 1.5"),
    (True, TypeError, "bool True"),
    (jnp.arange(2), ValueError, r"shape \(2,\)"),
    (jnp.float32(1), TypeError, "dtype float32"),
])
def test_bad_offset(offset, error, received):
    _expect(error, f"bits offset accepts a Python int in \\[0, 2\\*\\*64\\) .*but was given "
            f".*{received}", lambda: jp.bits(STATE, (2,), offset=offset))


def test_traced_bad_offset():
    with pytest.raises(TypeError, match="bits offset .*traced array of dtype float32"):
        jax.jit(lambda o: jp.bits(STATE, (2,), offset=o))(jnp.float32(1))


def test_good_inputs_next_to_bad_ones_still_work():
    # The validators accept every documented form (so the errors above are not over-eager).
    state = jp.key(np.uint64(2**64 - 1)).split(np.int8(-1), jnp.arange(2), 2**63)
    state = state.split_static(np.int64(-5), "ok", 0)
    assert jp.bits(state, np.int64(3), jnp.uint8, offset=np.uint64(2**63)).shape == (3,)


# -- choice weights, truncated_normal bounds: invalid values, not just invalid types ---------------
P_ACCEPTS = re.escape("choice p accepts finite non-negative weights with a positive, finite "
                      "sum, but was given ")


@pytest.mark.parametrize("p,received", [
    (np.array([-1.0, 1.0, 1.0]), r"p\[0\] = -1.0"),
    (np.array([1.0, 2.0, -0.5]), r"p\[2\] = -0.5"),
    (np.zeros(3), "all-zero weights"),
    (np.array([1.0, np.nan, 1.0]), r"p\[1\] = nan"),
    (np.array([1.0, 1.0, -np.inf]), r"p\[2\] = -inf"),
    (jnp.array([1.0, jnp.inf, 1.0]), r"p\[1\] = inf"),       # concrete jax array: checked too
    (np.full(3, 3e38, np.float32), "weights whose sum overflows float32"),
])
@pytest.mark.parametrize("replace", [True, False])
def test_choice_rejects_concrete_invalid_weights(p, received, replace):
    _expect(ValueError, P_ACCEPTS + received,
            lambda: jp.choice(STATE, 3, (1,), replace=replace, p=p))


def test_choice_without_replacement_needs_enough_positive_weights():
    _expect(ValueError, re.escape("choice without replacement draws at most as many entries as "
                                  "p has positive weights, but p has 2 and shape (3,) asks for 3"),
            lambda: jp.choice(STATE, 4, (3,), replace=False, p=np.array([0.0, 1.0, 0.0, 2.0])))
    # As many positive weights as draws is fine; with replacement zeros never matter.
    assert sorted(jp.choice(STATE, 4, (2,), replace=False,
                            p=np.array([0.0, 1.0, 0.0, 2.0])).tolist()) == [1, 3]
    assert set(jp.choice(STATE, 4, (50,), p=np.array([0.0, 1.0, 0.0, 2.0])).tolist()) == {1, 3}


@pytest.mark.parametrize("lower,upper,received", [
    (1.0, 0.0, r"lower 1.0 and upper 0.0(?! \(at)"),
    (np.inf, 5.0, r"lower inf and upper 5.0(?! \(at)"),
    (np.array([0.0, 2.0]), 1.0, re.escape("lower 2.0 and upper 1.0 (at broadcast index (1,))")),
    (jnp.zeros((2, 1)), jnp.array([1.0, -1.0]),
     re.escape("lower 0.0 and upper -1.0 (at broadcast index (0, 1))")),
])
def test_truncated_normal_rejects_concrete_empty_interval(lower, upper, received):
    _expect(ValueError, "truncated_normal accepts bounds with lower <= upper, but was given "
            + received, lambda: jp.truncated_normal(STATE, lower, upper))


# -- categorical logits: rows that define no distribution ------------------------------------
LOGITS_ACCEPTS = re.escape("categorical logits accepts rows (along axis) without NaN, with at "
                           "least one entry above -inf and at most one +inf, but was given ")


@pytest.mark.parametrize("logits,axis,received", [
    (np.array([0.0, np.nan, 0.0]), -1, r"logits\[1\] = nan"),
    (jnp.array([[0.0, 1.0], [2.0, jnp.nan]]), 0, r"logits\[1, 1\] = nan"),  # concrete jax array
    (np.full(3, -np.inf), -1, re.escape("only -inf in logits[:]")),
    (np.array([[0.0, -np.inf], [-np.inf, -np.inf]]), 1, re.escape("only -inf in logits[1, :]")),
    (np.array([[0.0, -np.inf], [-np.inf, -np.inf]]), 0, re.escape("only -inf in logits[:, 1]")),
    (np.array([[0.0, 1.0, 2.0], [np.inf, 0.0, np.inf]]), -1,
     re.escape("logits[1, 0] = inf and logits[1, 2] = inf in one row (several +inf make "
               "softmax undefined)")),
    pytest.param(np.array([1e300, 1e300]), -1, re.escape("logits[0] = inf and logits[1] = inf"),
                 id="float64-overflowing-float32",  # jax warns when it casts them
                 marks=pytest.mark.filterwarnings("ignore:overflow encountered in cast")),
])
@pytest.mark.parametrize("replace", [True, False])
def test_categorical_rejects_concrete_invalid_logits(logits, axis, received, replace):
    _expect(ValueError, LOGITS_ACCEPTS + received,
            lambda: jp.categorical(STATE, logits, axis=axis, replace=replace))


def test_categorical_without_replacement_needs_enough_possible_categories():
    logits = np.array([[0.0, -np.inf, 1.0], [0.0, -np.inf, -np.inf]])
    _expect(ValueError, re.escape("categorical without replacement draws at most as many "
                                  "categories as a row of logits has entries above -inf, but "
                                  "logits[1, :] has 1 and shape (2, 2) asks for 2"),
            lambda: jp.categorical(STATE, logits, shape=(2, 2), replace=False))
    # As many possible categories as draws is fine; with replacement -inf entries never matter.
    first, second = jp.categorical(STATE, logits, replace=False).tolist()
    assert first in (0, 2) and second == 0
    assert sorted(jp.categorical(STATE, logits[0], shape=(2,), replace=False).tolist()) == [0, 2]
    assert set(jp.categorical(STATE, logits[1], shape=(50,)).tolist()) == {0}


def test_categorical_accepts_minus_inf_entries_and_a_single_plus_inf():
    # Impossible categories next to possible ones, and a point mass, are distributions.
    logits = np.array([[-np.inf, 0.0, -np.inf], [0.0, np.inf, -np.inf]])
    for replace in (True, False):
        np.testing.assert_array_equal(jp.categorical(STATE, logits, replace=replace), [1, 1])
        np.testing.assert_array_equal(
            jax.jit(lambda: jp.categorical(STATE, logits, replace=replace))(), [1, 1])
