"""``python -m jaxpmac``: check the known answers, then a short demo and throughput table."""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._message._state import key
from jaxpmac._samplers._bits import bits, stream
from jaxpmac._selfcheck import _known_answers as known


def _as_int(word) -> int:
    if w.is_static(word):
        return word
    pair = w.to_pair(word)
    return int(pair.hi) << 32 | int(pair.lo)


class KnownAnswerMismatch(RuntimeError):
    """A computed value differs from a known answer: this installation draws wrong bits."""


def _expect(matches: bool, what: str, got, expected) -> None:
    # A real exception rather than ``assert``, which ``python -O`` strips.
    if not matches:
        raise KnownAnswerMismatch(f"{what}: computed {got!r}, the known answer is {expected!r}")


def _hex_words(words) -> tuple[str, ...]:
    return tuple(f"{int(x):#018x}" for x in words)


def check_threefish(vectors=known.THREEFISH_KAT, random123=known.RANDOM123_THREEFRY4X64) -> int:
    """Each Threefish-256 vector through Python ints and through the compiled pair path, rolled
    and unrolled; Hail's vectors (with tweaks) and Random123's (zero tweak, 20 and 72 rounds)."""
    cases = [(20, k, t, b, e) for k, t, b, e in vectors]
    cases += [(rounds, k, (0, 0), b, e) for rounds, k, b, e in random123]
    for rounds, key_words, tweak, block, expected in cases:
        what = f"Threefish-256, {rounds} rounds, key {_hex_words(key_words)[0]}...,"
        got = _threefish.encrypt(key_words, tweak, block, rounds=rounds)
        _expect(got == tuple(expected), what + " in Python", _hex_words(got),
                _hex_words(expected))
        pairs = [w.Pair(*map(jnp.asarray, w.pair_const(x))) for x in block]
        for rolled in (True, False):
            out = jax.jit(lambda b, r=rolled: _threefish.encrypt_words(
                key_words, tweak, b, native=False, rolled=r, rounds=rounds))(pairs)
            got = tuple(map(_as_int, out))
            _expect(got == tuple(expected), what + f" compiled (rolled={rolled})",
                    _hex_words(got), _hex_words(expected))
    return len(cases)


def check_streams(cases=known.STREAM_CASES) -> int:
    """SPEC section 2 stream words, through both cipher paths and a traced message."""
    for seed, labels, uids, expected in cases:
        state = key(seed).split_static(*labels).split(*uids)
        words = stream(state, 2 * len(expected), jnp.uint32, native=False)
        got = tuple(int(words[2 * i + 1]) << 32 | int(words[2 * i]) for i in range(len(expected)))
        what = f"stream of seed {seed:#x}, labels {labels!r}, uids {uids!r}"
        _expect(got == tuple(expected), what, _hex_words(got), _hex_words(expected))
        if uids:
            traced = jax.jit(lambda u: bits(key(seed).split_static(*labels).split(u), (16,)))(
                np.asarray(uids, np.uint32))
            _expect(bool((np.asarray(traced) == np.asarray(words)).all()),
                    what + " with traced uids", np.asarray(traced).tolist(),
                    np.asarray(words).tolist())
    return len(cases)


def check_hail(cases=known.HAIL_PUBLIC) -> int:
    """Every Hail 0.2.139 value, with 64-bit types on (Hail's values are float64/int64)."""
    from jaxpmac import hail
    with jax.enable_x64(True):
        for case in cases:
            state = key(case["global_seed"]).split(*case["message"]).split_static(
                -case["seed"] - 1)
            where = (f"Hail global_seed={case['global_seed']}, seed={case['seed']}, "
                     f"message={case['message']}: ")
            u = float(hail.rand_unif(state))
            _expect(u == case["u"], where + "rand_unif", u, case["u"])
            # XLA's log against Java's StrictMath.log: equal to 1e-15 relative (README).
            n = float(hail.rand_norm(state))
            _expect(abs(n - case["n"]) <= 1e-15 * abs(case["n"]), where + "rand_norm", n,
                    case["n"])
            i32 = int(hail.rand_int32(state, 1000))
            _expect(i32 == case["i32"], where + "rand_int32(1000)", i32, case["i32"])
            i64 = int(hail.rand_int64(state))
            _expect(i64 == case["i64"], where + "rand_int64", i64, case["i64"])
            b = bool(hail.rand_bool(state, 0.3))
            _expect(b == case["b"], where + "rand_bool(0.3)", b, case["b"])
    return len(cases)


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
    print(
        f"jaxpmac self-check on {backend} ({jax.devices()[0].device_kind}), jax {jax.__version__}")
    for name, check in (("Threefish-256 known answers", check_threefish),
                        ("SPEC stream words", check_streams),
                        ("Hail 0.2.139 values", check_hail)):
        try:
            print(f"  {name}: {check()} cases OK")
        except KnownAnswerMismatch as error:
            print(f"  {name}: FAILED ({error})")
            return 1

    print("\nDemo")
    s = key(42)
    print(f"  s = jp.key(42)                       -> {s}")
    print(f"  jp.bits(s.split_static('noise'), (4,)) -> "
          f"{np.asarray(bits(s.split_static('noise'), (4,)))}")
    per_example = jax.vmap(lambda i: bits(s.split(i), (2,)))(jnp.arange(3))
    print(f"  vmap over s.split(i), i < 3          -> {np.asarray(per_example).tolist()}")

    print(f"\nThroughput of uint32 bits on {backend} (median of warm runs)")
    print(f"  {'n':>9}  {'jaxpmac (M/s)':>14}  {'jax.random (M/s)':>17}  {'ratio':>6}")
    for n, ours, theirs in throughput_table():
        print(f"  {n:>9}  {ours / 1e6:>14.1f}  {theirs / 1e6:>17.1f}  {ours / theirs:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
