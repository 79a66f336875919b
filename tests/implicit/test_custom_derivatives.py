"""Custom derivative rules under ``jp.randomized`` (issue 32, point 2): a ``custom_vjp`` or
``custom_jvp`` function that draws keyless numbers draws as everywhere, and differentiating
through it is a NotImplementedError when traced, never the plain derivative in place of the
user's rule; custom rules of functions that do not draw are kept."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

ROOT = jp.key(20261126).split_static("custom derivatives")


@jax.custom_vjp
def noisy_vjp(x):
    return 2 * x + jp.rand.uniform()


noisy_vjp.defvjp(lambda x: (noisy_vjp(x), None), lambda _, g: (3 * g,))


@jax.custom_jvp
def noisy_jvp(x):
    return 2 * x + jp.rand.uniform()


@noisy_jvp.defjvp
def _noisy_jvp_rule(primals, tangents):
    return noisy_jvp(primals[0]), 3 * tangents[0]


@pytest.mark.parametrize("noisy", [noisy_vjp, noisy_jvp], ids=["custom_vjp", "custom_jvp"])
def test_a_drawing_custom_derivative_function_draws_as_elsewhere(noisy):
    model = jp.randomized(lambda x: noisy(x))
    (site,) = model.sites(1.0)
    want = 2.0 + jp.uniform(site.state(ROOT))
    np.testing.assert_array_equal(model(ROOT, 1.0), want)
    np.testing.assert_array_equal(jax.jit(model)(ROOT, 1.0), want)
    np.testing.assert_array_equal(jax.vmap(model, in_axes=(None, 0))(ROOT, jnp.ones(2)),
                                  jnp.full(2, want))


@pytest.mark.parametrize("noisy", [noisy_vjp, noisy_jvp], ids=["custom_vjp", "custom_jvp"])
@pytest.mark.parametrize("derivative", ["grad", "jvp"])
def test_its_derivative_is_refused_rather_than_silently_changed(noisy, derivative):
    model = jp.randomized(lambda x: noisy(x))
    take = {"grad": lambda: jax.grad(model, argnums=1)(ROOT, 1.0),
            "jvp": lambda: jax.jvp(lambda x: model(ROOT, x), (1.0,), (1.0,))}[derivative]
    with pytest.raises(NotImplementedError, match="custom derivative rule .* draws keyless "
                                                  "random numbers"):
        take()


def test_custom_rules_of_functions_that_do_not_draw_are_kept():
    @jax.custom_jvp
    def tripled_slope(x):
        return x

    tripled_slope.defjvp(lambda primals, tangents: (primals[0], 3 * tangents[0]))
    model = jp.randomized(lambda x: tripled_slope(x) + jp.rand.normal())
    assert float(jax.grad(model, argnums=1)(ROOT, 1.0)) == 3.0
