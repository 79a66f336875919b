"""``_ndtri``: the project's own normal CDF and its inverse (jax 0.10.2's algorithms, transcribed;
see :mod:`jaxpmac._samplers._ndtri`). Nothing here compares with the installed jax's functions,
which moved under jax 0.12:

* the values are pinned: digests of the compiled outputs on fixed inputs, identical under jax
  0.10.2 and 0.12.0.1 and on every instruction set, so a change of jax or of this code that
  moves one value by one ulp fails here;
* the accuracy, against float64 references from the standard library (``statistics.NormalDist``,
  ``math.erfc``) within stated bounds;
* ``lower_half_ndtri`` (the shortcut ``normal`` takes) equals ``ndtri`` bit for bit on
  ``[p_min, 1/2]`` in both of its forms (the CPU's, each branch evaluated; the accelerators',
  one rational function per element), and ``jp.normal`` is ``-+ndtri(p)`` of its words.

The inputs of ``lower_half_ndtri`` are the ``p`` that ``_unit.symmetric_unit`` makes from stream
words: every word with low bits ``k`` near 0 (the deepest tail, ``p = 2**-(W+1)``), near
``2**(W-1)`` (``p`` next to 1/2), around both branch points (``exp(-2)`` and, for float64,
``exp(-32)``), and random words.
"""

from __future__ import annotations

import hashlib
import math
import statistics

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _ndtri
from jaxpmac._samplers import _unit
from conftest import for_each_lowering

N_RANDOM = 1 << 14

# sha256 of the compiled outputs on the inputs below (see _digest): the same under jax 0.10.2
# and 0.12.0.1, and under every --xla_cpu_max_isa level (every product rounded on its own, the
# log, erf and erfc the project's own). The ``ndtri`` inputs were computed with numpy's exp
# until 2026-11-27, which gave other float64 inputs on an AVX2 CPU than on the AVX-512 ones
# that pinned them; they are exact numbers now, pinned on an AVX2 CPU (jax 0.10.2 and 0.12.0.1).
PINNED = {
    "lower_half_ndtri/float32": "b311500db9997a860d16766ded89610ead80b933046132225ee79f7d5f746f7d",
    "lower_half_ndtri/float64": "96ee6b71f1617608026e301110929b4a0cb6ccd8ca50fee5bd5e288de8513dc0",
    "ndtri/float32": "5b73c5cbd4d55358544ed71b3b0b4044bbcdcb3742b9deade565ec2a744e0462",
    "ndtri/float64": "0eefb8cf813482e41696d02c254d0cc8819e220e7ec027b40806c31c4096f677",
    "ndtr/float32": "067a38a3ccf3d5b106f8b49c630783574f65c0260c47df7a271b1f04aa7de398",
    "ndtr/float64": "6d9f2aa63c5bd14c0f30f61de896e98e21345fe75748431e811272a050b29de5",
}

# A few of the pinned values, readable: (function, dtype, argument, float.hex of the value).
PINNED_VALUES = [
    ("ndtri", "float32", 0.025, "-0x1.f5c0320000000p+0"),
    ("ndtri", "float32", 1e-10, "-0x1.9720360000000p+2"),
    ("ndtri", "float32", 0.975, "0x1.f5c03a0000000p+0"),
    ("ndtri", "float64", 0.025, "-0x1.f5c0331eeff86p+0"),
    ("ndtri", "float64", 1e-10, "-0x1.97203597a2154p+2"),
    ("ndtri", "float64", 0.975, "0x1.f5c0331eeff84p+0"),
    ("ndtr", "float32", -5.0, "0x1.33ca300000000p-22"),
    ("ndtr", "float32", -1.5, "0x1.11a4720000000p-4"),
    ("ndtr", "float32", 2.5, "0x1.fcd2160000000p-1"),
    ("ndtr", "float64", -5.0, "0x1.33ca2f213382ap-22"),
    ("ndtr", "float64", -1.5, "0x1.11a46d89647eep-4"),
    ("ndtr", "float64", 2.5, "0x1.fcd21635036c6p-1"),
]


def _words_around_branches(word_dtype) -> np.ndarray:
    """Words whose ``p`` covers the ends of ``(0, 1/2]`` and both sides of each branch."""
    bits = np.dtype(word_dtype).itemsize * 8
    top = 1 << (bits - 1)
    ks = [range(64), range(top - 64, top)]
    for branch in (_ndtri.CENTRE_BELOW, _ndtri.FAR_TAIL_BELOW):
        k = int(branch * 2.0 ** bits)
        ks.append(range(max(k - 64, 0), k + 64))
    special = np.array([k for r in ks for k in r], np.uint64).astype(word_dtype)
    random = np.random.default_rng(7).integers(0, 1 << 63, N_RANDOM, dtype=np.uint64)
    words = np.concatenate([special, random.astype(word_dtype)])
    # Both halves (the top bit only picks the sign of the normal).
    return np.concatenate([words, words | np.array(top, word_dtype)])


def _p_of_words(words, dtype):
    return _unit.symmetric_unit(words, dtype)[1]


def _ndtri_inputs(dtype) -> np.ndarray:
    """``p`` on all of ``[0, 1]``: a uniform grid, both tails down to the smallest normal, the
    branch points and their complements, and random values."""
    # Exact numbers, no exp or log: numpy's are its own SIMD code on some CPUs (AVX-512), so
    # inputs computed with them would differ by machine. The tails: 1 to 1.75 times 2**e for
    # 2001 exponents e from the smallest normal float64's (-1022) to -2.
    exponents = np.linspace(-1022, -2, 2001).astype(np.int64)
    tails = np.ldexp(1.0 + (np.arange(2001) % 7) / 8.0, exponents)
    branches = np.array([_ndtri.CENTRE_BELOW, _ndtri.FAR_TAIL_BELOW, _ndtri.CENTRE_ABOVE])
    branches = np.concatenate([branches, np.nextafter(branches, 0), np.nextafter(branches, 1)])
    random = np.random.default_rng(11).uniform(0, 1, N_RANDOM)
    p = np.concatenate([np.linspace(0, 1, 4097), tails, 1 - tails, branches, random])
    return p.astype(dtype)


def _ndtr_inputs(dtype) -> np.ndarray:
    """``x`` from -40 to 10 (both branches of ``ndtr``, its far tail and underflow), the
    infinities and NaN, and random values."""
    random = np.random.default_rng(13).uniform(-40, 10, N_RANDOM)
    special = np.array([-np.inf, np.inf, np.nan, 0.0, -0.0])
    x = np.concatenate([np.linspace(-40, 10, 5001), special, random])
    return x.astype(dtype)


def _one_ratio(p, *, p_min):
    """The accelerators' form of ``lower_half_ndtri``, which it takes from
    ``_ndtri.ONE_RATIO_MIN_SIZE`` elements on, at any size."""
    return _ndtri._one_ratio_per_element(p, far_tail=p_min < _ndtri.FAR_TAIL_BELOW)


def _compiled(name, dtype):
    """The compiled outputs of function ``name`` on its fixed inputs in ``dtype``."""
    if name in ("lower_half_ndtri", "one_ratio"):
        form = _ndtri.lower_half_ndtri if name == "lower_half_ndtri" else _one_ratio
        word_dtype = np.uint32 if dtype == np.float32 else np.uint64
        p_min = 2.0 ** -(np.dtype(word_dtype).itemsize * 8 + 1)
        words = jnp.asarray(_words_around_branches(word_dtype))
        fn = jax.jit(lambda w: form(_p_of_words(w, dtype), p_min=p_min))
        return np.asarray(fn(words))
    inputs = _ndtri_inputs(dtype) if name == "ndtri" else _ndtr_inputs(dtype)
    return np.asarray(jax.jit(getattr(_ndtri, name))(jnp.asarray(inputs)))


def _digest(values: np.ndarray) -> str:
    """sha256 of the little-endian bytes, every NaN written as the same NaN (its sign and
    payload are not part of the values)."""
    values = np.where(np.isnan(values), np.array(np.nan, values.dtype), values)
    return hashlib.sha256(values.astype(values.dtype.newbyteorder("<")).tobytes()).hexdigest()


@pytest.mark.parametrize("name", ["lower_half_ndtri", "ndtri", "ndtr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_values_are_pinned(name, dtype):
    with jax.enable_x64(dtype == np.float64):
        values = _compiled(name, dtype)
    assert values.dtype == dtype
    assert _digest(values) == PINNED[f"{name}/{np.dtype(dtype).name}"]


@pytest.mark.parametrize("lowering", ["elementwise", "elementwise_pairs"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_accelerator_form_values_are_pinned(lowering, dtype):
    """The accelerators' ``lower_half_ndtri`` (one rational function per element, and the
    GPU's float64 division and root under ``elementwise``) has the CPU's pinned values."""
    with jax.enable_x64(dtype == np.float64), jp.force_lowering(lowering):
        values = _compiled("one_ratio", dtype)
    assert _digest(values) == PINNED[f"lower_half_ndtri/{np.dtype(dtype).name}"]


def test_pinned_values_by_hand():
    for name, dtype_name, argument, expected in PINNED_VALUES:
        dtype = np.dtype(dtype_name).type
        with jax.enable_x64(dtype == np.float64):
            value = jax.jit(getattr(_ndtri, name))(jnp.full((1,), argument, dtype))
            assert float(value[0]).hex() == expected, (name, dtype_name, argument)


def _ulp(reference: np.ndarray, dtype) -> np.ndarray:
    return np.spacing(np.abs(reference).astype(dtype)).astype(np.float64)


@pytest.mark.parametrize("dtype, max_ulp", [(np.float32, 4), (np.float64, 8)],
                         ids=["float32", "float64"])
def test_ndtri_accuracy(dtype, max_ulp):
    """Within 4 ulp (float32) or 8 ulp (float64) of ``statistics.NormalDist().inv_cdf``
    (measured: 3.8 and 6), on ``(0, 1)`` down to the deepest tail a normal reaches."""
    deepest = 2.0 ** -33 if dtype == np.float32 else 2.0 ** -65
    rng = np.random.default_rng(5)
    p = np.concatenate([rng.uniform(0, 1, 4000),
                        np.exp(rng.uniform(np.log(deepest), 0, 4000))]).astype(dtype)
    p = p[(p > 0) & (p < 1)]
    with jax.enable_x64(dtype == np.float64):
        ours = np.asarray(jax.jit(_ndtri.ndtri)(jnp.asarray(p))).astype(np.float64)
    normal = statistics.NormalDist()
    reference = np.array([normal.inv_cdf(float(v)) for v in p])
    np.testing.assert_array_less(np.abs(ours - reference), max_ulp * _ulp(reference, dtype))


@pytest.mark.parametrize("dtype, lowest", [(np.float32, -13.0), (np.float64, -37.0)],
                         ids=["float32", "float64"])
def test_ndtr_accuracy(dtype, lowest):
    """Relative error within ``4 (x**2 + 8)`` epsilon of ``erfc(-x / sqrt 2) / 2`` (``math``)
    wherever that is a normal float: ``x / sqrt 2`` is rounded before ``erfc``, whose relative
    sensitivity to it grows like ``x**2`` (measured: 1.5e-5 at x = -13 in float32, 3.9e-13 at
    x = -37 in float64). Subnormal results (``exp`` underflows) are not checked."""
    x = np.random.default_rng(3).uniform(lowest, 8, 8000).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        ours = np.asarray(jax.jit(_ndtri.ndtr)(jnp.asarray(x))).astype(np.float64)
    reference = np.array([0.5 * math.erfc(-float(v) / math.sqrt(2.0)) for v in x])
    normal = reference >= np.finfo(dtype).tiny
    bound = 4 * (x.astype(np.float64) ** 2 + 8) * np.finfo(dtype).eps * reference
    np.testing.assert_array_less(np.abs(ours - reference)[normal], bound[normal])


def test_edges():
    p = jnp.array([0.0, 1.0, 0.5, np.nan], jnp.float32)
    np.testing.assert_array_equal(np.asarray(_ndtri.ndtri(p)), [-np.inf, np.inf, 0.0, np.nan])
    x = jnp.array([-np.inf, np.inf, 0.0, np.nan, -50.0, 50.0], jnp.float32)
    np.testing.assert_array_equal(np.asarray(_ndtri.ndtr(x)), [0.0, 1.0, 0.5, np.nan, 0.0, 1.0])


# Every lowering by default: each has its own form of lower_half_ndtri.
@for_each_lowering(keep=("elementwise", "elementwise_pairs"))
class LowerHalfNdtriTest(chex.TestCase):
    """Under each lowering: the CPU's form of ``lower_half_ndtri`` (``rolled``) and the
    accelerators' (the others), each against ``ndtri`` under the same lowering."""

    def _assert_bit_for_bit(self, word_dtype, float_dtype):
        """Returns the values after checking them against :func:`_ndtri.ndtri` bit for bit."""
        words = jnp.asarray(_words_around_branches(word_dtype))
        p_min = 2.0 ** -(np.dtype(word_dtype).itemsize * 8 + 1)

        def forms(w):
            p = _p_of_words(w, float_dtype)
            return (_ndtri.lower_half_ndtri(p, p_min=p_min), _one_ratio(p, p_min=p_min),
                    _ndtri.ndtri(p))

        ours, one_ratio, full = self.variant(forms)(words)
        for form in (ours, one_ratio):
            np.testing.assert_array_equal(np.asarray(form).view(word_dtype),
                                          np.asarray(full).view(word_dtype))
        return ours

    @chex.variants(with_jit=True, without_jit=True)
    def test_float32_equals_ndtri_bit_for_bit(self):
        ours = self._assert_bit_for_bit(np.uint32, jnp.float32)
        assert float(jnp.min(ours)) < -6.2 and float(jnp.max(ours)) == 0.0

    @chex.variants(with_jit=True, without_jit=True)
    def test_float64_equals_ndtri_bit_for_bit(self):
        with jax.enable_x64(True):
            ours = self._assert_bit_for_bit(np.uint64, jnp.float64)
            # The far tail (z >= 8, p < exp(-32)) is reached and agrees too.
            assert float(jnp.min(ours)) < -8.5

    def test_far_tail_branch_only_where_reachable(self):
        p = jnp.full((4,), 0.25, jnp.float32)
        traced_with = jax.make_jaxpr(lambda q: _ndtri.lower_half_ndtri(q, p_min=2.0 ** -65))(p)
        traced_without = jax.make_jaxpr(lambda q: _ndtri.lower_half_ndtri(q, p_min=2.0 ** -33))(p)
        assert len(traced_without.eqns) < len(traced_with.eqns)


@pytest.mark.parametrize("lengths", [(3, 6, 5), (6, 2, 4), (5, 5, 1), (2, 2, 7)])
@pytest.mark.parametrize("jitted", [False, True])
def test_branch_horner_is_each_branch_polynomial(lengths, jitted):
    """Each element's value is its own branch's polynomial by ``horner``, bit for bit, whichever
    branch is the shorter (its elements follow other coefficients, then restart from +0), with
    overlapping masks (the first that holds wins) and negative, zero and large ``x``."""
    rng = np.random.default_rng(sum(lengths))
    x = jnp.asarray(np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.integers(-3, 4, 4000),
                                    [0.0, -0.0, 1e30, -1e30]]).astype(np.float32))
    coefficients = [tuple(rng.standard_normal(n)) for n in lengths]
    first = jnp.asarray(rng.random(x.shape) < 0.4)
    second = jnp.asarray(rng.random(x.shape) < 0.5)       # overlaps ``first``

    def horner(a, b, x):
        return _ndtri._branch_horner(
            [(a, coefficients[0]), (b, coefficients[1]), (None, coefficients[2])], x)

    ours = (jax.jit(horner) if jitted else horner)(first, second, x)
    each = [_fixed_math.horner(c, x) for c in coefficients]
    expected = jnp.where(first, each[0], jnp.where(second, each[1], each[2]))
    np.testing.assert_array_equal(np.asarray(ours).view(np.uint32),
                                  np.asarray(expected).view(np.uint32))


@pytest.mark.parametrize("lowering", ["elementwise", "elementwise_pairs"])
def test_a_large_normal_takes_the_one_ratio_form_with_the_same_values(lowering):
    """From ``ONE_RATIO_MIN_SIZE`` values on, an accelerator's ``normal`` evaluates one
    rational function per value (its map is another program), and draws the CPU's values."""
    state = jp.key(12).split_static("one ratio")
    n = _ndtri.ONE_RATIO_MIN_SIZE
    p = jax.ShapeDtypeStruct((n,), jnp.float32)
    with jp.force_lowering(lowering):
        forced = jax.jit(lambda s: jp.normal(s, (n,), jnp.float32))(state)
        below = jax.make_jaxpr(lambda q: _ndtri.lower_half_ndtri(q[1:], p_min=2.0 ** -33))(p)
        above = jax.make_jaxpr(lambda q: _ndtri.lower_half_ndtri(q, p_min=2.0 ** -33))(p)
    # One polynomial pair and division instead of two: fewer operations.
    assert len(above.eqns) < len(below.eqns)
    np.testing.assert_array_equal(np.asarray(forced).view(np.uint32),
                                  np.asarray(jp.normal(state, (n,), jnp.float32)).view(np.uint32))


def test_normal_is_signed_ndtri_of_its_words():
    """``jp.normal`` element ``i`` is ``-+ndtri(p)`` of stream word ``i``, both compiled (eager
    ``ndtri`` rounds each operation on its own, while a compiled one may fuse ``a * b + c``
    into one FMA rounding, so eager and compiled values may differ in the last bit)."""
    state = jp.key(11).split_static("ndtri")
    n = 4096

    @jax.jit
    def with_full_ndtri(state):
        upper, p = _unit.symmetric_unit(jp.bits(state, (n,), jnp.uint32), jnp.float32)
        return jnp.where(upper, -_ndtri.ndtri(p), _ndtri.ndtri(p))

    np.testing.assert_array_equal(np.asarray(jp.normal(state, (n,), jnp.float32)),
                                  np.asarray(with_full_ndtri(state)))


RANGE_EDGES = (0.0, 1e-40, 1e-20, float(np.exp(-32)), 1e-10, 0.01, float(np.exp(-2)), 0.2, 0.5,
               0.8, float(-np.expm1(-2)), 0.99, 1 - 1e-7, 1.0)
# One edge in each of the regions whose branches differ (each range compiles a program).
FEW_RANGE_EDGES = (0.0, 1e-40, 1e-20, 0.01, 0.2, 0.5, 0.99, 1 - 1e-7, 1.0)


@pytest.mark.parametrize("dtype, edges", [
    (np.float32, FEW_RANGE_EDGES),
    pytest.param(np.float32, RANGE_EDGES, marks=pytest.mark.slow),
    pytest.param(np.float64, RANGE_EDGES, marks=pytest.mark.slow)])
def test_ndtri_within_a_range_equals_ndtri(dtype, edges):
    """``ndtri(p, within=(lo, hi))`` traces fewer branches and gives ``ndtri``'s values, at the
    ranges' ends, next to them and inside, for every pair of edges (subnormal ends included)."""
    rng = np.random.default_rng(0)
    with jax.enable_x64(dtype == np.float64):
        for lo_edge in edges:
            for hi_edge in (e for e in edges if e >= lo_edge):
                lo, hi = dtype(lo_edge), dtype(hi_edge)
                p = np.concatenate([rng.uniform(lo, hi, 2000), np.linspace(lo, hi, 500),
                                    [lo, hi], np.nextafter(np.array([lo, hi], dtype), 0.5)])
                p = jnp.asarray(np.clip(p.astype(dtype), lo, hi))
                ranged = jax.jit(lambda p: _ndtri.ndtri(p, within=(float(lo), float(hi))))(p)
                np.testing.assert_array_equal(ranged, jax.jit(_ndtri.ndtri)(p),
                                              err_msg=f"range [{lo}, {hi}]")
