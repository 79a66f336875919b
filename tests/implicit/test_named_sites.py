"""``name=`` on keyless draws (issue 32): a named draw's site is
``state.split_static("jaxpmac.rand.name", name)`` wherever it is in the program, then its vmap
lanes and loop indices; other draws cannot move it, it moves none of them, and one name is one
site."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

ROOT = jp.key(20261126).split_static("named sites")
XS = jnp.arange(3.0)


def _named(name):
    return ROOT.split_static("jaxpmac.rand.name", name)


def _assert_same(got, want):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _alone(xs):
    return jp.rand.normal((4,), name="dropout1")


def _among_others(xs):
    first = jp.rand.uniform((3,))
    looped = lax_scan_of_draws(xs)
    noise = jp.rand.normal((4,), name="dropout1")
    return noise, first, looped, jp.rand.bernoulli(0.5, (2,), name="mask")


def _reordered(xs):
    mask = jp.rand.bernoulli(0.5, (2,), name="mask")
    noise = jp.rand.normal((4,), name="dropout1")
    return noise, mask


def lax_scan_of_draws(xs):
    return jax.lax.scan(lambda c, x: (c, jp.rand.gumbel((2,))), 0, xs)[1]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_a_named_draw_is_its_named_state_wherever_it_is(jit):
    want = jp.normal(_named("dropout1"), (4,))
    for f in (_alone, lambda xs: _among_others(xs)[0], lambda xs: _reordered(xs)[0]):
        g = jp.randomized(f)
        _assert_same((jax.jit(g) if jit else g)(ROOT, XS), want)
    _assert_same(jp.randomized(_reordered)(ROOT, XS)[1],
                 jp.bernoulli(_named("mask"), 0.5, (2,)))


def test_named_draws_move_no_unnamed_draw():
    def plain(xs):
        return jp.rand.uniform((3,)), lax_scan_of_draws(xs)

    def with_named(xs):
        jp.rand.normal((5,), name="extra")
        jax.lax.scan(lambda c, x: (c, jp.rand.normal((), name="in a loop")), 0, xs)
        return plain(xs)
    for got, want in zip(jp.randomized(with_named)(ROOT, XS), jp.randomized(plain)(ROOT, XS)):
        _assert_same(got, want)


def test_a_named_draw_in_a_loop_and_under_vmap_appends_its_indices():
    def f(xs):
        per_step = jax.lax.scan(lambda c, x: (c, jp.rand.normal((2,), name="step")), 0, xs)[1]
        per_example = jax.vmap(lambda x: x + jp.rand.normal((), name="example"))(xs)
        return per_step, per_example
    per_step, per_example = jp.randomized(f)(ROOT, XS)
    for t in range(3):
        _assert_same(per_step[t], jp.normal(_named("step").split(t), (2,)))
        _assert_same(per_example[t], XS[t] + jp.normal(_named("example").split(t), ()))


def test_draw_sites_report_the_name_and_its_state():
    sites = jp.draw_sites(_reordered, XS)
    assert [(s.name, s.static_words, s.bits) for s in sites] == [
        ("mask", ("jaxpmac.rand.name", "mask"), ""),
        ("dropout1", ("jaxpmac.rand.name", "dropout1"), "")]
    _assert_same(jp.normal(sites[1].state(ROOT), (4,)), jp.randomized(_reordered)(ROOT, XS)[0])


def test_two_draws_of_one_name_are_an_error_naming_both():
    def twice():
        return jp.rand.normal((2,), name="a"), jp.rand.uniform((2,), name="a")
    with pytest.raises(ValueError, match="two draws are named 'a' \\(jaxpmac.rand.normal at "
                                         "equation path 0:\\d+ and jaxpmac.rand.uniform at"):
        jp.randomized(twice)(ROOT)


@pytest.mark.parametrize("name", [3, "", ("a",)])
def test_a_name_that_is_not_a_non_empty_str_is_an_error(name):
    with pytest.raises(TypeError, match="jaxpmac.rand.normal name accepts a non-empty str or "
                                        "None, but was given"):
        jp.randomized(lambda: jp.rand.normal((2,), name=name))(ROOT)
