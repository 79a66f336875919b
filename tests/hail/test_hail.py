"""Tests of ``jaxpmac.hail`` against Hail 0.2.139's own outputs and the reference oracle.

``tests/data/conformance/hail_public.json`` holds values Hail itself produced; the pure-Python
oracle (``reference_oracle.hail_rand_*``, verified against those values) checks everything
else: random seeds and messages, the slow path of ``rand_int32``, ``rand_norm``'s rejections.
"""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized
from hypothesis import given
from hypothesis import strategies as st

import jaxpmac as jp
from jaxpmac import hail
from jaxpmac._cipher import _words as w
from jaxpmac._hail import _engine as engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: the oracle
import reference_oracle as ro  # noqa: E402
from conftest import CONFORMANCE, for_each_lowering, property_settings  # noqa: E402

CASES = json.loads((CONFORMANCE / "hail_public.json").read_text())
NORM_RTOL = 1e-15      # docs/spec.md section 3: XLA's log against Java's StrictMath.log
SETTINGS = property_settings(12)

# Hail's public functions with the parameters of the conformance file's fields.
DRAWS = {
    "u": lambda s: hail.rand_unif(s, 0.0, 1.0),
    "n": lambda s: hail.rand_norm(s, 0.0, 1.0),
    "i32": lambda s: hail.rand_int32(s, 1000),
    "i64": hail.rand_int64,
    "b": lambda s: hail.rand_bool(s, 0.3),
}


def hail_state(global_seed, seed, message):
    """The state of Hail's (global_seed, seed, uids) -- the mapping jaxpmac.hail documents."""
    return jp.key(global_seed).split(*message).split_static(-seed - 1)


def case_state(case):
    return hail_state(case["global_seed"], case["seed"], case["message"])


def oracle(field, global_seed, seed, message, **params):
    args = ro.hail_state(global_seed, seed, message)
    if field == "u":
        return ro.hail_rand_unif(*args, **params)
    if field == "n":
        return ro.hail_rand_norm(*args, **params)
    if field == "i32":
        return ro.hail_rand_int32(*args, params.get("n", 1000))
    if field == "i64":
        return ro.hail_rand_int64(*args)
    return ro.hail_rand_bool(*args, params.get("p", 0.3))


def assert_hail_value(field, got, expected, where=""):
    """Exact for every field but n, which may differ from StrictMath in the last ulp."""
    got = got.item() if hasattr(got, "item") else got
    if field == "n":
        assert math.isclose(got, expected, rel_tol=NORM_RTOL, abs_tol=0.0), (where, got, expected)
    else:
        assert got == expected and type(got) is type(expected), (where, got, expected)


# One public case per message length (0, 1, 2, 5, 9 uids), both global seeds and both seeds.
NORM_JIT_CASES = [CASES[i] for i in (0, 6, 12, 18, 4)]


def case_id(case):
    return f"G{case['global_seed']}_S{case['seed']}_len{len(case['message'])}"


def float32_of(value: float) -> float:
    """``value`` rounded to nearest float32 (ties to even), as numpy does."""
    return float(np.float32(value))


# -------------------------------------------------------------------------------------------
# Hail's own outputs, every public case, with and without jit
# -------------------------------------------------------------------------------------------


@for_each_lowering
class ConformanceTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters("u", "n", "i32", "i64", "b")
    def test_every_public_case_x64(self, field):
        self.check_public_cases_x64(field, CASES)

    @pytest.mark.slow
    def test_every_public_case_x64_rand_norm_under_jit(self):
        self.check_public_cases_x64("n", CASES, jit=True)

    def check_public_cases_x64(self, field, cases, jit=None):
        draw = DRAWS[field]
        if jit is None:
            draw_all = self.variant(lambda states: [draw(s) for s in states])
            if field == "n" and self.variant.type is chex.ChexVariantType.WITH_JIT:
                # One program holds a while_loop per case (~2 s of XLA compile each on a
                # shared 2-core CPU): one case per message length here, all in the slow test.
                cases = NORM_JIT_CASES
        else:
            draw_all = jax.jit(lambda states: [draw(s) for s in states])
        with jax.enable_x64(True):
            got = draw_all([case_state(c) for c in cases])
            expected_dtype = {"u": jnp.float64, "n": jnp.float64, "i32": jnp.int32,
                              "i64": jnp.int64, "b": jnp.bool_}[field]
            assert len(got) == len(cases)
            for case, value in zip(cases, got):
                assert value.shape == () and value.dtype == expected_dtype
                assert_hail_value(field, value, case[field], case_id(case))

    @chex.variants(with_jit=True, without_jit=True)
    def test_every_public_case_x64_off(self):
        assert not jax.config.jax_enable_x64

        def draw_all(states):
            return [(hail.rand_unif(s), hail.rand_int32(s, 1000), hail.rand_bool(s, 0.3))
                    for s in states]

        got = self.variant(draw_all)([case_state(c) for c in CASES])
        for case, (u, i32, b) in zip(CASES, got):
            assert u.dtype == jnp.float32 and i32.dtype == jnp.int32 and b.dtype == jnp.bool_
            # u: Hail's float64 rounded once to float32; i32 and b exact.
            assert float(u) == float32_of(case["u"]), case_id(case)
            assert int(i32) == case["i32"] and bool(b) == case["b"], case_id(case)

    def test_every_public_case_x64_off_rand_norm(self):
        # Hail's method in float32 arithmetic: close to Hail's value, not bit-exact (documented).
        # (Under jit it is the same program; jit is covered by the vmap tests below.)
        for case in CASES:
            n = hail.rand_norm(case_state(case))
            assert n.dtype == jnp.float32
            assert math.isclose(float(n), case["n"], rel_tol=1e-5, abs_tol=1e-6), case_id(case)

    @chex.variants(with_jit=True, without_jit=True)
    def test_rand_int64_needs_x64(self):
        with pytest.raises(TypeError, match="jax_enable_x64"):
            self.variant(hail.rand_int64)(case_state(CASES[0]))


# -------------------------------------------------------------------------------------------
# vmap over states: lanes of the message uids, each checked against Hail or the oracle
# -------------------------------------------------------------------------------------------


@for_each_lowering
class VmapTest(parameterized.TestCase):

    def test_vmap_over_message_uids_x64(self):
        # The 5-word public messages (one full dynamic block) of global seed 7, seed 1, and
        # random messages of the same length, as lanes of one vmapped, jitted draw.
        global_seed, seed = 7, 1
        public = [c for c in CASES if (c["global_seed"], c["seed"], len(c["message"]))
                  == (global_seed, seed, 5)]
        rng = np.random.default_rng(3)
        messages = [c["message"] for c in public] + [
            [int(x) for x in rng.integers(-2**63, 2**63, size=5, dtype=np.int64)]
            for _ in range(5)]

        def draw_all(m):
            s = hail_state(global_seed, seed, m)
            return {field: draw(s) for field, draw in DRAWS.items()}

        with jax.enable_x64(True):
            lanes = jax.jit(jax.vmap(draw_all))(jnp.asarray(np.array(messages, np.int64)))
        for field in DRAWS:
            assert lanes[field].shape == (len(messages),)
            for lane, m in enumerate(messages):
                expected = (public[lane][field] if lane < len(public)
                            else oracle(field, global_seed, seed, m))
                assert_hail_value(field, lanes[field][lane], expected, f"{field} lane {lane}")

    def test_rand_norm_vmap_lanes_with_different_rejection_counts(self):
        # 256 lanes plus the rare ones: about a fifth need a rejection, some several, one in
        # ~20 reads a second block, so the shared while_loop runs lanes that finish at
        # different times; mean and sd exercise Hail's mean + sd * z.
        uids = list(range(256)) + list(RARE_NORM_UIDS)
        base = hail_state(5, 3, [])
        with jax.enable_x64(True):
            values = jax.jit(jax.vmap(lambda i: hail.rand_norm(base.split(i), 0.25, 3.5)))(
                jnp.asarray(uids))
        values = np.asarray(values)
        for uid, value in zip(uids, values):
            assert_hail_value("n", value, oracle("n", 5, 3, [uid], mean=0.25, sd=3.5), uid)
        # A normal sample: loose bounds a correct generator passes (fixed seed).
        z = (values[:256] - 0.25) / 3.5
        assert abs(z.mean()) < 0.2 and abs(z.std() - 1) < 0.15

    def test_x64_off_vmap_over_uids_and_parameters(self):
        base = hail_state(2, 9, [5])
        n = jnp.array([1, 7, 1000, 2**31 - 1, 2**30 + 3, 12, 99, 3], jnp.int32)
        p = jnp.linspace(0.0, 1.0, 8, dtype=jnp.float32)
        u, i32, b = jax.vmap(lambda i, n, p: (hail.rand_unif(base.split(i)),
                                              hail.rand_int32(base.split(i), n),
                                              hail.rand_bool(base.split(i), p)))(
            jnp.arange(8), n, p)
        for i in range(8):
            assert float(u[i]) == float32_of(oracle("u", 2, 9, [5, i]))
            assert int(i32[i]) == oracle("i32", 2, 9, [5, i], n=int(n[i]))
            assert bool(b[i]) == oracle("b", 2, 9, [5, i], p=float(p[i]))


# -------------------------------------------------------------------------------------------
# Random seeds and messages against the oracle (x64 on: Hail's exact values)
# -------------------------------------------------------------------------------------------

words = st.integers(min_value=-2**63, max_value=2**64 - 1)
seeds = st.integers(min_value=-2**62, max_value=2**62)   # -seed - 1 stays a word
messages = st.lists(words, max_size=10)


SMALLEST_NORMAL_F64 = float(np.finfo(np.float64).tiny)


@SETTINGS
@given(global_seed=words, seed=seeds, message=messages,
       lower=st.floats(-1e6, 1e6, allow_subnormal=False),
       width=st.floats(0.0, 1e6, allow_subnormal=False))
def test_rand_unif_matches_oracle(global_seed, seed, message, lower, width):
    with jax.enable_x64(True):
        s = hail_state(global_seed, seed, message)
        assert_hail_value("u", hail.rand_unif(s), oracle("u", global_seed, seed, message))
        got = hail.rand_unif(s, lower, lower + width)
        expected = oracle("u", global_seed, seed, message, lower=lower, upper=lower + width)
        if 0 < abs(expected) < SMALLEST_NORMAL_F64 and jax.default_backend() == "cpu":
            assert float(got) == 0.0  # documented: XLA:CPU flushes subnormal results to zero
        else:
            assert_hail_value("u", got, expected)
    assert float(hail.rand_unif(s)) == float32_of(oracle("u", global_seed, seed, message))


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="flushing subnormals is XLA:CPU's")
def test_rand_unif_subnormal_bounds_flush_to_zero_on_cpu():
    """Documented limit: Java keeps a subnormal width (Hail gives ~5.9e-314 here), XLA:CPU
    flushes subnormal float64 inputs and results to zero."""
    with jax.enable_x64(True):
        s = hail_state(0, 0, [])
        width = 2.2250738585e-313
        assert 0 < oracle("u", 0, 0, [], lower=0.0, upper=width) < SMALLEST_NORMAL_F64
        assert float(hail.rand_unif(s, 0.0, width)) == 0.0


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="flushing subnormals is XLA:CPU's")
def test_rand_norm_subnormal_mean_and_sd_flush_to_zero_on_cpu():
    """Documented limit, as for rand_unif: Java keeps a subnormal mean (Hail's value is the
    mean itself when sd is 0), XLA:CPU flushes subnormal float64 inputs to zero."""
    with jax.enable_x64(True):
        s = hail_state(0, 0, [])
        mean = 1e-310
        assert oracle("n", 0, 0, [], mean=mean, sd=0.0) == mean
        assert float(hail.rand_norm(s, mean, 0.0)) == 0.0
        assert float(hail.rand_norm(s, 0.0, 1e-310)) == 0.0


@SETTINGS
@given(global_seed=words, seed=seeds, message=messages,
       mean=st.floats(-100, 100, allow_subnormal=False),
       sd=st.floats(0.0, 100, allow_subnormal=False))
def test_rand_norm_matches_oracle(global_seed, seed, message, mean, sd):
    with jax.enable_x64(True):
        got = hail.rand_norm(hail_state(global_seed, seed, message), mean, sd)
    expected = oracle("n", global_seed, seed, message, mean=mean, sd=sd)
    # The tolerance is relative to the standard normal's log error, scaled by sd.
    z = oracle("n", global_seed, seed, message)
    assert abs(float(got) - expected) <= NORM_RTOL * abs(z) * sd + 4 * np.spacing(abs(expected))


@SETTINGS
@given(global_seed=words, seed=seeds, message=messages,
       n=st.one_of(st.integers(1, 2**31 - 1), st.integers(2**31 - 4096, 2**31 - 1)))
def test_rand_int32_matches_oracle(global_seed, seed, message, n):
    s = hail_state(global_seed, seed, message)
    assert_hail_value("i32", hail.rand_int32(s, n), oracle("i32", global_seed, seed, message, n=n))
    with jax.enable_x64(True):
        assert_hail_value("i32", hail.rand_int32(s, n),
                          oracle("i32", global_seed, seed, message, n=n))


@SETTINGS
@given(global_seed=words, seed=seeds, message=messages, p=st.floats(-0.5, 1.5))
def test_rand_int64_and_rand_bool_match_oracle(global_seed, seed, message, p):
    s = hail_state(global_seed, seed, message)
    expected_bool = oracle("b", global_seed, seed, message, p=p)
    assert_hail_value("b", hail.rand_bool(s, p), expected_bool)
    with jax.enable_x64(True):
        assert_hail_value("i64", hail.rand_int64(s), oracle("i64", global_seed, seed, message))
        assert_hail_value("b", hail.rand_bool(s, p), expected_bool)


# -------------------------------------------------------------------------------------------
# The rare paths: rand_int32's slow path, rand_norm's rejections and two-word doubles
# -------------------------------------------------------------------------------------------


def int32_takes_slow_path(global_seed, seed, message, n):
    eng = ro.HailEngine(*ro.hail_state(global_seed, seed, message))
    return (n * eng.next_int()) % 2**32 >= 2**32 - n


def test_rand_int32_slow_path_near_2_31():
    base = hail_state(3, 8, [])
    ns = [2**31 - 1 - k for k in range(24)]
    slow = [int32_takes_slow_path(3, 8, [i], n) for i, n in enumerate(ns)]
    assert 3 <= sum(slow) <= 21       # both paths are exercised (about half each)
    got = jax.jit(jax.vmap(lambda i, n: hail.rand_int32(base.split(i), n)))(
        jnp.arange(len(ns)), jnp.asarray(ns, jnp.int32))
    for i, n in enumerate(ns):
        assert int(got[i]) == oracle("i32", 3, 8, [i], n=n), (i, n, slow[i])


def test_rand_int32_traced_nonpositive_n_is_what_hail_returns():
    # Hail does not check n: Java's nextInt(n) returns the high word of the signed n * x.
    base = hail_state(0, 0, [])
    ns = [0, -1, -2, -1000, -2**31]
    got = jax.vmap(lambda n: hail.rand_int32(base, n))(jnp.asarray(ns, jnp.int32))
    x = ro.HailEngine(*ro.hail_state(0, 0, [])).next_int()
    for n, value in zip(ns, got):
        high = ((n * x) >> 32) & 0xFFFFFFFF
        assert int(value) == (high - 2**32 if high >> 31 else high)


def polar_usage(global_seed, seed, message):
    """(pairs drawn, words read) by Hail's rand_norm on this state (oracle)."""
    eng = ro.HailEngine(*ro.hail_state(global_seed, seed, message))
    pairs = 0
    while True:
        pairs += 1
        v1, v2 = 2 * eng.next_double() - 1, 2 * eng.next_double() - 1
        if 0 < v1 * v1 + v2 * v2 < 1:
            return pairs, 4 * eng._block_index - len(eng._buffer)


# uids of hail_state(5, 3, [uid]) found with the oracle: 1565 and 2342 reject 4 and 5 pairs
# (three output blocks); 18 and 924 have a double whose first word has >= 12 trailing zeros.
RARE_NORM_UIDS = (1565, 2342, 18, 924)


def test_rare_norm_uids_exercise_the_rare_paths():
    # What the vmap test above relies on, and the scalar (not vmapped) path on the same states.
    usage = [polar_usage(5, 3, [uid]) for uid in RARE_NORM_UIDS]
    assert usage[0][0] >= 5 and usage[1][0] >= 5 and usage[0][1] > 8 and usage[1][1] > 8
    assert usage[2][1] > 2 * usage[2][0] and usage[3][1] > 2 * usage[3][0]
    base = hail_state(5, 3, [])
    with jax.enable_x64(True):
        for uid in RARE_NORM_UIDS:
            assert_hail_value("n", hail.rand_norm(base.split(uid)), oracle("n", 5, 3, [uid]), uid)


# -------------------------------------------------------------------------------------------
# x64 off: float32 results, exact bools
# -------------------------------------------------------------------------------------------


def next_double_up(x: float) -> float:
    return float(np.nextafter(x, np.inf))


@for_each_lowering
class X64OffTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    def test_rand_bool_is_exact_against_python_floats(self):
        # p = u gives False, the next double above u True: float32 rounding cannot tell.
        s = case_state(CASES[3])
        u = CASES[3]["u"]
        draw = self.variant(lambda s: [hail.rand_bool(s, p) for p in
                                       (u, next_double_up(u), float32_of(u), -0.0, math.inf,
                                        math.nan, 1.0, 5e-324)])
        got = [bool(b) for b in draw(s)]
        assert got == [False, True, u < float32_of(u), False, True, False, True, False]

    @chex.variants(with_jit=True, without_jit=True)
    def test_rand_bool_traced_float32_p_is_exact(self):
        s = case_state(CASES[5])
        u = CASES[5]["u"]
        u32 = np.float32(u)
        ps = np.array([u32, np.nextafter(u32, np.float32(0)), np.nextafter(u32, np.float32(2)),
                       0.0, -0.0, -1.0, 1e-45, np.inf, -np.inf, np.nan, 1.0, 0.5],
                      np.float32)
        got = self.variant(jax.vmap(lambda p: hail.rand_bool(s, p)))(jnp.asarray(ps))
        assert [bool(b) for b in got] == [u < float(p) for p in ps]

    def test_positive_float32_as_double_bits_matches_numpy(self):
        patterns = np.concatenate([
            np.random.default_rng(0).integers(0, 2**32, size=2000, dtype=np.uint64),
            np.array([0, 1, 2, 0x7FFFFF, 0x800000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000,
                      0x80000000, 0x80000001, 0xFF800000, 0x3F800000, 0x00400000], np.uint64),
        ]).astype(np.uint32)
        p = patterns.view(np.float32)
        bits = jax.jit(engine.positive_float32_as_double_bits)(jnp.asarray(p))
        got = (np.asarray(bits.hi).astype(np.uint64) << 32) | np.asarray(bits.lo)
        with np.errstate(invalid="ignore"):
            positive = p > 0
            expected = np.where(positive, p.astype(np.float64).view(np.uint64), 0)
        np.testing.assert_array_equal(got, expected)

    def test_bits_to_float32_rounds_once_like_numpy(self):
        rng = np.random.default_rng(1)
        # Every binade Hail's doubles can reach, float32 subnormals and underflow included,
        # with random significands and the tie and near-tie patterns of the dropped 29 bits.
        exponents = rng.integers(700, 1151, size=3000, dtype=np.uint64)
        fractions = rng.integers(0, 2**52, size=3000, dtype=np.uint64)
        ties = np.array([1 << 28, (1 << 28) - 1, (1 << 28) + 1, (3 << 28), 0, (1 << 29) - 1],
                        np.uint64)
        fractions[:600] = (fractions[:600] & ~np.uint64((1 << 29) - 1)) | np.resize(ties, 600)
        exponents[600:700] = np.arange(850, 950, dtype=np.uint64)    # around 2**-126 .. 2**-149
        patterns = (exponents << np.uint64(52)) | fractions
        got = jax.jit(engine.bits_to_float32)(
            w.Pair(jnp.asarray((patterns >> np.uint64(32)).astype(np.uint32)),
                   jnp.asarray(patterns.astype(np.uint32))))
        expected = patterns.view(np.float64).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32), expected.view(np.uint32))


# -------------------------------------------------------------------------------------------
# Rand_unif's exponent: zero words, and no select (compile time on jax 0.12)
# -------------------------------------------------------------------------------------------


def java_unit_uniform_bits(block):
    """Hail's _rand_unif bits from T_0's words, as Java computes them: a zero word lowers the
    exponent by 64, and Long.numberOfTrailingZeros(0) is 64 (so four zero words give
    1022 - 256; the oracle leaves that case, of probability 2**-256, undefined)."""
    bits, exponent = block[3], 1022
    for following in (block[2], block[1], block[0]):
        if bits == 0:
            bits, exponent = following, exponent - 64
    zeros = 64 if bits == 0 else (bits & -bits).bit_length() - 1
    return ((exponent - zeros) << 52) | (block[0] >> 12)


def test_unit_uniform_bits_with_zero_words_is_java():
    # Every block of four words from these values: zero words anywhere, one-bit words at the
    # ends of both halves, and words whose low half is zero.
    values = (0, 1, 1 << 31, 1 << 32, 1 << 63, 0xFFFFFFFF00000000, 0x0123456789ABCDEF)
    blocks = [(a, b, c, d) for a in values for b in values for c in values for d in values]

    def pairs(column):
        words = np.array(column, np.uint64)
        return w.Pair(jnp.asarray((words >> np.uint64(32)).astype(np.uint32)),
                      jnp.asarray(words.astype(np.uint32)))

    got = jax.jit(engine.unit_uniform_bits)(tuple(pairs(column) for column in zip(*blocks)))
    got = (np.asarray(got.hi).astype(np.uint64) << np.uint64(32)) | np.asarray(got.lo)
    assert [int(x) for x in got] == [java_unit_uniform_bits(block) for block in blocks]
    words = [v for v in values] + [1 << k for k in range(64)]
    zeros = jax.jit(engine.trailing_zeros)(pairs(words))
    assert [int(z) for z in zeros] == [64 if v == 0 else (v & -v).bit_length() - 1
                                       for v in words]


@pytest.mark.parametrize("x64", [False, True])
def test_rand_bool_vmapped_emits_no_select(x64):
    """A structural guard, not a timing: vmapped, XLA:CPU compiles a draw into one loop over
    the batch with the unrolled cipher, and jax 0.12's LLVM loop vectorizer took time
    exponential in the cipher's depth when its words fed compares and selects (rand_unif and
    rand_bool: 12 s with x64 off, 150 s on, for 0.1 s on jax 0.10). With a Python float p,
    rand_bool's program, the cipher and rand_unif's exponent included, has no select at all;
    keep it so. (The uids' sign extension and a traced p have selects of their own, before the
    cipher, which did no harm.)"""
    with jax.enable_x64(x64):
        draw = jax.vmap(lambda i: hail.rand_bool(jp.key(7).split(i), 0.3))
        closed = jax.make_jaxpr(draw)(jnp.arange(8))
        name = "bernoulli_x64" if x64 else "bernoulli_exact"
        (engine_jaxpr,) = [e.params["jaxpr"] for e in closed.jaxpr.eqns
                           if e.params.get("name") == name]
        text = str(engine_jaxpr)
        assert text.count("shift_left") > 40     # the unrolled cipher is in there
        assert "select_n" not in text
        block = tuple(w.Pair(jnp.zeros(8, jnp.uint32), jnp.zeros(8, jnp.uint32)) for _ in range(4))
        assert "select_n" not in str(jax.make_jaxpr(engine.unit_uniform_bits)(block))


@pytest.mark.parametrize("x64", [False, True])
def test_rand_unif_vmapped_for_a_cpu_bars_the_cipher_from_its_float_arithmetic(x64):
    """A structural guard, not a timing: vmapped, jax 0.12's XLA:CPU takes 80-100 s to compile
    rand_unif when the cipher and ``rounded``'s integer minimums (which keep the affine map
    from becoming a multiply-add) share one loop (LLVM's loop vectorizer), 0.4 s with an
    optimization barrier between them. Lowered for a CPU, every ``minimum`` of the engine's
    ``uniform`` comes after a barrier that comes after the float's bits (``popcnt``: the
    exponent from the block's trailing zeros). ``rounded`` is a jitted function, so its
    minimums may stand as a call to it, which XLA inlines where the call is."""
    with jax.enable_x64(x64):
        draw = jax.vmap(lambda i: hail.rand_unif(jp.key(7).split(i), -1.0, 2.0))
        text = jax.jit(draw).lower(jnp.arange(8)).as_text()
    uniform = text[text.index("func.func private @uniform"):]
    uniform = uniform[:uniform.index("\n  }\n")]
    ops = ["minimum" if op.startswith("call") else op for op in re.findall(
        r"optimization_barrier|minimum|popcnt|call @_rounded\w*", uniform)]
    barrier = ops.index("optimization_barrier")
    assert "popcnt" in ops[:barrier] and "minimum" not in ops[:barrier]
    assert "minimum" in ops[barrier:]


def test_float32_of_is_round_to_nearest():
    # The helper the x64-off checks rely on: numpy rounds float64 to float32 to nearest even.
    assert float32_of(1 + 2**-24) == 1.0 and float32_of(1 + 3 * 2**-24) == 1 + 2**-22
    assert struct.unpack("<f", struct.pack("<f", 0.1))[0] == float32_of(0.1)


# -------------------------------------------------------------------------------------------
# Input validation at trace time
# -------------------------------------------------------------------------------------------


class ValidationTest(parameterized.TestCase):

    @parameterized.parameters(
        (hail.rand_unif, ()), (hail.rand_norm, ()), (hail.rand_int32, (10,)),
        (hail.rand_bool, (0.5,)))
    def test_state_must_be_a_state(self, fn, args):
        with pytest.raises(TypeError, match="RNGState"):
            fn(jax.random.key(0), *args)
        with pytest.raises(TypeError, match="RNGState"):
            fn(3, *args)

    @parameterized.parameters((0,), (-5,), (2**31,), (2**40,), (np.int64(0),), (np.int32(-3),))
    def test_rand_int32_n_out_of_range(self, n):
        with pytest.raises(ValueError, match=r"rand_int32 a accepts .*\[1, 2\*\*31\)"):
            hail.rand_int32(jp.key(0), n)

    def test_rand_int32_concrete_jax_array_n_is_checked(self):
        with pytest.raises(ValueError, match="rand_int32 a accepts"):
            hail.rand_int32(jp.key(0), jnp.int32(0))

    @parameterized.parameters((1.5,), (True,), ("7",), (None,), (np.float32(3.0),))
    def test_rand_int32_n_wrong_type(self, n):
        with pytest.raises(TypeError, match="rand_int32 a accepts"):
            hail.rand_int32(jp.key(0), n)

    def test_rand_int32_n_must_be_a_scalar(self):
        with pytest.raises(ValueError, match="vmap over states"):
            hail.rand_int32(jp.key(0), jnp.array([3, 4]))

    @parameterized.parameters(
        (hail.rand_unif, "lower"), (hail.rand_unif, "upper"), (hail.rand_norm, "mean"),
        (hail.rand_norm, "sd"), (hail.rand_bool, "p"))
    def test_real_parameters(self, fn, name):
        for bad, error in (("0.5", TypeError), (True, TypeError), (1j, TypeError),
                           (jnp.ones(3), ValueError), (jnp.array([True]), TypeError)):
            with pytest.raises(error, match=f"{fn.__name__} {name} accepts"):
                fn(jp.key(0), **{name: bad})

    def test_parameters_accept_ints_and_arrays(self):
        s = jp.key(1)
        assert hail.rand_unif(s, 1, 3).dtype == jnp.float32
        assert hail.rand_norm(s, jnp.float32(2.0), np.float64(0.5)).shape == ()
        assert bool(hail.rand_bool(s, 1)) and not bool(hail.rand_bool(s, 0))
        assert int(hail.rand_int32(s, np.int64(1))) == 0
