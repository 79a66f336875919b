"""Tests of the pure-Python reference oracle (tests/reference_oracle.py) against docs/spec.md.

The known answers (the cipher's vectors, values produced by Hail 0.2.139) are test data in
tests/data/conformance/; ``SPEC §n`` below is section n of docs/spec.md.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference_oracle as ro  # noqa: E402

CONFORMANCE = pathlib.Path(__file__).resolve().parent / "data" / "conformance"
# The project oracle the copies were taken from: a folder beside the repository on developer
# machines and in CI, absent from a plain clone.
ORACLE_CONFORMANCE = pathlib.Path(__file__).resolve().parents[2] / "shared" / "conformance"


def _load(name: str):
    return json.loads((CONFORMANCE / name).read_text())


THREEFISH_KAT = _load("threefish_kat.json")
HAIL_PUBLIC = _load("hail_public.json")


@pytest.mark.parametrize("name", ["threefish_kat.json", "hail_public.json"])
def test_conformance_data_is_the_oracle_byte_for_byte(name):
    if not ORACLE_CONFORMANCE.is_dir():
        pytest.skip(f"{ORACLE_CONFORMANCE} is not beside this repository: the copies in "
                    "tests/data/conformance cannot be compared with the oracle here")
    assert (CONFORMANCE / name).read_bytes() == (ORACLE_CONFORMANCE / name).read_bytes()


def _hex_words(words):
    return tuple(int(w, 16) for w in words)


def _case_id(case):
    return f"G{case['global_seed']}-S{case['seed']}-len{len(case['message'])}"


# ---------------------------------------------------------------------------
# SPEC §1: Threefish-256 known answers
# ---------------------------------------------------------------------------


def test_kat_file_is_20_rounds():
    assert THREEFISH_KAT["rounds"] == 20
    assert len(THREEFISH_KAT["cases"]) >= 2


@pytest.mark.parametrize("case", THREEFISH_KAT["cases"], ids=lambda c: c["expected"][0])
def test_threefish_kat(case):
    got = ro.threefish256(
        _hex_words(case["key"]),
        _hex_words(case["tweak"]),
        _hex_words(case["block"]),
        rounds=THREEFISH_KAT["rounds"],
    )
    assert got == _hex_words(case["expected"])


def test_threefish_default_rounds_is_20():
    case = THREEFISH_KAT["cases"][1]
    args = (_hex_words(case["key"]), _hex_words(case["tweak"]), _hex_words(case["block"]))
    assert ro.threefish256(*args) == ro.threefish256(*args, rounds=20)
    assert ro.threefish256(*args, rounds=72) != ro.threefish256(*args)


@pytest.mark.parametrize("rounds", [0, -4, 3, 18, 21])
def test_threefish_rounds_must_be_positive_multiple_of_4(rounds):
    with pytest.raises(ValueError):
        ro.threefish256((0,) * 4, (0, 0), (0,) * 4, rounds=rounds)


def test_threefish_rejects_wrong_lengths():
    with pytest.raises(ValueError):
        ro.threefish256((0,) * 3, (0, 0), (0,) * 4)
    with pytest.raises(ValueError):
        ro.threefish256((0,) * 4, (0,), (0,) * 4)
    with pytest.raises(ValueError):
        ro.threefish256((0,) * 4, (0, 0), (0,) * 5)


def test_generator_key():
    assert ro.GENERATOR_KEY == (
        0x215D6DFDB7DFDF6B,
        0x045CFA043329C49F,
        0x9EC75A93692444DD,
        0x1284681663220F1C,
    )


# ---------------------------------------------------------------------------
# SPEC §3: Hail public vectors (Hail 0.2.139)
# ---------------------------------------------------------------------------


def test_hail_public_has_cases():
    assert len(HAIL_PUBLIC) > 0


@pytest.mark.parametrize("case", HAIL_PUBLIC, ids=_case_id)
def test_hail_public_rand_unif(case):
    state = ro.hail_state(case["global_seed"], case["seed"], case["message"])
    assert ro.hail_rand_unif(*state) == case["u"]
    assert ro.hail_rand_unif(*state, 0.0, 1.0) == case["u"]


@pytest.mark.parametrize("case", HAIL_PUBLIC, ids=_case_id)
def test_hail_public_rand_norm(case):
    state = ro.hail_state(case["global_seed"], case["seed"], case["message"])
    assert math.isclose(ro.hail_rand_norm(*state), case["n"], rel_tol=1e-15, abs_tol=0.0)


@pytest.mark.parametrize("case", HAIL_PUBLIC, ids=_case_id)
def test_hail_public_rand_int32(case):
    state = ro.hail_state(case["global_seed"], case["seed"], case["message"])
    assert ro.hail_rand_int32(*state, 1000) == case["i32"]


@pytest.mark.parametrize("case", HAIL_PUBLIC, ids=_case_id)
def test_hail_public_rand_int64(case):
    state = ro.hail_state(case["global_seed"], case["seed"], case["message"])
    assert ro.hail_rand_int64(*state) == case["i64"]


@pytest.mark.parametrize("case", HAIL_PUBLIC, ids=_case_id)
def test_hail_public_rand_bool(case):
    state = ro.hail_state(case["global_seed"], case["seed"], case["message"])
    assert ro.hail_rand_bool(*state, 0.3) is case["b"]


def test_hail_state_mapping():
    nonce, static, dynamic = ro.hail_state(7, 1, [0, 3])
    assert nonce == 7
    assert static == [ro.to_word(-2)] == [2**64 - 2]
    assert dynamic == [0, 3]
    # Static part with k = 1 is one block [nonce, s_1, 0, 0] under tweak (-1, 0).
    assert ro.static_sum(7, [2**64 - 2]) == ro.threefish256(
        ro.GENERATOR_KEY, (2**64 - 1, 0), (7, 2**64 - 2, 0, 0)
    )


def test_hail_rand_unif_range_and_scaling():
    state = ro.hail_state(0, 0, [])
    u = ro.hail_rand_unif(*state)
    assert 0.0 < u < 1.0
    assert ro.hail_rand_unif(*state, 2.0, 5.0) == u * 3.0 + 2.0


def test_hail_rand_norm_mean_sd():
    state = ro.hail_state(7, 1, [0])
    z = ro.hail_rand_norm(*state)
    assert ro.hail_rand_norm(*state, mean=10.0, sd=2.0) == z * 2.0 + 10.0


# ---------------------------------------------------------------------------
# SPEC §3: the engine
# ---------------------------------------------------------------------------


def test_engine_reads_stream_sequentially():
    state = (3, [5], [1, 2, 3, 4, 5, 6])
    words = ro.stream64(*state, 10)
    engine = ro.HailEngine(*state)
    assert [engine.next_long() for _ in range(10)] == words


def test_engine_next_int_high_then_low_and_skip_rule():
    # Hail's order (SPEC §3 erratum, see HailEngine): high half first, then low.
    state = (3, [5], [9])
    w = ro.stream64(*state, 6)
    engine = ro.HailEngine(*state)
    assert engine.next_int() == w[0] >> 32
    assert engine.next_int() == w[0] & ro.MASK32
    assert engine.next_int() == w[1] >> 32
    # nextLong after an odd number of nextInt calls skips the unused half.
    assert engine.next_long() == w[2]
    assert engine.next_int() == w[3] >> 32
    assert engine.next_int() == w[3] & ro.MASK32
    # After an even number of nextInt calls nothing is skipped.
    assert engine.next_long() == w[4]
    # nextInt crosses output blocks like nextLong does.
    assert engine.next_int() == w[5] >> 32


def test_hail_int32_first_draw_is_high_half():
    # Pins the half order the public vectors require: r = (n * high(T_0[0])) >> 32
    # whenever the early return is taken.
    for case in HAIL_PUBLIC:
        state = ro.hail_state(case["global_seed"], case["seed"], case["message"])
        w0 = ro.stream64(*state, 1)[0]
        assert (1000 * (w0 >> 32)) >> 32 == case["i32"]


def test_hail_int32_slow_path_uses_three_ints():
    # With n near 2^31 the slow path (frac >= 2^32 - n) is taken about half the time.
    n = 2**31 - 1
    slow_seen = 0
    for g in range(40):
        state = (g, [ro.to_word(-1)], [])
        w = ro.stream64(*state, 2)
        x, y1, y2 = w[0] >> 32, w[0] & ro.MASK32, w[1] >> 32
        m = n * x
        r, frac = m >> 32, m & ro.MASK32
        if frac < 2**32 - n:
            expected = r
        else:
            slow_seen += 1
            hi = (((n * y1) >> 32) + n * y2) >> 32
            expected = r + ((frac + hi) >> 32)
        got = ro.hail_rand_int32(*state, n)
        assert got == expected
        assert 0 <= got < n
    assert slow_seen > 0


def test_engine_next_double_in_unit_interval():
    engine = ro.HailEngine(1, [2], [3])
    for _ in range(50):
        x = engine.next_double()
        assert 0.0 < x < 1.0


# ---------------------------------------------------------------------------
# Words and labels
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, word",
    [
        (0, 0),
        (1, 1),
        (-1, 2**64 - 1),
        (2**64 - 1, 2**64 - 1),
        (-(2**63), 2**63),
        (2**63 - 1, 2**63 - 1),
        (2**63, 2**63),
    ],
)
def test_to_word_values(value, word):
    assert ro.to_word(value) == word


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 2**100, -(2**100)])
def test_to_word_out_of_range(value):
    with pytest.raises(ValueError):
        ro.to_word(value)


@pytest.mark.parametrize("value", [True, False, 0.0, 1.5, "1", None])
def test_to_word_type_errors(value):
    with pytest.raises(TypeError):
        ro.to_word(value)


def test_label_words_int():
    assert ro.label_words(5) == [5]
    assert ro.label_words(-1) == [2**64 - 1]
    with pytest.raises(TypeError):
        ro.label_words(True)


def test_label_words_empty_str():
    assert ro.label_words("") == [0xFFFFFFFF00000000]


def test_label_words_ascii():
    assert ro.label_words("abc") == [0xFFFFFFFF00000003, 0x636261]
    assert ro.label_words("abcdefgh") == [
        0xFFFFFFFF00000008,
        int.from_bytes(b"abcdefgh", "little"),
    ]


def test_label_words_multibyte_unicode():
    label = "héllo→🎲"  # h, é (2), l, l, o, → (3), 🎲 (4): 13 UTF-8 bytes
    data = label.encode("utf-8")
    assert len(data) == 13
    words = ro.label_words(label)
    assert words[0] == 0xFFFFFFFF00000000 + 13  # byte length, not code points (7)
    assert len(words) == 3
    assert words[1] == int.from_bytes(b"h\xc3\xa9llo\xe2\x86", "little")
    assert words[2] == int.from_bytes(b"\x92\xf0\x9f\x8e\xb2\x00\x00\x00", "little")
    # Round trip of the packed bytes.
    packed = b"".join(w.to_bytes(8, "little") for w in words[1:])
    assert packed[:13] == data and packed[13:] == b"\x00" * 3


# ---------------------------------------------------------------------------
# SPEC §2: streams and hashes
# ---------------------------------------------------------------------------

_STATES = [
    (0, [ro.to_word(-1)], []),
    (7, [5], [1, 2, 3]),
    (123, [], [0, 1, 2, 3, 4]),
    (2**64 - 1, [1, 2, 3, 4, 5], [2**64 - 1] * 8),
]


@pytest.mark.parametrize("state", _STATES)
def test_stream64_is_concatenated_blocks(state):
    words = ro.stream64(*state, 12)
    blocks = [ro.stream_block(*state, c) for c in range(3)]
    assert words == [w for b in blocks for w in b]


@pytest.mark.parametrize("state", _STATES)
def test_stream32_is_little_endian_split_of_stream64(state):
    w64 = ro.stream64(*state, 9)
    w32 = ro.stream32(*state, 18)
    expected = []
    for w in w64:
        expected += [w & 0xFFFFFFFF, w >> 32]
    assert w32 == expected


@pytest.mark.parametrize("state", _STATES)
def test_stream16_and_stream8_split_stream32(state):
    w32 = ro.stream32(*state, 6)
    expected16 = [h for w in w32 for h in (w & 0xFFFF, w >> 16)]
    expected8 = [b for w in w32 for b in w.to_bytes(4, "little")]
    assert ro.stream16(*state, 12) == expected16
    assert ro.stream8(*state, 24) == expected8


@pytest.mark.parametrize("state", _STATES)
def test_stream_start_offset_is_slice(state):
    long64 = ro.stream64(*state, 20)
    long32 = ro.stream32(*state, 40)
    long16 = ro.stream16(*state, 40)
    long8 = ro.stream8(*state, 40)
    for start in range(0, 13):
        for n in (0, 1, 3, 4, 5):
            assert ro.stream64(*state, n, start=start) == long64[start : start + n]
            assert ro.stream32(*state, n, start=start) == long32[start : start + n]
            assert ro.stream16(*state, n, start=start) == long16[start : start + n]
            assert ro.stream8(*state, n, start=start) == long8[start : start + n]


@settings(max_examples=40, deadline=None, database=None)
@given(
    nonce=st.integers(0, 2**64 - 1),
    dynamic=st.lists(st.integers(0, 2**64 - 1), max_size=6),
    start=st.integers(0, 30),
    n=st.integers(0, 9),
)
def test_stream64_start_offset_property(nonce, dynamic, start, n):
    state = (nonce, [1], dynamic)
    assert ro.stream64(*state, n, start=start) == ro.stream64(*state, start + n)[start:]


def test_message_hashes_distinct_for_lengths_0_to_9():
    hashes = {ro.message_hash(0, [ro.to_word(-1)], [0] * n) for n in range(10)}
    assert len(hashes) == 10
    outputs = {tuple(ro.stream_block(0, [ro.to_word(-1)], [0] * n, 0)) for n in range(10)}
    assert len(outputs) == 10


def test_message_hash_final_tweak_word():
    for n in range(10):
        f, _ = ro.message_hash(0, [1], list(range(n)))
        expected = 2**64 - 2 if n > 0 and n % 4 == 0 else 2**64 - 3
        assert f == expected, n


def test_message_hash_structure():
    k = ro.GENERATOR_KEY
    # n == 0: B = [1, 0, 0, 0], no dynamic blocks.
    f, h = ro.message_hash(9, [4], [])
    s = ro.threefish256(k, (2**64 - 1, 0), (9, 4, 0, 0))
    assert f == 2**64 - 3
    assert h == (s[0] ^ 1, s[1], s[2], s[3])
    # n == 9: full blocks D_0, D_1 with tweaks (0, 0) and (1, 0) (block index),
    # last block [d_8, 1, 0, 0].
    d = list(range(10, 19))
    f, h = ro.message_hash(9, [4], d)
    e0 = ro.threefish256(k, (0, 0), d[0:4])
    e1 = ro.threefish256(k, (1, 0), d[4:8])
    b = (d[8], 1, 0, 0)
    assert f == 2**64 - 3
    assert h == tuple(s[i] ^ e0[i] ^ e1[i] ^ b[i] for i in range(4))
    # n == 4: last block is the 4 words themselves, f = -2, no full blocks.
    f, h = ro.message_hash(9, [4], d[:4])
    assert f == 2**64 - 2
    assert h == tuple(s[i] ^ d[i] for i in range(4))


def test_static_part_multi_block_tweaks():
    k = ro.GENERATOR_KEY
    static = [11, 12, 13, 14, 15]  # k = 5: message [nonce, 11..15] is 2 blocks
    high = (5 - 1) << 32
    e0 = ro.threefish256(k, (2**64 - 1, 0 + high), (1, 11, 12, 13))
    e1 = ro.threefish256(k, (2**64 - 1, 1 + high), (14, 15, 0, 0))
    assert ro.static_sum(1, static) == tuple(a ^ b for a, b in zip(e0, e1))
    # k = 0: tweak high part is (k - 1) mod 2^32 = 2^32 - 1.
    assert ro.static_sum(1, []) == ro.threefish256(
        k, (2**64 - 1, (2**32 - 1) << 32), (1, 0, 0, 0)
    )


def test_signed_and_unsigned_words_agree():
    assert ro.stream64(0, [-1], [-5], 4) == ro.stream64(0, [2**64 - 1], [2**64 - 5], 4)
