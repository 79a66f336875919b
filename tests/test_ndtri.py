"""``_ndtri``: the lower-half inverse normal CDF gives ``jax.scipy.special.ndtri``'s values bit
for bit, so ``normal`` and the gamma family's proposals did not change when it replaced
``ndtri``.

The inputs are the ``p`` that ``_unit.symmetric_unit`` makes from stream words: every word
with low bits ``k`` near 0 (the deepest tail, ``p = 2**-(W+1)``), near ``2**(W-1)`` (``p``
next to 1/2), around both branch points (``exp(-2)`` and, for float64, ``exp(-32)``), and
random words. (All ``2**31`` float32 inputs were compared once, off-line: no difference.)
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtri

import jaxpmac as jp
from jaxpmac import _ndtri, _unit

N_RANDOM = 1 << 14


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


def _lower_half_and_ndtri(words, dtype):
    _, p = _unit.symmetric_unit(words, dtype)
    p_min = 2.0 ** -(words.dtype.itemsize * 8 + 1)
    return _ndtri.lower_half_ndtri(p, p_min=p_min), ndtri(p)


class LowerHalfNdtriTest(chex.TestCase):

    def _assert_bit_for_bit(self, word_dtype, float_dtype):
        """Returns the values after checking them against ``ndtri`` bit for bit."""
        words = jnp.asarray(_words_around_branches(word_dtype))
        ours, theirs = self.variant(lambda w: _lower_half_and_ndtri(w, float_dtype))(words)
        np.testing.assert_array_equal(np.asarray(ours).view(word_dtype),
                                      np.asarray(theirs).view(word_dtype))
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


def test_normal_is_signed_ndtri_of_its_words():
    """``jp.normal`` element ``i`` is ``-+ndtri(p)`` of stream word ``i`` with JAX's ndtri, both
    compiled (eager ``ndtri`` rounds each operation on its own, while a compiled one may fuse
    ``a * b + c`` into one FMA rounding, so eager and compiled values may differ in the last
    bit)."""
    state = jp.key(11).split_static("ndtri")
    n = 4096

    @jax.jit
    def with_jax_ndtri(state):
        upper, p = _unit.symmetric_unit(jp.bits(state, (n,), jnp.uint32), jnp.float32)
        return jnp.where(upper, -ndtri(p), ndtri(p))

    np.testing.assert_array_equal(np.asarray(jp.normal(state, (n,), jnp.float32)),
                                  np.asarray(with_jax_ndtri(state)))
