"""Threefish-256 (SPEC section 1): every JAX lowering equals the pure-Python oracle.

Paths checked: ``_threefish.encrypt`` over static ints, ``Pair`` words and (x64) ``uint64``
words; ``_lowering._rolled.encrypt_rolled``; ``_lowering._encrypt``'s ``encrypt_as`` with
``native=False`` and (x64) ``native=True``, rolled and unrolled, and ``encrypt_words`` (the
lowering per platform). One jitted program per word representation computes every
path on a batch of blocks, so the known answers and the property tests share one compilation.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import (hex_words, load_conformance, pair_arrays, param, property_settings, ro,
                      u64_array, u64_words, words_from_pair)
from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import _encrypt, _rolled
from jaxpmac._selfcheck import _known_answers as known

KAT = load_conformance("threefish_kat.json")
KAT_CASES = [(hex_words(c["key"]), hex_words(c["tweak"]), hex_words(c["block"]),
              hex_words(c["expected"])) for c in KAT["cases"]]
# Static keys of the paths whose key is a Python constant (encrypt_rolled, encrypt_as): the
# known-answer keys and the generator's key. The fully unrolled lowering compiles slowly on CPU
# (~10 s), so it runs with one static key (and, via ``encrypt``, with dynamic keys) only.
STATIC_KEYS = (KAT_CASES[0][0], KAT_CASES[1][0], _threefish.GENERATOR_KEY)
UNROLLED_KEY = 1
# A static tweak word 0 next to a dynamic tweak word 1, as in the output stream's (f, c).
STATIC_TWEAK0 = (1 << 64) - 3
BATCH = 8


def _static_key_paths(tweak, block, *, native: bool, unrolled: bool):
    """Name -> cipher output for the static-key lowerings (``native``: uint64 words)."""
    suffix = "_native" if native else ""
    key = STATIC_KEYS[UNROLLED_KEY]
    if unrolled:
        return {f"words_unrolled{suffix}/{UNROLLED_KEY}": _encrypt.encrypt_as(
            "elementwise_pairs", key, tweak, block, native=native)}
    out = {}
    for j, static_key in enumerate(STATIC_KEYS):
        # encrypt_as("rolled") is encrypt_rolled, and encrypt_words picks it on CPU.
        out[f"rolled{suffix}/{j}"] = _rolled.encrypt_rolled(static_key, tweak, block,
                                                            native=native)
    out[f"words_auto{suffix}/{UNROLLED_KEY}"] = _encrypt.encrypt_words(key, tweak, block,
                                                                       native=native)
    out[f"static_t0{suffix}/{UNROLLED_KEY}"] = _encrypt.encrypt_as(
        "rolled", key, (STATIC_TWEAK0, tweak[1]), block, native=native)
    if native:
        shape = jnp.shape(block[0])
        out[f"words_pair_under_x64/{UNROLLED_KEY}"] = _encrypt.encrypt_as(
            "rolled", key, tuple(w.to_pair(x, shape) for x in tweak),
            tuple(w.to_pair(x, shape) for x in block), native=False)
    return out


# The unrolled lowering (``encrypt`` with a dynamic key, ``encrypt_as("elementwise_pairs")``) is the
# GPU/TPU path; XLA's CPU backend compiles it slowly and runs it slowly (see encrypt_rolled), so
# it has its own program and fewer property examples.
@partial(jax.jit, static_argnames="unrolled")
def _pair_program(key_hi, key_lo, tweak_hi, tweak_lo, block_hi, block_lo, *, unrolled):
    """x64-off paths on a batch: arrays are ``[words, BATCH]`` uint32 halves."""
    key = [w.Pair(key_hi[i], key_lo[i]) for i in range(4)]
    tweak = [w.Pair(tweak_hi[i], tweak_lo[i]) for i in range(2)]
    block = [w.Pair(block_hi[i], block_lo[i]) for i in range(4)]
    out = {"encrypt": _threefish.encrypt(key, tweak, block)} if unrolled else {}
    out.update(_static_key_paths(tweak, block, native=False, unrolled=unrolled))
    # Unstacked outputs: stacking lets XLA fuse the unrolled ciphers into one huge CPU kernel
    # whose compilation is several times slower.
    return {name: ([x.hi for x in words], [x.lo for x in words]) for name, words in out.items()}


@partial(jax.jit, static_argnames="unrolled")
def _native_program(key, tweak, block, *, unrolled):
    """x64-on paths on a batch: arrays are ``[words, BATCH]`` uint64."""
    key, tweak, block = list(key), list(tweak), list(block)
    out = {"encrypt_native": _threefish.encrypt(key, tweak, block)} if unrolled else {}
    out.update(_static_key_paths(tweak, block, native=True, unrolled=unrolled))
    return {name: [w.to_u64(x) for x in words] for name, words in out.items()}


def _rows(words_by_row):
    """``[[4 words] per row]`` -> ``[words, BATCH]`` lists (columns)."""
    return [list(column) for column in zip(*words_by_row)]


def _expected(keys, tweaks, blocks):
    """Oracle outputs: path name -> list of 4-word tuples, one per row."""
    expected = {"encrypt": [ro.threefish256(k, t, b) for k, t, b in zip(keys, tweaks, blocks)]}
    for j, static_key in enumerate(STATIC_KEYS):
        expected[f"key/{j}"] = [ro.threefish256(static_key, t, b) for t, b in zip(tweaks, blocks)]
        expected[f"static_t0/{j}"] = [ro.threefish256(static_key, (STATIC_TWEAK0, t[1]), b)
                                      for t, b in zip(tweaks, blocks)]
    return expected


def _reference_name(path: str) -> str:
    if path.startswith("encrypt"):
        return "encrypt"
    kind, j = path.split("/")
    return f"static_t0/{j}" if kind.startswith("static_t0") else f"key/{j}"


def _pair_outputs(keys, tweaks, blocks, unrolled):
    args = []
    for words_by_row in (keys, tweaks, blocks):
        hi, lo = zip(*(pair_arrays(column) for column in _rows(words_by_row)))
        args += [np.stack(hi), np.stack(lo)]
    # numpy results: iterating over jax arrays dispatches one slice per element.
    result = jax.device_get(_pair_program(*args, unrolled=unrolled))
    return {name: [tuple(col) for col in zip(*(words_from_pair(h, l) for h, l in zip(hi, lo)))]
            for name, (hi, lo) in result.items()}


def _native_outputs(keys, tweaks, blocks, unrolled):
    with jax.enable_x64(True):
        result = jax.device_get(_native_program(*[np.stack([u64_array(c) for c in _rows(x)])
                                                  for x in (keys, tweaks, blocks)],
                                                unrolled=unrolled))
        assert all(x.dtype == np.uint64 for v in result.values() for x in v)
    return {name: [tuple(int(x) for x in col) for col in np.stack(v).T]
            for name, v in result.items()}


def _check_all(outputs, expected, n_paths):
    assert len(outputs) == n_paths, sorted(outputs)
    for name, rows in outputs.items():
        assert rows == expected[_reference_name(name)], name


def _kat_batch():
    """The known-answer cases in the first rows, fixed pseudo-random rows after them."""
    rng = np.random.default_rng(20240611)
    keys = [case[0] for case in KAT_CASES]
    tweaks = [case[1] for case in KAT_CASES]
    blocks = [case[2] for case in KAT_CASES]
    while len(keys) < BATCH:
        draw = [int(x) for x in rng.integers(0, 1 << 64, size=10, dtype=np.uint64)]
        keys.append(tuple(draw[:4]))
        tweaks.append(tuple(draw[4:6]))
        blocks.append(tuple(draw[6:]))
    return keys, tweaks, blocks


N_PATHS = {  # (native, unrolled) -> paths per program
    (False, False): len(STATIC_KEYS) + 2, (False, True): 2,
    (True, False): len(STATIC_KEYS) + 3, (True, True): 2}


def _check_known_answers(outputs):
    """Row j of the batch holds known-answer case j: every path whose key is that case's key
    (dynamic-key ``encrypt`` included) must give the published ciphertext."""
    checked = 0
    for name, rows in outputs.items():
        if name.startswith("static_t0"):
            continue
        for j, (_, _, _, answer) in enumerate(KAT_CASES):
            if name.startswith("encrypt") or name.endswith(f"/{j}"):
                assert rows[j] == answer, (name, j)
                checked += 1
    assert checked >= 3


# -- known answers ------------------------------------------------------------------------------
@pytest.mark.parametrize("key,tweak,block,expected", KAT_CASES)
def test_known_answers_static_python(key, tweak, block, expected):
    assert ro.threefish256(key, tweak, block) == expected
    assert _threefish.encrypt(key, tweak, block) == expected


@pytest.mark.parametrize("unrolled", [False, True])
def test_known_answers_pair_paths(unrolled):
    keys, tweaks, blocks = _kat_batch()
    outputs = _pair_outputs(keys, tweaks, blocks, unrolled)
    _check_known_answers(outputs)
    _check_all(outputs, _expected(keys, tweaks, blocks), N_PATHS[False, unrolled])


@pytest.mark.parametrize("unrolled", [False, True])
def test_known_answers_native_paths(unrolled):
    keys, tweaks, blocks = _kat_batch()
    outputs = _native_outputs(keys, tweaks, blocks, unrolled)
    _check_known_answers(outputs)
    _check_all(outputs, _expected(keys, tweaks, blocks), N_PATHS[True, unrolled])


def _random123_case(i, vector, native, lowering):
    """Every vector, rolled and unrolled, on pairs and uint64 words; the unrolled cipher on
    pairs with 72 rounds (a compilation of 5 to 13 s per key) in the slow run: its 20 rounds on
    pairs stay, and its 72 rounds are checked on pairs by default with the known answers
    (test_known_answers_pair_paths[True]) and on uint64 words here."""
    slow = lowering.startswith("elementwise") and not native and vector[0] == 72
    return param(*vector, native, lowering,
                 id=f"{lowering}-{native}-{vector[0]}-key{i}-block{i}-expected{i}", slow=slow)


@pytest.mark.parametrize("rounds,key,block,expected,native,lowering", [
    _random123_case(i, vector, native, lowering)
    for lowering in ("elementwise", "elementwise_pairs", "rolled") for native in (False, True)
    for i, vector in enumerate(known.RANDOM123_THREEFRY4X64)])
def test_random123_threefry4x64_vectors(rounds, key, block, expected, native, lowering):
    # Threefry-4x64-R (Random123) is Threefish-256 with a zero tweak: Python ints, then the
    # compiled cipher on dynamic words, rolled and unrolled, on pairs and on uint64 words. One
    # block of scalars is the message hash's case: the GPUs' form ("elementwise") computes it
    # on lanes (_encrypt._block_on_lanes).
    assert _threefish.encrypt(key, (0, 0), block, rounds=rounds) == expected
    dynamic = [w.Pair(*map(jnp.asarray, w.pair_const(x))) for x in block]
    with jax.enable_x64(native):
        if native:
            dynamic = [jnp.asarray(x, jnp.uint64) for x in block]
        out = jax.jit(lambda b: _encrypt.encrypt_as(lowering, key, (0, 0), b, native=native,
                                                    rounds=rounds))(dynamic)
        got = tuple(int(x) if native else int(x.hi) << 32 | int(x.lo) for x in out)
    assert got == expected


@pytest.mark.parametrize("native", [False, True])
def test_one_block_on_the_gpus_lanes_under_vmap_is_the_oracle(native):
    """The GPUs' cipher of one block of scalar words (``_encrypt._block_on_lanes``, the message
    hash's case: the generator's key, a static tweak), batched by ``vmap``, jitted and op by op,
    gives each block's own answer."""
    key, tweak = _threefish.GENERATOR_KEY, (2**64 - 1, 0xFFFFFFFF00000000)
    blocks = [vector[2] for vector in known.RANDOM123_THREEFRY4X64] + [(7, 0, 0, 0)]
    halves = (np.array([[x >> 32 for x in b] for b in blocks], np.uint32),
              np.array([[x & 0xFFFFFFFF for x in b] for b in blocks], np.uint32))

    def encrypt(hi, lo):
        block = [w.Pair(hi[j], lo[j]) for j in range(4)]
        if native:
            block = [w.to_u64(x) for x in block]
        pairs = [w.to_pair(x) for x in _encrypt.encrypt_as("elementwise", key, tweak, block,
                                                           native=native)]
        return jnp.stack([x.hi for x in pairs]), jnp.stack([x.lo for x in pairs])

    with jax.enable_x64(native):
        for program in (jax.jit(jax.vmap(encrypt)), jax.vmap(encrypt)):
            hi, lo = program(*halves)
            got = [tuple(int(h) << 32 | int(l) for h, l in zip(*row)) for row in zip(hi, lo)]
            assert got == [ro.threefish256(key, tweak, b) for b in blocks]


def test_x64_setting_is_restored():
    # The x64 tests use a context manager; it must not leak into later tests.
    assert not jax.config.jax_enable_x64


# -- property tests -------------------------------------------------------------------------------
def _word_rows(n_words):
    return st.lists(st.tuples(*[u64_words] * n_words), min_size=BATCH, max_size=BATCH)


@property_settings(25)
@given(keys=_word_rows(4), tweaks=_word_rows(2), blocks=_word_rows(4))
def test_random_static_python(keys, tweaks, blocks):
    for key, tweak, block in zip(keys, tweaks, blocks):
        assert _threefish.encrypt(key, tweak, block) == ro.threefish256(key, tweak, block)


@property_settings(25)
@given(keys=_word_rows(4), tweaks=_word_rows(2), blocks=_word_rows(4))
def test_random_pair_paths_rolled(keys, tweaks, blocks):
    _check_all(_pair_outputs(keys, tweaks, blocks, False), _expected(keys, tweaks, blocks),
               N_PATHS[False, False])


# Slow: each run of the unrolled program takes seconds on CPU; the default run checks the
# unrolled paths on the known answers and six pseudo-random rows (test_known_answers_*).
@pytest.mark.slow
@property_settings(10)
@given(keys=_word_rows(4), tweaks=_word_rows(2), blocks=_word_rows(4))
def test_random_pair_paths_unrolled(keys, tweaks, blocks):
    _check_all(_pair_outputs(keys, tweaks, blocks, True), _expected(keys, tweaks, blocks),
               N_PATHS[False, True])


@property_settings(15)
@given(keys=_word_rows(4), tweaks=_word_rows(2), blocks=_word_rows(4))
def test_random_native_paths_rolled(keys, tweaks, blocks):
    _check_all(_native_outputs(keys, tweaks, blocks, False), _expected(keys, tweaks, blocks),
               N_PATHS[True, False])


@partial(jax.jit, static_argnums=2)
def _few_blocks(t0, block, n_blocks):
    return _rolled.encrypt_few_blocks(t0, block, n_blocks)


# The small cipher of a jax.random key's flush and small draws: the generator key, tweak
# (t0, c) for the counters c < n_blocks of one block, a traced t0 and block.
@property_settings(15)
@given(t0=u64_words, block=st.tuples(*[u64_words] * 4), n_blocks=st.sampled_from([1, 3, 8]))
def test_few_blocks_cipher_is_the_oracle_under_tweaks_t0_and_each_counter(t0, block, n_blocks):
    with jax.enable_x64(True):
        got = np.asarray(_few_blocks(jnp.uint64(t0), jnp.asarray(block, jnp.uint64), n_blocks))
    expected = [ro.threefish256(ro.GENERATOR_KEY, (t0, c), block) for c in range(n_blocks)]
    assert [tuple(map(int, row)) for row in got] == expected


# Slow: each run of the unrolled program takes seconds on CPU; the default run checks the
# unrolled paths on the known answers and six pseudo-random rows (test_known_answers_*).
@pytest.mark.slow
@property_settings(10)
@given(keys=_word_rows(4), tweaks=_word_rows(2), blocks=_word_rows(4))
def test_random_native_paths_unrolled(keys, tweaks, blocks):
    _check_all(_native_outputs(keys, tweaks, blocks, True), _expected(keys, tweaks, blocks),
               N_PATHS[True, True])


def test_mixed_static_and_dynamic_words():
    """Any mix of static ints and dynamic words gives the all-static answer."""
    key, tweak, block, answer = KAT_CASES[1]

    @jax.jit
    def mixed(t1_hi, t1_lo, b2_hi, b2_lo):
        dyn_tweak = (tweak[0], w.Pair(t1_hi, t1_lo))
        dyn_block = (block[0], block[1], w.Pair(b2_hi, b2_lo), block[3])
        # Rolled only: the unrolled lowering of the same code compiles for ~10 s on CPU and is
        # covered with static tweak words by test_known_answers_pair_paths.
        outs = [_encrypt.encrypt_as("rolled", key, dyn_tweak, dyn_block, native=False)]
        return [[w.to_pair(x) for x in out] for out in outs]

    (t1_hi,), (t1_lo,) = pair_arrays([tweak[1]])
    (b2_hi,), (b2_lo,) = pair_arrays([block[2]])
    for out in mixed(t1_hi, t1_lo, b2_hi, b2_lo):
        assert tuple(words_from_pair(x.hi, x.lo)[0] for x in out) == answer


def test_rounds_are_checked():
    for bad in (0, 3, 76, 20.0, True):
        with pytest.raises(ValueError, match="rounds"):
            _threefish.encrypt((0,) * 4, (0, 0), (0,) * 4, rounds=bad)
    # Other round counts still follow the same schedule as the oracle.
    assert _threefish.encrypt((1, 2, 3, 4), (5, 6), (7, 8, 9, 10), rounds=72) == ro.threefish256(
        (1, 2, 3, 4), (5, 6), (7, 8, 9, 10), rounds=72)
