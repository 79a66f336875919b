"""Tests of Hail's jdistlib-based random functions: the oracle against Hail 0.2.139's outputs,
and ``jaxpmac.hail``'s functions against the oracle.

``tests/data/conformance/hail_functions_public.json`` holds values Hail itself produced (its
README beside it gives the format); ``reference_jdistlib`` is a pure-Python port of the
jdistlib 0.4.5 samplers Hail calls, driven by ``reference_oracle.HailEngine``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: the oracles
import reference_jdistlib as rj  # noqa: E402
import reference_oracle as ro  # noqa: E402
from conftest import CONFORMANCE, property_settings  # noqa: E402

RECORDS = [json.loads(line.rstrip(",\n")) for line in
           (CONFORMANCE / "hail_functions_public.json").read_text().splitlines()
           if line.startswith("{")]
JDISTLIB_FUNCTIONS = ("rand_pois", "rand_gamma", "rand_beta", "rand_dirichlet", "rand_hyper",
                      "rand_multi_hyper")
ORACLE = {name: getattr(rj, "hail_" + name) for name in JDISTLIB_FUNCTIONS}
OUR_RECORDS = [r for r in RECORDS if r["fn"] in JDISTLIB_FUNCTIONS]


def _record_id(record) -> str:
    return f"{record['fn']}-{record['params']}-{record['global_seed']}-{record['seed']}-" \
           f"{record['message']}"


def _same(value, expected) -> bool:
    """Equal, with the same Python type (Hail's rand_pois is a float: 4.0, not 4)."""
    if isinstance(expected, list):
        return (isinstance(value, list) and len(value) == len(expected)
                and all(_same(v, e) for v, e in zip(value, expected)))
    return type(value) is type(expected) and value == expected


def test_records_cover_every_function():
    counts = {name: sum(r["fn"] == name for r in OUR_RECORDS) for name in JDISTLIB_FUNCTIONS}
    assert counts == {"rand_pois": 48, "rand_gamma": 56, "rand_beta": 56, "rand_dirichlet": 24,
                      "rand_hyper": 24, "rand_multi_hyper": 16}


@pytest.mark.parametrize("record", OUR_RECORDS, ids=_record_id)
def test_oracle_matches_hail(record):
    value = ORACLE[record["fn"]](record["global_seed"], record["seed"], record["message"],
                                 **record["params"])
    assert _same(value, record["value"]), (value, record["value"])


def test_fdlibm_math_misses_records(monkeypatch):
    """Hail's ``Math.exp``/``log`` are not fdlibm's: with StrictMath's functions the oracle
    misses 11 of the 224 records (the reason the JAX port computes them correctly rounded)."""
    monkeypatch.setattr(rj, "MATH", "fdlibm")
    misses = [r for r in OUR_RECORDS
              if not _same(ORACLE[r["fn"]](r["global_seed"], r["seed"], r["message"],
                                           **r["params"]), r["value"])]
    assert len(misses) == 11
    assert {r["fn"] for r in misses} == {"rand_gamma", "rand_beta", "rand_dirichlet"}


@pytest.mark.parametrize("x", [1e-300, 1e-5, 0.3, 0.5, 0.7071, 1.0, 1.0 + 2 ** -40, 1.5, 2.0,
                               10.0, 12345.678, 1e300])
def test_fdlibm_log_near_python(x):
    assert abs(rj.fdlibm_log(x) - math.log(x)) <= math.ulp(math.log(x))


@pytest.mark.parametrize("x", [-745.0, -700.0, -20.0, -1.0, -0.3, -1e-10, 0.0, 1e-10, 0.3, 1.0,
                               20.0, 700.0])
def test_fdlibm_exp_and_expm1_near_python(x):
    assert abs(rj.fdlibm_exp(x) - math.exp(x)) <= math.ulp(math.exp(x))
    assert abs(rj.fdlibm_expm1(x) - math.expm1(x)) <= 2 * math.ulp(math.expm1(x))


@pytest.mark.parametrize("mu", [0.01 * k for k in range(1, 1000, 7)] + [1.0, 2.0, 3.0, 9.0,
                                                                        9.999])
def test_rpois_table_search_start_is_safe(mu):
    """rpois starts its table search at the mode ``m`` when ``u > 0.458``: correct only if
    ``pp[m - 1] < 0.458`` (so that the search from 1 would not stop earlier)."""
    m = max(1, int(mu))
    p = q = math.exp(-mu)
    for k in range(1, m):
        p *= mu / k
        q += p
    assert m == 1 or q < rj.POIS_TABLE_HALF


class _Words:
    """An engine over given doubles (for hand-made cases)."""

    def __init__(self, doubles):
        self._doubles = list(doubles)

    def next_double(self):
        return self._doubles.pop(0)


def test_exp_rand_by_hand():
    # u = 0.75: doubled to 1.5 > 1 at once, u - 1 = 0.5 <= log 2: the value is 0.5.
    assert rj.exp_rand(_Words([0.75])) == 0.5
    # u = 0.3: 0.6 (a = log 2), 1.2 -> u = 0.2: 0.2 + log 2.
    assert rj.exp_rand(_Words([0.3])) == (0.3 * 4 - 1.0) + rj.EXP_Q[0]


def test_norm_rand_by_hand():
    # (floor(2**27 * 0.5) + 0.5) / 2**27 = 0.5 + 2**-28: just above the median.
    z = rj.norm_rand(_Words([0.5, 0.5]))
    assert 0 < z < 1e-7


def test_oracle_invalid_parameters():
    assert math.isnan(rj.rpois(-1.0, None))
    assert rj.rpois(0.0, None) == 0.0
    assert math.isnan(rj.rgamma(-1.0, 1.0, None))
    assert rj.rgamma(0.0, 1.0, None) == 0.0
    assert math.isnan(rj.rbeta(0.0, 1.0, None))
    assert math.isnan(rj.rhyper(5.0, 5.0, 11.0, None))
    assert rj.hail_rand_hyper(1, 1, [], 10, 5, 11) == 0      # (int) NaN
    assert ro.MASK64 == (1 << 64) - 1


# -- jaxpmac.hail against Hail's records and the oracle --------------------------------------------

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jaxpmac as jp  # noqa: E402
from jaxpmac import hail  # noqa: E402
from jaxpmac._cipher import _words as w  # noqa: E402
from jaxpmac._hail import _engine as engine  # noqa: E402
from jaxpmac._hail import _jdistlib  # noqa: E402

SETTINGS = property_settings(6)


def _state(global_seed, static_uid, message):
    return jp.key(global_seed).split(*message).split_static(static_uid)


def _unjitted(fn):
    """A ``_jdistlib`` draw without its ``jit`` (whose final tweak is static), so that the
    final tweak can be a traced ``Pair``: the same draw for states of every final tweak in one
    compiled program (each distribution's program compiles once, not once per final tweak)."""
    return getattr(fn, "__wrapped__", fn)


def _draw_many(states, params, draw):
    """``draw(h, *param_arrays, final_tweak=Pair)`` vmapped over the states (their hashed
    messages and final tweaks), as Python floats: one compiled program. ``draw`` calls the
    ``_unjitted`` draws."""
    tweaks, hashes = zip(*(engine.state_hash(s) for s in states))
    hs = tuple(w.Pair(jnp.stack([h[k].hi for h in hashes]), jnp.stack([h[k].lo for h in hashes]))
               for k in range(4))
    tweak_pairs = [engine.tweak_pair(t) for t in tweaks]
    final_tweaks = w.Pair(jnp.stack([t.hi for t in tweak_pairs]),
                          jnp.stack([t.lo for t in tweak_pairs]))
    args = [jnp.asarray([p[k] for p in params], jnp.float64) for k in range(len(params[0]))]
    values = jax.jit(jax.vmap(lambda h, f, *a: draw(h, *a, final_tweak=f)))(
        hs, final_tweaks, *args)
    return np.asarray(values).tolist()


PARAM_ORDER = {"rand_pois": ("lamb",), "rand_gamma": ("shape", "scale"), "rand_beta": ("a", "b")}
DRAWS = {"rand_pois": _unjitted(_jdistlib.pois), "rand_gamma": _unjitted(_jdistlib.gamma),
         "rand_beta": lambda h, a, b, *, final_tweak: _unjitted(_jdistlib.beta)(
             h, a, b, 0.0, 1.0, final_tweak=final_tweak, bounded=False)}


@pytest.mark.parametrize("fn", ["rand_pois", "rand_gamma", "rand_beta"])
def test_jax_matches_hail_records(fn):
    """Every public record, bit for bit (x64), one vmapped draw per final tweak."""
    records = [r for r in OUR_RECORDS if r["fn"] == fn and "lower" not in r["params"]]
    states = [_state(r["global_seed"], r["static_uid"], r["message"]) for r in records]
    params = [[r["params"][k] for k in PARAM_ORDER[fn]] for r in records]
    with jax.enable_x64(True):
        values = _draw_many(states, params, DRAWS[fn])
    assert values == [r["value"] for r in records]


@pytest.mark.slow
def test_jax_truncated_beta_matches_hail_records():
    records = [r for r in OUR_RECORDS if r["fn"] == "rand_beta" and "lower" in r["params"]]
    states = [_state(r["global_seed"], r["static_uid"], r["message"]) for r in records]
    params = [[r["params"][k] for k in ("a", "b", "lower", "upper")] for r in records]
    with jax.enable_x64(True):
        values = _draw_many(states, params, lambda h, a, b, lo, hi, *, final_tweak:
                            _unjitted(_jdistlib.beta)(h, a, b, lo, hi, final_tweak=final_tweak,
                                                      bounded=True))
    assert len(records) == 24 and values == [r["value"] for r in records]


def _dirichlet_records(length):
    return [r for r in OUR_RECORDS if r["fn"] == "rand_dirichlet"
            and len(r["params"]["a"]) == length]


@pytest.mark.parametrize("length", [pytest.param(4, marks=pytest.mark.slow),
                                    pytest.param(3, marks=pytest.mark.slow),
                                    pytest.param(2, marks=pytest.mark.slow)])
def test_jax_dirichlet_matches_hail_records(length):
    with jax.enable_x64(True):
        for r in _dirichlet_records(length):
            value = hail.rand_dirichlet(_state(r["global_seed"], r["static_uid"], r["message"]),
                                        r["params"]["a"])
            assert np.asarray(value).tolist() == r["value"], r


def test_public_functions_positional_and_keyword():
    r = next(r for r in OUR_RECORDS if r["fn"] == "rand_beta" and "lower" in r["params"]
             and r["message"] == [])
    s = _state(r["global_seed"], r["static_uid"], r["message"])
    p = r["params"]
    with jax.enable_x64(True):
        assert float(hail.rand_beta(s, p["a"], p["b"], p["lower"], p["upper"])) == r["value"]
        assert float(hail.rand_beta(s, a=p["a"], b=p["b"], lower=p["lower"],
                                    upper=p["upper"])) == r["value"]


_LAMBS = st.sampled_from([0.5, 2.5, 9.99, 10.0, 12.5, 37.0, 400.0])
_SHAPES = st.sampled_from([0.05, 0.3, 0.999, 1.0, 2.5, 3.686, 7.0, 13.022, 40.0])
_BETA_AB = st.sampled_from([(0.3, 0.3), (0.5, 2.0), (1.0, 1.0), (0.8, 5.0), (1.5, 1.5),
                            (2.0, 5.0), (30.0, 2.5)])
_SEEDS = st.integers(-(1 << 40), 1 << 40)
_MESSAGES = st.lists(st.integers(-(1 << 31), (1 << 31) - 1), max_size=3)


def _against_oracle(fn, draw, params_list, seeds):
    states = [_state(g, -s - 1, m) for g, s, m in seeds]
    with jax.enable_x64(True):
        values = _draw_many(states, params_list, draw)
    expected = [getattr(rj, "hail_" + fn)(g, s, m, *p) for (g, s, m), p in zip(seeds, params_list)]
    assert values == expected


# Slow run, with gamma's and beta's: other seeds and parameters of the programs that
# test_jax_matches_hail_records checks against Hail's own values (48 rand_pois records).
@pytest.mark.slow
@SETTINGS
@given(st.lists(st.tuples(_SEEDS, _SEEDS, _MESSAGES, _LAMBS), min_size=8, max_size=8))
def test_pois_against_oracle(cases):
    _against_oracle("rand_pois", DRAWS["rand_pois"], [[c[3]] for c in cases],
                    [c[:3] for c in cases])


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.tuples(_SEEDS, _SEEDS, _MESSAGES, _SHAPES), min_size=8, max_size=8))
def test_gamma_against_oracle(cases):
    _against_oracle("rand_gamma", DRAWS["rand_gamma"], [[c[3], 2.0] for c in cases],
                    [c[:3] for c in cases])


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.tuples(_SEEDS, _SEEDS, _MESSAGES, _BETA_AB), min_size=8, max_size=8))
def test_beta_against_oracle(cases):
    _against_oracle("rand_beta", DRAWS["rand_beta"], [list(c[3]) for c in cases],
                    [c[:3] for c in cases])


@pytest.mark.slow
def test_many_seeds_against_oracle():
    """Long run: 200 seeds per function and parameter, every regime's loops exercised."""
    seeds = [(g, 7, [g % 13]) for g in range(200)]
    for lamb in (0.5, 9.99, 10.0, 50.0, 1000.0):
        _against_oracle("rand_pois", DRAWS["rand_pois"], [[lamb]] * 200, seeds)
    for shape in (0.05, 0.5, 1.0, 3.0, 5.0, 20.0):
        _against_oracle("rand_gamma", DRAWS["rand_gamma"], [[shape, 1.0]] * 200, seeds)
    for a, b in ((0.2, 0.2), (0.5, 3.0), (2.0, 2.0), (10.0, 0.7)):
        _against_oracle("rand_beta", DRAWS["rand_beta"], [[a, b]] * 200, seeds)


# Slow run: lanes with their own parameters are test_jax_matches_hail_records' (against Hail's
# values), and a public jdistlib function vmapped over states is checked against Hail's values by
# default in tests/hail/test_hail_values.py (its rand_gamma case).
@pytest.mark.slow
def test_vmap_over_states_and_parameters():
    keys = jnp.arange(6)
    lambs = jnp.asarray([0.5, 3.0, 9.0, 10.0, 25.0, 300.0])
    with jax.enable_x64(True):
        values = jax.jit(jax.vmap(lambda k, lamb: hail.rand_pois(
            jp.key(3).split(k).split_static(-6), lamb)))(keys, lambs)
        expected = [rj.hail_rand_pois(3, 5, [int(k)], float(lamb))
                    for k, lamb in zip(keys, lambs)]
    assert np.asarray(values).tolist() == expected


def test_x64_off_is_a_type_error():
    s = jp.key(0).split_static(-1)
    for call in (lambda: hail.rand_pois(s, 3.0), lambda: hail.rand_gamma(s, 1.0, 1.0),
                 lambda: hail.rand_beta(s, 1.0, 2.0), lambda: hail.rand_dirichlet(s, [1.0])):
        with pytest.raises(TypeError, match="64-bit"):
            call()


@pytest.mark.parametrize("call, match", [
    (lambda s: hail.rand_pois(s, -1.0), r"rand_pois lamb accepts a non-negative .* -1\.0"),
    (lambda s: hail.rand_pois(s, "3"), "rand_pois lamb accepts"),
    (lambda s: hail.rand_gamma(s, -0.5, 1.0), r"rand_gamma shape accepts .* -0\.5"),
    (lambda s: hail.rand_gamma(s, 1.0, -2.0), r"rand_gamma scale accepts .* -2\.0"),
    (lambda s: hail.rand_beta(s, 0.0, 1.0), r"rand_beta a accepts a positive .* 0\.0"),
    (lambda s: hail.rand_beta(s, 1.0, -1.0), r"rand_beta b accepts a positive"),
    (lambda s: hail.rand_beta(s, 1.0, 1.0, 0.8, 0.2), "lower <= upper"),
    (lambda s: hail.rand_dirichlet(s, [1.0, -1.0]), r"rand_dirichlet a accepts .* -1\.0"),
    (lambda s: hail.rand_dirichlet(s, []), "rand_dirichlet a accepts a non-empty"),
    (lambda s: hail.rand_dirichlet(s, jnp.ones((2, 2))), "rand_dirichlet a accepts"),
])
def test_bad_input(call, match):
    with jax.enable_x64(True):
        with pytest.raises((TypeError, ValueError), match=match):
            call(jp.key(0).split_static(-1))


@pytest.mark.slow
def test_traced_invalid_parameters_give_hails_values():
    s = jp.key(0).split_static(-1)
    with jax.enable_x64(True):
        pois = jax.jit(lambda lamb: hail.rand_pois(s, lamb))
        assert np.isnan(float(pois(-1.0))) and float(pois(0.0)) == 0.0
        gamma = jax.jit(lambda a: hail.rand_gamma(s, a, 1.0))
        assert np.isnan(float(gamma(-1.0))) and float(gamma(0.0)) == 0.0
        beta = jax.jit(lambda a: hail.rand_beta(s, a, 1.0))
        assert np.isnan(float(beta(-1.0)))


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["rand_hyper", "rand_multi_hyper"])
def test_jax_hypergeometric_matches_hail_records(fn):
    with jax.enable_x64(True):
        for r in OUR_RECORDS:
            if r["fn"] != fn:
                continue
            s = _state(r["global_seed"], r["static_uid"], r["message"])
            value = getattr(hail, fn)(s, **r["params"])
            assert np.asarray(value).tolist() == r["value"], r


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.tuples(_SEEDS, _SEEDS, _MESSAGES,
                          st.sampled_from([(20, 7, 12), (100, 60, 40), (5000, 1200, 800),
                                           (30, 30, 10), (1000, 3, 500), (50, 10, 0)])),
                min_size=6, max_size=6))
def test_hyper_against_oracle(cases):
    states = [_state(g, -s - 1, m) for g, s, m, _ in cases]
    with jax.enable_x64(True):
        values = _draw_many(states, [list(c[3]) for c in cases],
                            lambda h, p, g, n, *, final_tweak: _unjitted(_jdistlib.hyper)(
                                h, p.astype(jnp.int32), g.astype(jnp.int32),
                                n.astype(jnp.int32), final_tweak=final_tweak))
    assert values == [rj.hail_rand_hyper(g, s, m, *p) for g, s, m, p in cases]


@pytest.mark.parametrize("call, match", [
    (lambda s: hail.rand_hyper(s, 10, 11, 3), r"rand_hyper ngood accepts .* 11 with popsize=10"),
    (lambda s: hail.rand_hyper(s, 10, 3, 11), r"rand_hyper nsample accepts .* 11"),
    (lambda s: hail.rand_hyper(s, -1, 0, 0), r"rand_hyper popsize accepts .* -1"),
    (lambda s: hail.rand_hyper(s, 10.0, 3, 1), "rand_hyper popsize accepts"),
    (lambda s: hail.rand_multi_hyper(s, [2, 7, 1], 11), r"nsample accepts .* sum\(colors\)=10"),
    (lambda s: hail.rand_multi_hyper(s, [2, -7], 1), r"colors accepts .* \[2, -7\]"),
    (lambda s: hail.rand_multi_hyper(s, [], 1), "colors accepts a non-empty"),
    (lambda s: hail.rand_multi_hyper(s, [1.5], 1), "colors accepts"),
])
def test_hypergeometric_bad_input(call, match):
    with jax.enable_x64(True):
        with pytest.raises((TypeError, ValueError), match=match):
            call(jp.key(0).split_static(-1))


def test_hypergeometric_x64_off_is_a_type_error():
    s = jp.key(0).split_static(-1)
    with pytest.raises(TypeError, match="64-bit"):
        hail.rand_hyper(s, 10, 3, 2)
    with pytest.raises(TypeError, match="64-bit"):
        hail.rand_multi_hyper(s, [1, 2], 2)
