"""Tests of Hail's functions beyond the first five (issue 34, part A): ``rand_unif`` and
``rand_norm`` with ``size=``, ``rand_norm2d``, ``rand_int32(a, b)``, ``rand_int64(a)`` and
``rand_int64(a, b)``, ``rand_bool``, ``rand_cat`` and ``shuffle``.

``tests/data/conformance/hail_functions_public.json`` holds values Hail 0.2.139 itself produced
(its README, beside it, gives the format and the state of each record); every record of these
functions is checked bit for bit with x64 on, and the pure-Python oracle
(``reference_oracle.hail_*``, checked here against the same records) checks other seeds,
messages and parameters.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jaxpmac as jp
from jaxpmac import hail

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: the oracle
import reference_oracle as ro  # noqa: E402
from conftest import CONFORMANCE, property_settings, slow_except  # noqa: E402

FUNCTIONS = ("rand_unif", "rand_norm", "rand_norm2d", "rand_int32", "rand_int64", "rand_bool",
             "rand_cat", "shuffle")
RECORDS = [r for r in json.loads((CONFORMANCE / "hail_functions_public.json").read_text())
           if r["fn"] in FUNCTIONS]
# The oracle's normals use Python's math.log, which may differ from Java's StrictMath.log (and
# the project's fdlibm log, which jaxpmac uses) in the last bit.
ORACLE_LOG_RTOL = 1e-15

words = st.integers(min_value=-2**63, max_value=2**64 - 1)
seeds = st.integers(min_value=-2**62, max_value=2**62)
messages = st.lists(st.integers(-2**31, 2**31 - 1), max_size=5)


def record_state(record):
    """``jp.key(global_seed).split(*message).split_static(static_uid)`` (the README's state)."""
    return jp.key(record["global_seed"]).split(*record["message"]).split_static(
        record["static_uid"])


def oracle_args(global_seed, static_uid, message):
    return ro.to_word(global_seed), [ro.to_word(static_uid)], [ro.to_word(m) for m in message]


def params_of(record):
    params = dict(record["params"])
    if "size" in params:
        params["size"] = tuple(params["size"])
    return params


def jax_value(fn, state, params):
    return np.asarray(getattr(hail, fn)(state, **params)).tolist()


def oracle_value(fn, args, params):
    """Hail's value by the pure-Python oracle (``params`` named as Hail's Python names them)."""
    p = params
    if fn == "rand_unif":
        if "size" in p:
            return ro.hail_rand_unif_nd(*args, p["lower"], p["upper"], *p["size"])
        return ro.hail_rand_unif(*args, p["lower"], p["upper"])
    if fn == "rand_norm":
        if "size" in p:
            return ro.hail_rand_norm_nd(*args, p["mean"], p["sd"], *p["size"])
        return ro.hail_rand_norm(*args, p["mean"], p["sd"])
    if fn == "rand_norm2d":
        return ro.hail_rand_norm2d(*args, p["mean"], p["cov"])
    if fn == "rand_int32":
        if "b" in p:
            return ro.hail_rand_int32_range(*args, p["a"], p["b"])
        return ro.hail_rand_int32(*args, p["a"])
    if fn == "rand_int64":
        if not p:
            return ro.hail_rand_int64(*args)
        if "b" in p:
            return ro.hail_rand_int64_range(*args, p["a"], p["b"])
        return ro.hail_rand_int64_bounded(*args, p["a"])
    if fn == "rand_bool":
        return ro.hail_rand_bool(*args, p["p"])
    if fn == "rand_cat":
        return ro.hail_rand_cat(*args, p["prob"])
    return ro.hail_shuffle(*args, p["a"])


def flat(value):
    return list(np.ravel(np.asarray(value, dtype=object))) if isinstance(value, list) else [value]


def assert_close_floats(got, expected, rtol, where):
    for g, e in zip(flat(got), flat(expected), strict=True):
        assert math.isclose(g, e, rel_tol=rtol, abs_tol=0.0), (where, got, expected)


# -------------------------------------------------------------------------------------------
# Hail's own values
# -------------------------------------------------------------------------------------------


def test_known_answers_cover_every_function_and_form():
    forms = {(r["fn"], tuple(sorted(r["params"]))) for r in RECORDS}
    assert forms == {
        ("rand_unif", ("lower", "upper")), ("rand_unif", ("lower", "size", "upper")),
        ("rand_norm", ("mean", "sd")), ("rand_norm", ("mean", "sd", "size")),
        ("rand_norm2d", ("cov", "mean")), ("rand_int32", ("a", "b")),
        ("rand_int64", ()), ("rand_int64", ("a",)), ("rand_int64", ("a", "b")),
        ("rand_bool", ("p",)), ("rand_cat", ("prob",)), ("shuffle", ("a",))}
    assert len(RECORDS) == 288


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_public_known_answer_x64(fn):
    """Bit for bit (and of Hail's type: float, int, bool, nested lists) with x64 on."""
    records = [r for r in RECORDS if r["fn"] == fn]
    assert records
    with jax.enable_x64(True):
        for record in records:
            got = jax_value(fn, record_state(record), params_of(record))
            assert got == record["value"], (record, got)
            assert [type(v) for v in flat(got)] == [type(v) for v in flat(record["value"])]


def test_oracle_matches_every_public_known_answer():
    for record in RECORDS:
        fn, params = record["fn"], params_of(record)
        args = oracle_args(record["global_seed"], record["static_uid"], record["message"])
        got = oracle_value(fn, args, params)
        if fn in ("rand_norm", "rand_norm2d"):
            assert_close_floats(got, record["value"], ORACLE_LOG_RTOL, record)
        else:
            assert got == record["value"], (record, got)


def float32_tolerance(fn, params):
    """x64 off: float32 arithmetic on float32-rounded doubles, relative to the magnitudes."""
    if fn == "rand_unif":
        return 4e-7 * (abs(params["lower"]) + abs(params["upper"]))
    if fn == "rand_norm":
        return 2e-6 * (abs(params["mean"]) + 6 * abs(params["sd"]))
    return 2e-6 * (max(map(abs, params["mean"])) + 6 * max(map(abs, params["cov"])))


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_public_known_answer_x64_off(fn):
    """float32 values close to Hail's; ints, bools, categories and permutations exact;
    rand_int64 raises TypeError."""
    assert not jax.config.jax_enable_x64
    # One size= per function (each size is a program of its own): (2, 3).
    for record in (r for r in RECORDS if r["fn"] == fn
                   and r["params"].get("size", [2, 3]) == [2, 3]):
        state, params = record_state(record), params_of(record)
        if fn == "rand_int64":
            with pytest.raises(TypeError, match="jax_enable_x64"):
                hail.rand_int64(state, **params)
            continue
        got = getattr(hail, fn)(state, **params)
        if fn in ("rand_unif", "rand_norm", "rand_norm2d"):
            assert got.dtype == jnp.float32
            tolerance = float32_tolerance(fn, params)
            for g, e in zip(flat(np.asarray(got).tolist()), flat(record["value"]), strict=True):
                assert abs(g - e) <= tolerance, (record, got)
        else:
            assert np.asarray(got).tolist() == record["value"], (record, got)


# -------------------------------------------------------------------------------------------
# Other seeds, messages and parameters against the oracle
# -------------------------------------------------------------------------------------------

# Sizes of the known answers' records: their programs are compiled once for both tests.
SIZES = st.sampled_from([(2, 3), (3, 1)])
REALS = st.floats(-1e3, 1e3, allow_subnormal=False)


def check_against_oracle(fn, global_seed, seed, message, params, *, rtol=0.0):
    with jax.enable_x64(True):
        state = jp.key(global_seed).split(*message).split_static(-seed - 1)
        got = jax_value(fn, state, params)
    expected = oracle_value(fn, oracle_args(global_seed, -seed - 1, message), params)
    if rtol:
        assert_close_floats(got, expected, rtol, (fn, params))
    else:
        assert got == expected, (fn, params, got, expected)


@property_settings(6)
@given(global_seed=words, seed=seeds, message=messages, lower=REALS, width=st.floats(0, 1e3),
       size=SIZES)
def test_rand_unif_size_matches_oracle(global_seed, seed, message, lower, width, size):
    check_against_oracle("rand_unif", global_seed, seed, message,
                         dict(lower=lower, upper=lower + width, size=size))


@property_settings(6)
@given(global_seed=words, seed=seeds, message=messages, mean=REALS, sd=st.floats(0, 1e3),
       size=SIZES)
def test_rand_norm_size_matches_oracle(global_seed, seed, message, mean, sd, size):
    check_against_oracle("rand_norm", global_seed, seed, message,
                         dict(mean=mean, sd=sd, size=size), rtol=1e-13)


@property_settings(6)
@given(global_seed=words, seed=seeds, message=messages,
       mean=st.lists(REALS, min_size=2, max_size=2),
       variances=st.lists(st.floats(0.01, 100), min_size=2, max_size=2),
       correlation=st.floats(-0.99, 0.99))
def test_rand_norm2d_matches_oracle(global_seed, seed, message, mean, variances, correlation):
    s11, s22 = variances
    cov = [s11, correlation * math.sqrt(s11 * s22), s22]
    check_against_oracle("rand_norm2d", global_seed, seed, message, dict(mean=mean, cov=cov),
                         rtol=1e-12)


@property_settings(8)
@given(global_seed=words, seed=seeds, message=messages, a=st.integers(-2**31, 2**31 - 1),
       width=st.one_of(st.integers(1, 2**31 - 1), st.integers(2**31 - 4096, 2**31 - 1)))
def test_rand_int32_range_matches_oracle(global_seed, seed, message, a, width):
    b = a + width
    if b >= 2**31:
        a, b = a - width, a
    check_against_oracle("rand_int32", global_seed, seed, message, dict(a=a, b=b))
    check_against_oracle("rand_int32", global_seed, seed, message, dict(a=width))


@property_settings(8)
@given(global_seed=words, seed=seeds, message=messages,
       n=st.one_of(st.integers(1, 2**63 - 1), st.integers(2**62 + 1, 2**63 - 1),
                   st.integers(1, 1000)),
       a=st.integers(-2**62, 2**62))
def test_rand_int64_bounded_matches_oracle(global_seed, seed, message, n, a):
    check_against_oracle("rand_int64", global_seed, seed, message, dict(a=n))
    b = a + min(n, 2**63 - 1 - a)
    if b > a:
        check_against_oracle("rand_int64", global_seed, seed, message, dict(a=a, b=b))


@property_settings(8)
@given(global_seed=words, seed=seeds, message=messages,
       prob=st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1e3)), min_size=1, max_size=6),
       p=st.floats(-0.5, 1.5))
def test_rand_cat_and_rand_bool_match_oracle(global_seed, seed, message, prob, p):
    if sum(prob) > 0:
        check_against_oracle("rand_cat", global_seed, seed, message, dict(prob=prob))
    check_against_oracle("rand_bool", global_seed, seed, message, dict(p=p))


# Slow run: shuffle's values are Hail's in test_every_public_known_answer_x64 and _x64_off; an
# array of another dtype is the same permutation of its elements.
@pytest.mark.slow
@property_settings(6)
@given(global_seed=words, static_uid=words, message=messages,
       a=st.lists(st.integers(-100, 100), min_size=1, max_size=9))
def test_shuffle_matches_oracle(global_seed, static_uid, message, a):
    state = jp.key(global_seed).split(*message).split_static(static_uid)
    expected = ro.hail_shuffle(*oracle_args(global_seed, static_uid, message), a)
    assert hail.shuffle(state, a).tolist() == expected
    assert hail.shuffle(state, jnp.asarray(a, jnp.float32)).tolist() == expected


# Slow run: uids= by default against Hail's values in tests/hail/test_hail_values.py (its
# shuffle_range records), and traced uids and states in
# test_shuffle_of_a_range_as_hail_documents_it.
@pytest.mark.slow
@property_settings(6)
@given(global_seed=words, static_uid=words, message=messages,
       start=st.one_of(st.integers(-50, 50), st.integers(-2**63, 2**64 - 10)),
       n=st.integers(1, 9))
def test_shuffle_with_uids_matches_oracle(global_seed, static_uid, message, start, n):
    """``uids=``: ``hl.shuffle(hl.range(start, start + n))`` keys element j at its value."""
    state = jp.key(global_seed).split(*message).split_static(static_uid)
    a = list(range(n))
    uids = [start + j for j in range(n)]
    expected = ro.hail_shuffle(*oracle_args(global_seed, static_uid, message), a, uids)
    assert hail.shuffle(state, a, uids=uids).tolist() == expected
    in_int32 = all(-2**31 <= u < 2**31 for u in uids)
    if in_int32:
        traced = jax.jit(lambda s, u: hail.shuffle(s, jnp.asarray(a), uids=u))
        assert traced(state, jnp.asarray(uids, jnp.int32)).tolist() == expected
    traced_state = jax.jit(lambda s: hail.shuffle(s, jnp.asarray(a), uids=uids))
    assert traced_state(state).tolist() == expected


def test_shuffle_of_a_range_as_hail_documents_it():
    """The docstring's ``hl.shuffle(hl.range(3, 8))``, and the default uids are the indices."""
    s = jp.key(-3).split(14, 18).split_static(2)
    r = jnp.arange(3, 8)
    expected = ro.hail_shuffle(*oracle_args(-3, 2, [14, 18]), list(range(3, 8)),
                               list(range(3, 8)))
    assert hail.shuffle(s, r, uids=r).tolist() == expected
    assert (hail.shuffle(s, r, uids=jnp.arange(5)).tolist()
            == hail.shuffle(s, r).tolist())
    lanes = jax.vmap(lambda i: hail.shuffle(s.split(i), r, uids=r))(jnp.arange(3))
    for i in range(3):
        assert lanes[i].tolist() == hail.shuffle(s.split(i), r, uids=r).tolist()
    with jax.enable_x64(True):
        big = [2**40 + j for j in range(5)]
        expected = ro.hail_shuffle(*oracle_args(-3, 2, [14, 18]), list(range(5)), big)
        assert jax.jit(lambda u: hail.shuffle(s, jnp.arange(5), uids=u))(
            jnp.asarray(big)).tolist() == expected


@pytest.mark.slow
@property_settings(60)
@given(global_seed=words, seed=seeds, message=messages, lower=REALS, width=st.floats(0, 1e3),
       size=SIZES, prob=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=8),
       a=st.integers(-2**31, 2**31 - 2), n64=st.integers(1, 2**63 - 1))
def test_many_examples_match_oracle(global_seed, seed, message, lower, width, size, prob, a,
                                    n64):
    """The slow run: more examples of every function against the oracle."""
    def check(fn, params, rtol=0.0):
        check_against_oracle(fn, global_seed, seed, message, params, rtol=rtol)

    check("rand_unif", dict(lower=lower, upper=lower + width, size=size))
    check("rand_norm", dict(mean=lower, sd=width, size=size), rtol=1e-13)
    check("rand_norm2d", dict(mean=[lower, width], cov=[1.0 + width, 0.5, 2.0]), rtol=1e-12)
    check("rand_int32", dict(a=a, b=min(a + 1 + int(width * 1e6), 2**31 - 1)))
    check("rand_int64", dict(a=n64))
    check("rand_bool", dict(p=width / 1e3))
    if sum(prob) > 0:
        check("rand_cat", dict(prob=prob))


# Slow run: the redraws are Hail's own by default (4 of the known answers' rand_int64 records
# redraw, test_every_public_known_answer_x64), and vmapped lanes that redraw and lanes that do
# not are in test_vmap_over_parameters (its n = 2**62 + 1 lane redraws).
@pytest.mark.slow
def test_rand_int64_redraws_near_2_63():
    """nextLong(n) for n just above 2**62 rejects about half the words: states that redraw."""
    base = jp.key(4).split_static(-3)
    n = 2**62 + 2**61
    redraws = 0
    with jax.enable_x64(True):
        got = jax.jit(jax.vmap(lambda i: hail.rand_int64(base.split(i), n)))(jnp.arange(16))
    for i in range(16):
        args = oracle_args(4, -3, [i])
        engine = ro.HailEngine(*args)
        redraws += (engine.next_long() >> 1) >= (2**63 // n) * n
        assert int(got[i]) == ro.hail_rand_int64_bounded(*args, n), i
    assert redraws >= 2


# -------------------------------------------------------------------------------------------
# jit, vmap, traced parameters, the implicit mode
# -------------------------------------------------------------------------------------------

DRAWS = {   # name -> (draw(state, params), params as arrays)
    "rand_unif_size": (lambda s, p: hail.rand_unif(s, p["lower"], p["upper"], size=(2, 3)),
                       dict(lower=-1.0, upper=2.0)),
    "rand_norm_size": (lambda s, p: hail.rand_norm(s, mean=p["mean"], sd=p["sd"], size=(2, 3)),
                       dict(mean=1.0, sd=0.5)),
    "rand_norm2d": (lambda s, p: hail.rand_norm2d(s, p["mean"], cov=p["cov"]),
                    dict(mean=[1.0, -2.0], cov=[2.0, 0.5, 1.0])),
    "rand_int32": (lambda s, p: hail.rand_int32(s, p["a"], b=p["b"]), dict(a=-1000, b=1000)),
    "rand_int64": (lambda s, p: (hail.rand_int64(s, a=p["a"]), hail.rand_int64(s, p["a"], p["b"])),
                   dict(a=2**62 + 5, b=2**62 + 2**40)),
    "rand_cat": (lambda s, p: hail.rand_cat(s, prob=p["prob"]),
                 dict(prob=[0.1, 0.0, 5.0, 2.5, 0.001])),
    "shuffle": (lambda s, p: hail.shuffle(s, a=p["a"]), dict(a=[10, 20, 30, 40, 50, 60, 70])),
}


# By default rand_unif's size= form, rand_norm2d, rand_int32 and rand_cat. In the slow run:
# rand_norm's size= form (the engine's sequence code of rand_unif's; Hail's normal jitted and
# vmapped over states in tests/hail/test_hail.py's
# test_rand_norm_vmap_lanes_with_different_rejection_counts), rand_int64 (a traced (a, b)
# jitted in tests/test_disable_jit.py's keyless x64 draw, a traced a vmapped in
# test_vmap_over_parameters, states jitted and vmapped in tests/hail/test_hail.py's
# test_vmap_over_message_uids_x64) and shuffle (traced, jitted and vmapped in
# tests/test_disable_jit.py's hail.shuffle entry).
@pytest.mark.parametrize("name", slow_except(sorted(DRAWS), keep=(
    "rand_unif_size", "rand_norm2d", "rand_int32", "rand_cat")))
def test_jit_and_vmap_with_traced_parameters_equal_the_eager_draws(name):
    """Traced parameters and states (a jitted vmap over states) give the eager draws (under
    ``jax.disable_jit()``: tests/test_disable_jit.py's entries)."""
    draw, params = DRAWS[name]
    base = jp.key(5).split_static(-8)
    with jax.enable_x64(True):
        arrays = {k: jnp.asarray(v) for k, v in params.items()}
        eager = [draw(base.split(i), params) for i in range(3)]
        vmapped = jax.jit(jax.vmap(lambda i, p: draw(base.split(i), p), in_axes=(0, None)))(
            jnp.arange(3), arrays)
    for i in range(3):
        for a, b in zip(jax.tree.leaves(vmapped), jax.tree.leaves(eager[i]), strict=True):
            np.testing.assert_array_equal(np.asarray(a)[i], np.asarray(b))


def test_vmap_over_parameters():
    """Per-lane bounds, weights and arrays (a batched predicate in the engine's loops)."""
    state = jp.key(2).split(7).split_static(-1)
    with jax.enable_x64(True):
        ns = jnp.asarray([10, 2**62 + 1, 2**63 - 1, 1000000007], jnp.int64)
        got = jax.vmap(lambda n: hail.rand_int64(state, n))(ns)
        assert [int(v) for v in got] == [int(hail.rand_int64(state, int(n))) for n in ns]
        probs = jnp.asarray([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [5.0, 1.0, 0.0]])
        got = jax.vmap(lambda p: hail.rand_cat(state, p))(probs)
        assert [int(v) for v in got] == [int(hail.rand_cat(state, p.tolist())) for p in probs]


# Slow run: a Hail function drawn implicitly equals its explicit draw at its site's state by
# default in tests/implicit/test_implicit.py (test_hail_example_rows_cols_range, rand_int32),
# and every Hail function goes through the same implicit sampler wrapper.
@pytest.mark.slow
def test_implicit_mode_draws_at_its_sites_states():
    key = jp.key(6)

    def model():
        return {"unif": jp.rand.hail_rand_unif(-1.0, 2.0, size=(2, 3)),
                "int32": jp.rand.hail_rand_int32(10, 15),
                "cat": jp.rand.hail_rand_cat([1.0, 2.0, 3.0]),
                "shuffle": jp.rand.hail_shuffle(jnp.arange(6))}

    randomized = jp.randomized(model)
    with jax.enable_x64(True):
        out = jax.jit(randomized)(key)
        sites = {site.sampler: site for site in randomized.sites()}
        explicit = {
            "unif": hail.rand_unif(sites["hail_rand_unif"].state(key), -1.0, 2.0, size=(2, 3)),
            "int32": hail.rand_int32(sites["hail_rand_int32"].state(key), 10, 15),
            "cat": hail.rand_cat(sites["hail_rand_cat"].state(key), [1.0, 2.0, 3.0]),
            "shuffle": hail.shuffle(sites["hail_shuffle"].state(key), jnp.arange(6)),
        }
    for name, want in explicit.items():
        np.testing.assert_array_equal(np.asarray(out[name]), np.asarray(want), err_msg=name)


# -------------------------------------------------------------------------------------------
# Bad input: errors at trace time naming the argument, what it got and what it accepts
# -------------------------------------------------------------------------------------------

STATE = jp.key(0).split_static(-1)


@pytest.mark.parametrize("call, error, match", [
    (lambda: hail.rand_int32(STATE, 5, 5), ValueError, r"rand_int32 accepts a < b .* a=5, b=5"),
    (lambda: hail.rand_int32(STATE, 9, 2), ValueError, r"b - a = -7"),
    (lambda: hail.rand_int32(STATE, -2**31, 2**31 - 1), ValueError, r"b - a < 2\*\*31"),
    (lambda: hail.rand_int32(STATE, 1, 2**31), ValueError, r"rand_int32 b accepts .* 2147483648"),
    (lambda: hail.rand_int32(STATE, 0.5, 3), TypeError, r"rand_int32 a accepts"),
    (lambda: hail.rand_int32(STATE, 0), ValueError, r"rand_int32 a accepts .* given 0"),
    (lambda: hail.rand_unif(STATE, size=3), TypeError, r"rand_unif size accepts .* given int 3"),
    (lambda: hail.rand_unif(STATE, size=(2, 0)), ValueError, r"rand_unif size accepts"),
    (lambda: hail.rand_norm(STATE, size=(2, 2, 2)), TypeError, r"rand_norm size accepts"),
    (lambda: hail.rand_norm(STATE, size=(2.0, 1)), TypeError, r"rand_norm size accepts"),
    (lambda: hail.rand_cat(STATE, []), ValueError, r"rand_cat prob accepts"),
    (lambda: hail.rand_cat(STATE, jnp.ones((2, 2))), ValueError, r"rand_cat prob accepts .* \(2, 2\)"),
    (lambda: hail.rand_cat(STATE, ["a"]), TypeError, r"rand_cat prob accepts"),
    (lambda: hail.rand_norm2d(STATE, [0.0]), ValueError, r"rand_norm2d mean accepts .*\(2,\)"),
    (lambda: hail.rand_norm2d(STATE, cov=[1.0, 0.0]), ValueError,
     r"rand_norm2d cov accepts .*\[1.0, 0.0\]"),
    (lambda: hail.shuffle(STATE, jnp.ones((2, 2))), ValueError, r"shuffle a accepts"),
    (lambda: hail.shuffle(STATE, 5), TypeError, r"shuffle a accepts"),
    (lambda: hail.shuffle(STATE, [1, 2], uids=[0.5, 1]), TypeError, r"shuffle uids accepts"),
    (lambda: hail.rand_int64(STATE, 5), TypeError, r"jax_enable_x64"),
])
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("call, error, match", [
    (lambda: hail.rand_int64(STATE, 0), ValueError, r"rand_int64 a accepts .* given 0"),
    (lambda: hail.rand_int64(STATE, 2**63), ValueError, r"rand_int64 a accepts"),
    (lambda: hail.rand_int64(STATE, b=3), TypeError, r"rand_int64 b needs a"),
    (lambda: hail.rand_int64(STATE, 3, 3), ValueError, r"rand_int64 accepts a < b"),
    (lambda: hail.rand_int64(STATE, -2**63, 0), ValueError, r"b - a < 2\*\*63"),
    (lambda: hail.rand_int64(STATE, 1.0), TypeError, r"rand_int64 a accepts"),
])
def test_bad_int64_input_is_named(call, error, match):
    with jax.enable_x64(True), pytest.raises(error, match=match):
        call()
