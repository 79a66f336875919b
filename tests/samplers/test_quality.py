"""A fast built-in statistical battery (issue 7), deterministic through fixed seeds.

Each test draws from fixed messages, so its statistic is the same on every run; the thresholds
are set so that a correct generator passes with overwhelming probability (p > 1e-6 or 6-sigma
bounds), and a broken one (repeated streams, stuck bits, correlated neighbours) fails. The long
dieharder battery is a separate command (see README, "Statistical quality").
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import jaxpmac as jp

P_FLOOR = 1e-6


def long_stream(n_words: int) -> np.ndarray:
    return np.asarray(jp.bits(jp.key(20261122).split_static("quality"), (n_words,)))


def interleaved_neighbours(n_streams: int, words_each: int, *, depth: int = 1) -> np.ndarray:
    """Streams of adjacent uids ``split(..., 0), split(..., 1), ...`` interleaved word by word;
    ``depth`` zero words come first, so the uids sit at several positions of the message."""
    base = jp.key(7).split(*([0] * (depth - 1)))
    draws = jax.vmap(lambda i: jp.bits(base.split(i), (words_each,)))(jnp.arange(n_streams))
    return np.asarray(draws).T.reshape(-1)


SOURCES = {
    "long stream": lambda: long_stream(1 << 18),
    "adjacent uids, depth 1": lambda: interleaved_neighbours(256, 1 << 10),
    "adjacent uids, depth 4": lambda: interleaved_neighbours(256, 1 << 10, depth=4),
    "adjacent uids, depth 6": lambda: interleaved_neighbours(256, 1 << 10, depth=6),
    "adjacent nonces": lambda: np.asarray(jax.vmap(
        lambda seed: jp.bits(jp.key(seed), (1 << 10,)))(
            jnp.arange(256, dtype=jnp.uint32))).T.reshape(-1),
}


@pytest.fixture(scope="module", params=sorted(SOURCES))
def words(request) -> np.ndarray:
    out = SOURCES[request.param]()
    assert out.dtype == np.uint32 and out.size == 1 << 18
    return out


def test_byte_frequencies_chi_square(words):
    counts = np.bincount(words.view(np.uint8), minlength=256)
    assert stats.chisquare(counts).pvalue > P_FLOOR


def test_every_bit_position_is_balanced(words):
    ones = ((words[:, None] >> np.arange(32, dtype=np.uint32)) & 1).sum(axis=0)
    z = (ones - words.size / 2) / np.sqrt(words.size / 4)
    assert np.abs(z).max() < 6.0, z


def test_serial_correlation_of_successive_words(words):
    u = words.astype(np.float64) / 2.0**32
    for lag in (1, 2, 8, 256):
        r = np.corrcoef(u[:-lag], u[lag:])[0, 1]
        assert abs(r) < 6.0 / np.sqrt(u.size), (lag, r)


def test_birthday_spacings(words):
    """Marsaglia's birthday spacings: 512 birthdays in a year of 2**24 days; the number of
    repeated spacings is Poisson(lambda = 512**3 / (4 * 2**24) = 2)."""
    days = (words >> 8).reshape(-1, 512)  # 512 samples of 512 birthdays
    spacings = np.diff(np.sort(days, axis=1), axis=1)
    spacings.sort(axis=1)
    repeats = (np.diff(spacings, axis=1) == 0).sum(axis=1)
    observed = np.bincount(np.minimum(repeats, 6), minlength=7)
    probs = stats.poisson(2.0).pmf(np.arange(6))
    expected = np.append(probs, 1 - probs.sum()) * repeats.size
    assert stats.chisquare(observed, expected).pvalue > P_FLOOR


def _flip_bit(value: int, bit: int) -> int:
    return value ^ (1 << bit)


def test_avalanche_every_input_bit_flips_each_output_bit_half_the_time():
    """Flipping any one of the 64 bits of the nonce, of a dynamic word or of a static label
    flips each of the first 256 output bits with probability 1/2 (6-sigma bounds)."""
    rng = np.random.default_rng(5)
    n_bases = 12
    flip_counts = np.zeros((3, 64, 256))

    def output_bits(nonce, uid, label):
        state = jp.key(nonce).split(uid).split_static(label)
        words = np.asarray(jp.bits(state, (8,)))
        return np.unpackbits(words.view(np.uint8))

    for _ in range(n_bases):
        nonce, uid, label = (int(x) for x in rng.integers(0, 2**63, size=3, dtype=np.uint64) * 2
                             + rng.integers(0, 2, size=3))
        base = output_bits(nonce, uid, label)
        for bit in range(64):
            flip_counts[0, bit] += output_bits(_flip_bit(nonce, bit), uid, label) != base
            flip_counts[1, bit] += output_bits(nonce, _flip_bit(uid, bit), label) != base
            flip_counts[2, bit] += output_bits(nonce, uid, _flip_bit(label, bit)) != base

    # Per (input word, input bit, output bit) the flip rate over the bases is Binomial(12, 1/2):
    # too coarse alone, so check the pooled rates per input bit and per output bit.
    per_input_bit = flip_counts.sum(axis=2) / (n_bases * 256)
    sd_input = np.sqrt(0.25 / (n_bases * 256))
    assert np.abs(per_input_bit - 0.5).max() < 6 * sd_input, per_input_bit
    per_output_bit = flip_counts.sum(axis=(0, 1)) / (n_bases * 3 * 64)
    sd_output = np.sqrt(0.25 / (n_bases * 3 * 64))
    assert np.abs(per_output_bit - 0.5).max() < 6 * sd_output, per_output_bit
    # Each (input bit, output bit) pair flips Binomial(12, 1/2) times over the bases: the
    # histogram of all 3 * 64 * 256 counts must fit that law (a stuck or biased pair would not).
    observed = np.bincount(flip_counts.astype(int).ravel(), minlength=n_bases + 1)
    expected = stats.binom(n_bases, 0.5).pmf(np.arange(n_bases + 1)) * flip_counts.size
    assert stats.chisquare(observed, expected).pvalue > P_FLOOR


def test_battery_detects_a_broken_generator():
    """The same checks fail on streams with a known flaw, so a pass means something."""
    repeated = np.repeat(long_stream(1 << 10), 256)  # 256 identical streams, interleaved
    days = (repeated >> 8).reshape(-1, 512)
    spacings = np.diff(np.sort(days, axis=1), axis=1)
    spacings.sort(axis=1)
    repeats = (np.diff(spacings, axis=1) == 0).sum(axis=1)
    assert repeats.mean() > 10  # far from Poisson(2)
    stuck = long_stream(1 << 18) | np.uint32(1 << 7)
    ones = ((stuck[:, None] >> np.arange(32, dtype=np.uint32)) & 1).sum(axis=0)
    assert np.abs((ones - stuck.size / 2) / np.sqrt(stuck.size / 4)).max() > 6.0
