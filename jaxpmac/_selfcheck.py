"""``python -m jaxpmac``: check the known answers, then a short demo and throughput table."""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac import _known_answers as known
from jaxpmac import _threefish as tf
from jaxpmac import _words as w
from jaxpmac._bits import bits, stream
from jaxpmac._state import key


def _as_int(word) -> int:
    if w.is_static(word):
        return word
    pair = w.to_pair(word)
    return int(pair.hi) << 32 | int(pair.lo)


def check_threefish() -> int:
    """Each known-answer vector through Python ints and through the compiled pair path."""
    checked = 0
    for key_words, tweak, block, expected in known.THREEFISH_KAT:
        assert tf.encrypt(key_words, tweak, block) == expected, "Threefish (Python) mismatch"
        pairs = [w.Pair(*map(jnp.asarray, w.pair_const(x))) for x in block]
        for rolled in (True, False):
            out = jax.jit(lambda b, r=rolled: tf.encrypt_words(
                key_words, tweak, b, native=False, rolled=r))(pairs)
            assert tuple(map(_as_int, out)) == expected, f"Threefish (rolled={rolled}) mismatch"
        checked += 1
    return checked


def check_streams() -> int:
    """SPEC section 2 stream words, through both cipher paths and a traced message."""
    checked = 0
    for seed, labels, uids, expected in known.STREAM_CASES:
        state = key(seed).split_static(*labels).split(*uids)
        words = stream(state, 2 * len(expected), jnp.uint32, native=False)
        got = [int(words[2 * i + 1]) << 32 | int(words[2 * i]) for i in range(len(expected))]
        assert tuple(got) == expected, f"stream mismatch for seed {seed:#x}"
        traced = jax.jit(lambda u: bits(key(seed).split_static(*labels).split(u), (16,)))(
            np.asarray(uids, np.uint32)) if uids else None
        if traced is not None:
            assert (np.asarray(traced) == np.asarray(words)).all(), "traced message mismatch"
        checked += 1
    return checked


def check_hail() -> int:
    """Every Hail 0.2.139 value, with 64-bit types on (Hail's values are float64/int64)."""
    from jaxpmac import hail
    checked = 0
    with jax.enable_x64(True):
        for case in known.HAIL_PUBLIC:
            state = key(case["global_seed"]).split(*case["message"]).split_static(
                -case["seed"] - 1)
            assert float(hail.rand_unif(state)) == case["u"], "Hail rand_unif mismatch"
            assert abs(float(hail.rand_norm(state)) - case["n"]) <= 1e-15 * abs(case["n"]), \
                "Hail rand_norm mismatch"
            assert int(hail.rand_int32(state, 1000)) == case["i32"], "Hail rand_int32 mismatch"
            assert int(hail.rand_int64(state)) == case["i64"], "Hail rand_int64 mismatch"
            assert bool(hail.rand_bool(state, 0.3)) == case["b"], "Hail rand_bool mismatch"
            checked += 1
    return checked


def _median_seconds(fn, *args, repeats: int = 7) -> float:
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def throughput_table(sizes=(1 << 16, 1 << 20, 1 << 22)) -> list[tuple[int, float, float]]:
    """``(n, jaxpmac uint32/s, jax.random uint32/s)`` for each size, medians of warm runs."""
    state = key(0).split_static("throughput")
    jax_key = jax.random.key(0)
    rows = []
    for n in sizes:
        ours = _median_seconds(jax.jit(lambda: bits(state, (n,))))
        theirs = _median_seconds(jax.jit(lambda k: jax.random.bits(k, (n,), jnp.uint32)), jax_key)
        rows.append((n, n / ours, n / theirs))
    return rows


def main() -> int:
    backend = jax.default_backend()
    print(f"jaxpmac self-check on {backend} ({jax.devices()[0].device_kind}), jax {jax.__version__}")
    for name, check in (("Threefish-256 known answers", check_threefish),
                        ("SPEC stream words", check_streams),
                        ("Hail 0.2.139 values", check_hail)):
        try:
            print(f"  {name}: {check()} cases OK")
        except (AssertionError, ImportError) as error:
            print(f"  {name}: FAILED ({error})")
            return 1

    print("\nDemo")
    s = key(42)
    print(f"  s = jp.key(42)                       -> {s}")
    print(f"  jp.bits(s.split_static('noise'), (4,)) -> {np.asarray(bits(s.split_static('noise'), (4,)))}")
    per_example = jax.vmap(lambda i: bits(s.split(i), (2,)))(jnp.arange(3))
    print(f"  vmap over s.split(i), i < 3          -> {np.asarray(per_example).tolist()}")

    print(f"\nThroughput of uint32 bits on {backend} (median of warm runs)")
    print(f"  {'n':>9}  {'jaxpmac (M/s)':>14}  {'jax.random (M/s)':>17}  {'ratio':>6}")
    for n, ours, theirs in throughput_table():
        print(f"  {n:>9}  {ours / 1e6:>14.1f}  {theirs / 1e6:>17.1f}  {ours / theirs:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
