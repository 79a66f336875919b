"""Tests of implicit randomness: ``jaxpmac.randomized`` and the keyless samplers ``jaxpmac.rand``.

Every draw is checked against its explicit equivalent, built from what ``draw_sites`` reports:
``jaxpmac.<sampler>(state.split_static(*site.static_words).split(*lanes, *loop indices), ...)``.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxpmac as jp
from jaxpmac._implicit import _table as tbl

KEY = jp.key(7)


def brief_model(x):
    h = x + jp.rand.normal(x.shape)

    def step(c, _):
        return c + jp.rand.uniform(()), None

    c, _ = lax.scan(step, 0.0, None, length=4)
    return h * c


def hail_matrix_vmap(rows, cols, n):
    entry = lambda: jax.vmap(lambda i: jp.rand.hail_rand_int32(100))(jnp.arange(n))
    return jax.vmap(lambda r: jax.vmap(lambda c: entry())(jnp.arange(cols)))(jnp.arange(rows))


def hail_matrix_scan(rows, cols, n):
    entry = lambda: lax.scan(lambda _, i: (None, jp.rand.hail_rand_int32(100)), None,
                             jnp.arange(n))[1]
    return jax.vmap(lambda r: jax.vmap(lambda c: entry())(jnp.arange(cols)))(jnp.arange(rows))


def branchy(x, pred):
    """A cond per example: with a batched ``pred`` JAX lowers it to both branches + select."""
    return jax.vmap(lambda xi, pi: lax.cond(pi, lambda: xi + jp.rand.uniform(),
                                            lambda: xi - jp.rand.normal()),
                    in_axes=(0, 0 if jnp.ndim(pred) else None))(x, pred)


class ImplicitTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    def test_brief_model_matches_explicit_states(self):
        model = jp.randomized(brief_model)
        x = jnp.arange(3.0)
        y = self.variant(model)(KEY, x)
        normal_site, uniform_site = model.sites(x)
        self.assertEqual((normal_site.sampler, normal_site.bits, normal_site.uid_names),
                         ("normal", "0", ()))
        self.assertEqual(uniform_site.sampler, "uniform")
        self.assertEqual(uniform_site.bits, "1")
        self.assertEqual(len(uniform_site.uid_names), 1)
        self.assertIn("scan iteration", uniform_site.uid_names[0])
        h = x + jp.normal(normal_site.state(KEY), (3,))
        c = sum(jp.uniform(uniform_site.state(KEY).split(t)) for t in range(4))
        np.testing.assert_allclose(y, h * c, rtol=1e-6)
        # The same call gives the same values; the other style of evaluation agrees bitwise.
        np.testing.assert_array_equal(y, model(KEY, x))
        np.testing.assert_array_equal(y, jax.jit(model)(KEY, x))

    @chex.variants(with_jit=True, without_jit=True)
    def test_two_sites_draw_independent_values(self):
        model = jp.randomized(lambda: (jp.rand.uniform((64,)), jp.rand.uniform((64,))))
        a, b = self.variant(model)(KEY)
        self.assertFalse(np.any(np.asarray(a) == np.asarray(b)))
        # A different root state changes both.
        c, _ = model(jp.key(8))
        self.assertFalse(np.any(np.asarray(a) == np.asarray(c)))
        # Iterations and lanes differ too.
        per_lane = jp.randomized(lambda: jax.vmap(lambda i: jp.rand.uniform())(jnp.arange(64)))
        self.assertEqual(len(np.unique(np.asarray(self.variant(per_lane)(KEY)))), 64)

    @chex.variants(with_jit=True, without_jit=True)
    def test_hail_example_rows_cols_range(self):
        rows, cols, n = 2, 3, 4
        for matrix in (hail_matrix_vmap, hail_matrix_scan):
            model = jp.randomized(lambda: matrix(rows, cols, n))
            out = self.variant(model)(KEY)
            (site,) = model.sites()
            self.assertEqual(site.sampler, "hail_rand_int32")
            self.assertEqual(len(site.uid_names), 3)
            base = site.state(KEY)
            want = [[[jp.hail.rand_int32(base.split(r, c, i), 100) for i in range(n)]
                     for c in range(cols)] for r in range(rows)]
            np.testing.assert_array_equal(out, np.array(want))

    @chex.variants(with_jit=True, without_jit=True)
    def test_cond_draw_independent_of_lowering(self):
        model = jp.randomized(branchy)
        x = jnp.arange(4.0)
        pred = jnp.array([True, False, True, False])
        both = self.variant(model)(KEY, x, pred)               # select of both branches
        when_true = self.variant(model)(KEY, x, jnp.bool_(True))   # a real cond
        when_false = self.variant(model)(KEY, x, jnp.bool_(False))
        np.testing.assert_array_equal(both, jnp.where(pred, when_true, when_false))
        self.assertEqual([s.bits for s in model.sites(x, pred)],
                         [s.bits for s in model.sites(x, jnp.bool_(True))])
        # The false branch (branch 0) is site "0", the true one "1"; lanes are the uids.
        false_site, true_site = model.sites(x, pred)
        lanes = jnp.arange(4)
        want_true = x + jax.vmap(lambda l: jp.uniform(true_site.state(KEY).split(l)))(lanes)
        np.testing.assert_allclose(when_true, want_true, rtol=1e-6)
        want_false = x - jax.vmap(lambda l: jp.normal(false_site.state(KEY).split(l)))(lanes)
        np.testing.assert_allclose(when_false, want_false, rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_while_and_fori_loops_use_iteration_counter(self):
        def with_while(x):
            body = lambda c: (c[0] + 1, c[1] + jp.rand.uniform())
            return lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1]

        def with_fori(x):
            return lax.fori_loop(0, 5, lambda i, acc: acc + jp.rand.uniform(), x)

        for f, loop_name in ((with_while, "while"), (with_fori, "scan")):
            model = jp.randomized(f)
            (site,) = model.sites(1.0)
            self.assertIn(loop_name, site.uid_names[0])
            want = 1.0 + sum(jp.uniform(site.state(KEY).split(t)) for t in range(5))
            np.testing.assert_allclose(self.variant(model)(KEY, 1.0), want, rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_scan_with_consts_carries_and_xs_in_reverse(self):
        # Every operand group of a scan equation is present, so a misread layout (the pass
        # reads it from parameters that differ between jax versions) changes the values.
        def f(scale, xs, ys):
            def step(carry, x_and_y):
                total, count = carry
                x, y = x_and_y
                return (total + scale * x * jp.rand.uniform(), count + 1), y * jp.rand.normal()
            return lax.scan(step, (0.0, 0), (xs, ys), reverse=True)

        model = jp.randomized(f)
        xs, ys = jnp.arange(1.0, 5.0), jnp.arange(5.0, 9.0)
        (total, count), out = self.variant(model)(KEY, 2.0, xs, ys)
        uniform_site, normal_site = model.sites(2.0, xs, ys)
        want_total = sum(2.0 * xs[t] * jp.uniform(uniform_site.state(KEY).split(t))
                         for t in range(4))
        want_out = [ys[t] * jp.normal(normal_site.state(KEY).split(t)) for t in range(4)]
        np.testing.assert_allclose(total, want_total, rtol=1e-6)
        self.assertEqual(int(count), 4)
        np.testing.assert_allclose(out, jnp.stack(want_out), rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_switch_and_custom_vjp_are_transparent(self):
        @jax.custom_vjp
        def noisy(x):
            return x + jp.rand.uniform()

        noisy.defvjp(lambda x: (noisy(x), None), lambda _, g: (g,))

        def f(index, x):
            branches = [lambda v: v + jp.rand.normal(), noisy, lambda v: v * jp.rand.exponential()]
            return lax.switch(index, branches, x)

        model = jp.randomized(f)
        samplers = [site.sampler for site in model.sites(0, 1.0)]
        self.assertEqual(samplers, ["normal", "uniform", "exponential"])
        explicit = [lambda s: 1.0 + jp.normal(s), lambda s: 1.0 + jp.uniform(s),
                    lambda s: 1.0 * jp.exponential(s)]
        for index, (site, want) in enumerate(zip(model.sites(0, 1.0), explicit)):
            np.testing.assert_allclose(self.variant(model)(KEY, index, 1.0),
                                       want(site.state(KEY)), rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_batched_operands_and_jit_inside_are_transparent(self):
        p = jnp.array([0.1, 0.5, 0.9])

        def plain(p):
            return jax.vmap(lambda pi: jp.rand.bernoulli(pi, (32,)))(p), jp.rand.normal((2,))

        def jitted(p):
            return jax.jit(plain)(p)

        a = self.variant(jp.randomized(plain))(KEY, p)
        b = self.variant(jp.randomized(jitted))(KEY, p)
        chex.assert_trees_all_equal(a, b)
        site, _ = jp.draw_sites(jp.randomized(plain), p)
        want = jax.vmap(lambda l, pi: jp.bernoulli(site.state(KEY).split(l), pi, (32,)))(
            jnp.arange(3), p)
        np.testing.assert_array_equal(a[0], want)

    def test_randomized_under_vmap_takes_batched_states(self):
        model = jp.randomized(lambda x: x + jp.rand.normal())
        out = jax.vmap(lambda i: model(KEY.split(i), 0.0))(jnp.arange(3))
        (site,) = model.sites(0.0)
        want = [jp.normal(KEY.split(i).split_static(*site.static_words)) for i in range(3)]
        np.testing.assert_allclose(out, np.array(want), rtol=1e-6)

    def test_halving_split_and_site_words(self):
        self.assertEqual(tbl.halving(5), ("00", "01", "10", "110", "111"))
        self.assertEqual(tbl.halving(1), ("",))
        self.assertEqual(tbl.site_words(""), (1,))
        self.assertEqual(tbl.site_words("110"), (0b1110,))
        self.assertEqual(tbl.site_words("0" * 64), ("0" * 64,))
        five = jp.randomized(lambda: [jp.rand.bits((1,)) for _ in range(5)])
        self.assertEqual([s.bits for s in five.sites()], list(tbl.halving(5)))
        values = five(KEY)
        for site, value in zip(five.sites(), values):
            np.testing.assert_array_equal(value, jp.bits(site.state(KEY), (1,)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_keyword_arguments(self):
        model = jp.randomized(lambda x, scale=1.0: x + scale * jp.rand.normal())
        (site,) = model.sites(1.0, scale=2.0)
        np.testing.assert_allclose(self.variant(model)(KEY, 1.0, scale=2.0),
                                   1.0 + 2.0 * jp.normal(site.state(KEY)), rtol=1e-6)

    def test_unreadable_loop_parameters_name_primitive_jax_and_remedy(self):
        # A jax newer than any we tested may spell scan's or while's parameters differently:
        # the pass must say so, not raise a KeyError from inside.
        from jaxpmac._interop import _jaxpr_readers

        for read, primitive in ((_jaxpr_readers.scan_layout, "scan"),
                                (_jaxpr_readers.scan_options, "scan"),
                                (_jaxpr_readers.while_layout, "while")):
            with pytest.raises(NotImplementedError) as caught:
                read({"jaxpr": None, "linear": ()})
            message = str(caught.value)
            self.assertIn(f"'{primitive}' equation", message)
            self.assertIn(f"jax {jax.__version__}", message)
            self.assertIn("pip install 'jax<=", message)
            self.assertIn("['jaxpr', 'linear']", message)

    def test_errors(self):
        with pytest.raises(RuntimeError, match="jaxpmac.rand.normal.*randomized"):
            jp.rand.normal()
        solve = lambda x: lax.custom_linear_solve(
            lambda v: v, x, lambda mv, b: b + jp.rand.normal(b.shape))
        with pytest.raises(NotImplementedError, match="custom_linear_solve"):
            jp.randomized(solve)(KEY, jnp.ones(2))
        with pytest.raises(TypeError, match="RNGState"):
            jp.randomized(lambda: jp.rand.normal())(0)
        with pytest.raises(TypeError, match="uniform dtype"):
            jp.randomized(lambda: jp.rand.uniform((2,), jnp.int32))(KEY)

    @chex.variants(with_jit=True, without_jit=True)
    def test_concrete_array_arguments_are_checked_like_the_explicit_sampler(self):
        # Concrete array arguments (NumPy values, jax arrays made outside) get the explicit
        # sampler's value checks, even where the bound operand is later batched or traced.
        explicit = "randint maxval must lie in \\[-128, 128\\] for dtype int8"
        with pytest.raises(ValueError, match=explicit):
            jp.randint(KEY, (2,), 0, np.int32(300), jnp.int8)
        outside = jnp.array([5, 300])
        draws = {
            "numpy scalar": lambda: jp.rand.randint((2,), 0, np.int32(300), jnp.int8),
            "numpy array under vmap": lambda: jax.vmap(
                lambda i: jp.rand.randint((2,), 0, np.array([5, 300]), jnp.int8))(jnp.arange(2)),
            "jax array in a scan under vmap": lambda: jax.vmap(lambda i: lax.scan(
                lambda c, _: (c, jp.rand.randint((2,), 0, outside, jnp.int8)), 0, None,
                length=2)[1])(jnp.arange(2)),
        }
        for name, draw in draws.items():
            with self.subTest(name), pytest.raises(ValueError, match=explicit):
                self.variant(jp.randomized(draw))(KEY)
        with pytest.raises(ValueError, match="truncated_normal accepts bounds with lower <= upper"):
            self.variant(jp.randomized(lambda: jax.vmap(
                lambda i: jp.rand.truncated_normal(np.float32(1.0), np.float32(0.0)))(
                    jnp.arange(2))))(KEY)
        # Traced bounds cannot be checked; they are clipped, as by the explicit sampler.
        model = jp.randomized(lambda hi: jax.vmap(
            lambda i: jp.rand.randint((64,), 0, hi, jnp.int8))(jnp.arange(2)))
        out = np.asarray(self.variant(model)(KEY, jnp.int32(300)))
        self.assertTrue((out >= 0).all() and out.max() > 64)
        (site,) = model.sites(jnp.int32(300))
        want = jax.vmap(lambda l: jax.jit(jp.randint, static_argnums=(1, 4))(
            site.state(KEY).split(l), (64,), 0, jnp.int32(300), jnp.int8))(jnp.arange(2))
        np.testing.assert_array_equal(out, want)


# Every keyless sampler is one generic wrapper of its explicit sampler (jaxpmac/rand.py): three of
# them by default (array and static parameters, one and two words per value), the rest in the
# slow run.
@pytest.mark.parametrize("which", ["first three", pytest.param("the rest", marks=pytest.mark.slow)])
def test_keyless_derived_samplers_draw_what_the_explicit_ones_draw_at_their_sites(which):
    """The samplers of jaxpmac/_samplers/_derived_continuous.py, keyless: each site's draw is the
    explicit sampler on the site's state (parameters passed as arrays and as static values)."""
    keyless = [
        (lambda: jp.rand.t(jnp.array([2.0, 9.0])), lambda s: jp.t(s, jnp.array([2.0, 9.0]))),
        (lambda: jp.rand.lognormal(0.5, (3,)), lambda s: jp.lognormal(s, 0.5, (3,))),
        (lambda: jp.rand.wald(2.0, (2,)), lambda s: jp.wald(s, 2.0, (2,))),
        (lambda: jp.rand.chisquare(3.0, (2,)), lambda s: jp.chisquare(s, 3.0, (2,))),
        (lambda: jp.rand.f(2.0, jnp.ones(2)), lambda s: jp.f(s, 2.0, jnp.ones(2))),
        (lambda: jp.rand.loggamma(0.5, (2,)), lambda s: jp.loggamma(s, 0.5, (2,))),
        (lambda: jp.rand.pareto(2.0, (2,)), lambda s: jp.pareto(s, 2.0, (2,))),
        (lambda: jp.rand.weibull_min(1.0, 2.0, (2,)), lambda s: jp.weibull_min(s, 1.0, 2.0, (2,))),
        (lambda: jp.rand.rayleigh(1.0, (2,)), lambda s: jp.rayleigh(s, 1.0, (2,))),
        (lambda: jp.rand.maxwell((2,)), lambda s: jp.maxwell(s, (2,))),
        (lambda: jp.rand.double_sided_maxwell(0.0, 1.0, (2,)),
         lambda s: jp.double_sided_maxwell(s, 0.0, 1.0, (2,))),
        (lambda: jp.rand.generalized_normal(1.5, (2,)),
         lambda s: jp.generalized_normal(s, 1.5, (2,))),
        (lambda: jp.rand.triangular(0.0, 0.5, 1.0, (2,)),
         lambda s: jp.triangular(s, 0.0, 0.5, 1.0, (2,))),
    ]
    names = ["t", "lognormal", "wald", "chisquare", "f", "loggamma", "pareto", "weibull_min",
             "rayleigh", "maxwell", "double_sided_maxwell", "generalized_normal", "triangular"]
    keyless, names = ((keyless[:3], names[:3]) if which == "first three"
                      else (keyless[3:], names[3:]))
    model = jp.randomized(lambda: [draw() for draw, _ in keyless])
    sites = model.sites()
    assert [site.sampler for site in sites] == names
    # The explicit draws in one program too (each alone, eager, compiled its own).
    explicit = jax.jit(lambda: [draw(site.state(KEY)) for site, (_, draw) in zip(sites, keyless)])
    for got, want in zip(jax.jit(model)(KEY), explicit()):
        np.testing.assert_allclose(got, want, rtol=4e-6)
