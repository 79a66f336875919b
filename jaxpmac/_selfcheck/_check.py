"""``python -m jaxpmac``: check the known answers, then a short demo and throughput table.

``python -m jaxpmac --quick`` checks the known answers (compiling the cipher once rather than
for every vector) and a few samplers, in seconds; ``--help`` says so and runs nothing.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering._encrypt import encrypt_as
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


def check_threefish(vectors=known.THREEFISH_KAT, random123=known.RANDOM123_THREEFRY4X64, *,
                    compiled_cases: int | None = None) -> int:
    """Each Threefish-256 vector through Python ints and through the compiled pair path, rolled
    and unrolled; Hail's vectors (with tweaks) and Random123's (zero tweak, 20 and 72 rounds).
    ``compiled_cases``: compile only the first that many vectors, rolled only (the quick check:
    each compilation takes about a second), the rest in Python; ``None``: all, both ways."""
    cases = [(20, k, t, b, e) for k, t, b, e in vectors]
    cases += [(rounds, k, (0, 0), b, e) for rounds, k, b, e in random123]
    for index, (rounds, key_words, tweak, block, expected) in enumerate(cases):
        what = f"Threefish-256, {rounds} rounds, key {_hex_words(key_words)[0]}...,"
        got = _threefish.encrypt(key_words, tweak, block, rounds=rounds)
        _expect(got == tuple(expected), what + " in Python", _hex_words(got),
                _hex_words(expected))
        if compiled_cases is not None and index >= compiled_cases:
            continue
        pairs = [w.Pair(*map(jnp.asarray, w.pair_const(x))) for x in block]
        for lowering in (("rolled",) if compiled_cases is not None
                         else ("rolled", "elementwise_pairs")):
            out = jax.jit(lambda b, form=lowering: encrypt_as(
                form, key_words, tweak, b, native=False, rounds=rounds))(pairs)
            got = tuple(map(_as_int, out))
            _expect(got == tuple(expected), what + f" compiled ({lowering})",
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
            # XLA's log against Java's StrictMath.log: equal to 1e-15 relative
            # (docs/usage.md, "Hail functions").
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


def throughput_table(sizes=(1 << 16, 1 << 20, 1 << 22)):
    """Yields ``(n, jaxpmac uint32/s, jax.random uint32/s)`` for each size, medians of warm
    runs: one row at a time, so that each prints as soon as it is measured."""
    state = key(0).split_static("throughput")
    jax_key = jax.random.key(0)
    for n in sizes:
        ours = _median_seconds(jax.jit(lambda: bits(state, (n,))))
        theirs = _median_seconds(jax.jit(lambda k: jax.random.bits(k, (n,), jnp.uint32)), jax_key)
        yield n, n / ours, n / theirs


def check_samplers(n: int = 1 << 14) -> int:
    """A few samplers, eagerly and under ``jit``: the same values both ways, in their range,
    with the mean and spread of their distribution (loose bounds: at ``n = 2**14`` a correct
    sampler fails them with probability below 1e-6); and a ``jax.random`` key of
    ``jaxpmac.prng_impl`` draws its state's bits. Returns the number of samplers checked."""
    import jaxpmac as jp  # the public API, as a user calls it
    s = key(0).split_static("jaxpmac.selfcheck")
    draws = {
        "normal": (lambda s: jp.normal(s, (n,)), -np.inf, np.inf, 0.0, 1.0),
        "uniform": (lambda s: jp.uniform(s, (n,)), 0.0, 1.0, 0.5, 12 ** -0.5),
        "randint": (lambda s: jp.randint(s, (n,), 0, 10), 0, 9, 4.5, 8.25 ** 0.5),
        "exponential": (lambda s: jp.exponential(s, (n,)), 0.0, np.inf, 1.0, 1.0),
    }
    for name, (draw, low, high, mean, sd) in draws.items():
        eager = np.asarray(draw(s))
        _expect(np.array_equal(eager, np.asarray(jax.jit(draw)(s))),
                f"{name}: eager and jit values", "different", "equal")
        _expect(bool(np.all((eager >= low) & (eager <= high))), f"{name}: values in range",
                (float(eager.min()), float(eager.max())), (low, high))
        _expect(abs(float(eager.mean()) - mean) < 6 * sd / n ** 0.5, f"{name}: mean",
                float(eager.mean()), mean)
        _expect(abs(float(eager.std()) - sd) < 0.05 * sd, f"{name}: standard deviation",
                float(eager.std()), sd)
    via_key = jax.random.bits(jp.as_jax_key(s), (64,), jnp.uint32)
    _expect(np.array_equal(np.asarray(via_key), np.asarray(bits(s, (64,)))),
            "jax.random.bits(jaxpmac.as_jax_key(s)) against jaxpmac.bits(s)", "different",
            "equal")
    return len(draws)


def _parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m jaxpmac",
        description="Check that this installation of jaxpmac computes the known answers "
                    "(Threefish-256 vectors, stream words of docs/spec.md, Hail 0.2.139's "
                    "values), then show a short demo and the throughput of uint32 bits "
                    "against jax.random. Exits with status 1 if any value is wrong.")
    parser.add_argument("--quick", action="store_true",
                        help="a few seconds: the known answers (the cipher compiled once "
                             "rather than for every vector) and a few samplers; no demo or "
                             "throughput table")
    return parser.parse_args(argv)


def _run_check(name: str, check) -> bool:
    # Progress as it goes: the name before the work (a check can take seconds), then the result.
    print(f"  {name} ...", end="", flush=True)
    start = time.perf_counter()
    try:
        count = check()
    except KnownAnswerMismatch as error:
        print(f" FAILED ({error})", flush=True)
        return False
    print(f" {count} cases OK ({time.perf_counter() - start:.1f} s)", flush=True)
    return True


def main(argv=None) -> int:
    """Runs the self-check (``argv``: the command line's arguments; ``None``: ``sys.argv``).

    Returns the exit status: 0 when every check passes, 1 when one fails.
    """
    args = _parse(argv)
    backend = jax.default_backend()
    mode = "quick self-check" if args.quick else "self-check"
    print(f"jaxpmac {mode} on {backend} ({jax.devices()[0].device_kind}), jax {jax.__version__}",
          flush=True)
    checks = [("Threefish-256 known answers",
               (lambda: check_threefish(compiled_cases=1)) if args.quick else check_threefish),
              ("SPEC stream words", check_streams),
              ("Hail 0.2.139 values", check_hail)]
    if args.quick:
        checks.append(("samplers (normal, uniform, randint, exponential)", check_samplers))
    for name, check in checks:
        if not _run_check(name, check):
            return 1
    if args.quick:
        print("All checks passed (quick mode: run `python -m jaxpmac` for every vector "
              "compiled both ways, a demo and the throughput table).", flush=True)
        return 0

    print("\nDemo")
    s = key(42)
    print(f"  s = jp.key(42)                       -> {s}")
    print(f"  jp.bits(s.split_static('noise'), (4,)) -> "
          f"{np.asarray(bits(s.split_static('noise'), (4,)))}")
    per_example = jax.vmap(lambda i: bits(s.split(i), (2,)))(jnp.arange(3))
    print(f"  vmap over s.split(i), i < 3          -> {np.asarray(per_example).tolist()}",
          flush=True)

    print(f"\nThroughput of uint32 bits on {backend} (median of warm runs)")
    print(f"  {'n':>9}  {'jaxpmac (M/s)':>14}  {'jax.random (M/s)':>17}  {'ratio':>6}",
          flush=True)
    for n, ours, theirs in throughput_table():
        print(f"  {n:>9}  {ours / 1e6:>14.1f}  {theirs / 1e6:>17.1f}  {ours / theirs:>6.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
