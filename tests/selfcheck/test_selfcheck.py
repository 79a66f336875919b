"""``python -m jaxpmac``'s self-check: its bundled known answers are the repository's, it passes
on them, and it fails -- with a real exception, also under ``python -O`` -- on a corrupted one."""

import json
import subprocess
import sys

import pytest

from conftest import CONFORMANCE, hex_words, ro
from jaxpmac._selfcheck import _check as selfcheck
from jaxpmac._selfcheck import _known_answers as known


def _corrupted(words):
    """The same words with the lowest bit of the first one flipped."""
    return (words[0] ^ 1, *words[1:])


def test_bundled_threefish_vectors_are_the_test_datas():
    data = json.loads((CONFORMANCE / "threefish_kat.json").read_text())
    assert known.THREEFISH_KAT == tuple(
        (hex_words(c["key"]), hex_words(c["tweak"]), hex_words(c["block"]),
         hex_words(c["expected"])) for c in data["cases"])


def test_bundled_hail_values_are_the_test_datas():
    data = json.loads((CONFORMANCE / "hail_public.json").read_text())
    assert [dict(case, message=tuple(case["message"])) for case in data] == [
        dict(case, message=tuple(case["message"])) for case in known.HAIL_PUBLIC]


@pytest.mark.parametrize("seed,labels,uids,expected", known.STREAM_CASES)
def test_bundled_stream_words_are_the_oracles(seed, labels, uids, expected):
    static_words = [word for label in labels for word in ro.label_words(label)]
    assert tuple(ro.stream64(seed, static_words, uids, len(expected))) == expected


@pytest.mark.parametrize("rounds,key,block,expected", known.RANDOM123_THREEFRY4X64)
def test_random123_vectors_agree_with_the_independent_oracle(rounds, key, block, expected):
    assert ro.threefish256(key, (0, 0), block, rounds=rounds) == expected


def test_every_check_passes_on_the_bundled_answers():
    assert selfcheck.check_threefish() == len(known.THREEFISH_KAT) + len(
        known.RANDOM123_THREEFRY4X64)
    assert selfcheck.check_streams() == len(known.STREAM_CASES)
    assert selfcheck.check_hail() == len(known.HAIL_PUBLIC)


def test_a_corrupted_threefish_vector_fails():
    rounds, key, block, expected = known.RANDOM123_THREEFRY4X64[-1]
    with pytest.raises(selfcheck.KnownAnswerMismatch, match="72 rounds"):
        selfcheck.check_threefish(vectors=(), random123=[(rounds, key, block,
                                                          _corrupted(expected))])


def test_a_corrupted_stream_word_fails():
    seed, labels, uids, expected = known.STREAM_CASES[1]
    with pytest.raises(selfcheck.KnownAnswerMismatch, match="stream of seed 0x2a"):
        selfcheck.check_streams([(seed, labels, uids, _corrupted(expected))])


@pytest.mark.parametrize("field,bad", [("u", 0.5), ("i32", 66), ("b", False)])
def test_a_corrupted_hail_value_fails(field, bad):
    case = dict(known.HAIL_PUBLIC[0], **{field: bad})
    with pytest.raises(selfcheck.KnownAnswerMismatch, match="Hail global_seed=0"):
        selfcheck.check_hail([case])


def test_the_check_fails_under_python_optimize():
    # ``python -O`` strips asserts; the self-check must still fail on a wrong answer.
    program = (
        "from jaxpmac._selfcheck import _check as selfcheck, _known_answers as known\n"
        "rounds, key, block, expected = known.RANDOM123_THREEFRY4X64[0]\n"
        "bad = (expected[0] ^ 1, *expected[1:])\n"
        "selfcheck.check_threefish(vectors=(), random123=[(rounds, key, block, bad)])\n")
    result = subprocess.run([sys.executable, "-O", "-c", program], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode != 0
    assert "KnownAnswerMismatch" in result.stderr


def test_help_answers_without_running_the_check():
    result = subprocess.run([sys.executable, "-m", "jaxpmac", "--help"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0
    assert "--quick" in result.stdout
    assert "self-check on" not in result.stdout     # the header: nothing ran


def test_quick_mode_checks_and_reports_each_step(capsys):
    assert selfcheck.main(["--quick"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("jaxpmac quick self-check on ")
    for name in ("Threefish-256 known answers", "SPEC stream words", "Hail 0.2.139 values",
                 "samplers"):
        assert any(line.strip().startswith(name) and " cases OK (" in line for line in lines)
    assert "Throughput" not in out


def test_quick_threefish_checks_every_vector_in_python():
    rounds, key, block, expected = known.RANDOM123_THREEFRY4X64[-1]
    assert selfcheck.check_threefish(compiled_cases=1) == len(known.THREEFISH_KAT) + len(
        known.RANDOM123_THREEFRY4X64)
    with pytest.raises(selfcheck.KnownAnswerMismatch, match="72 rounds"):
        selfcheck.check_threefish(vectors=known.THREEFISH_KAT, random123=[
            (rounds, key, block, _corrupted(expected))], compiled_cases=1)


def test_a_failing_check_stops_the_run_with_status_1(capsys, monkeypatch):
    def corrupted():
        raise selfcheck.KnownAnswerMismatch("stream of seed 0x0: computed 1, the known answer is 2")
    monkeypatch.setattr(selfcheck, "check_streams", corrupted)
    assert selfcheck.main(["--quick"]) == 1
    out = capsys.readouterr().out
    assert "SPEC stream words ... FAILED (stream of seed 0x0" in out
    assert "Hail 0.2.139 values" not in out
