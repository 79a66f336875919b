"""Tests of ``jaxpmac.randomized`` when JAX reuses a trace: one module-level function (a
``jit``\\ ted helper, a loop body) used both inside and outside ``vmap``\\ s of one randomized
function, in either order.

JAX caches the traces of ``jit``\\ ted functions and loop bodies by function identity, so the
second use of such a function gets the jaxpr traced at the first use. A keyless draw's trace
holds no vmap lanes (each ``vmap`` adds its lane in ``draw_p``'s batching rule), so whichever use
is traced first, every lane draws from its own state: exactly
``jaxpmac.<sampler>(site.state(key).split(*lanes, *loop indices))``.
"""

from __future__ import annotations

import functools
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized
from jax import lax

import jaxpmac as jp

KEY = jp.key(11)
LENGTH = 3                       # iterations of every loop below
INSIDE, NESTED = (3,), (2, 2)    # the lanes of one vmap and of two nested vmaps


# -- module-level helpers: JAX caches their traces by identity --------------------------------

@jax.jit
def jitted_helper(x):
    return x + jp.rand.normal(())


def scan_body(c, _):
    return c + jp.rand.uniform(()), None


def fori_body(i, c):
    del i
    return c + jp.rand.uniform(())


def while_cond(c):
    return c[0] < LENGTH


def while_body(c):
    return c[0] + 1, c[1] + jp.rand.uniform(())


def map_body(x):
    return x + jp.rand.uniform(())


@jax.custom_jvp
def custom_jvp_helper(x):
    return x + jp.rand.uniform(())


@custom_jvp_helper.defjvp
def _custom_jvp_helper_jvp(primals, tangents):
    return custom_jvp_helper(primals[0]), tangents[0]


checkpointed_helper = jax.checkpoint(lambda x: x + jp.rand.uniform(()))

#: One use of each helper: ``(use, loop primitive or None, what it draws: explicit_value)``.
USES = {
    "jit": (lambda: jitted_helper(0.0), None, "normal"),
    "scan": (lambda: lax.scan(scan_body, 0.0, None, length=LENGTH)[0], "scan", "loop"),
    "fori_loop": (lambda: lax.fori_loop(0, LENGTH, fori_body, 0.0), "scan", "loop"),
    "while_loop": (lambda: lax.while_loop(while_cond, while_body, (0, 0.0))[1], "while",
                   "loop"),
    "map": (lambda: lax.map(map_body, jnp.zeros(LENGTH)).sum(), "scan", "loop"),
    "custom_jvp": (lambda: custom_jvp_helper(0.0), None, "uniform"),
    "checkpoint": (lambda: checkpointed_helper(0.0), None, "uniform"),
}
#: Uses outside any vmap, under one vmap and under two nested vmaps, traced in either order.
ORDERS = {"outside_first": ("outside", "inside", "nested"),
          "inside_first": ("nested", "inside", "outside")}
CONTEXTS = {"outside": (), "inside": INSIDE, "nested": NESTED}   # context -> lane shape


def in_context(context, use):
    """``use()`` outside a vmap, inside one or inside two nested ones."""
    if context == "outside":
        return use()
    if context == "inside":
        return jax.vmap(lambda i: use())(jnp.arange(INSIDE[0]))
    return jax.vmap(lambda i: jax.vmap(lambda j: use())(jnp.arange(NESTED[1])))(
        jnp.arange(NESTED[0]))


def reuse_model(order):
    """A randomized function using every helper of ``USES`` in each context, contexts traced in
    ``order``: ``{(context, helper): result}``. Its sites are in the same order."""
    def f():
        return {(context, name): in_context(context, USES[name][0])
                for context in order for name in USES}

    return jp.randomized(f)


def explicit_value(kind, base, lanes):
    """What a helper drawing ``kind`` gives with the explicit samplers at these lanes."""
    if kind == "normal":
        return jp.normal(base.split(*lanes))
    if kind == "loop":
        return sum(jp.uniform(base.split(*lanes, t)) for t in range(LENGTH))
    return jp.uniform(base.split(*lanes))


@functools.lru_cache(maxsize=None)
def explicit_results(order):
    """``{(context, helper): explicit result}`` for ``reuse_model(order)``, from its sites (which
    are in the model's order of uses). One jitted computation: compiling dominates, and each
    site's state is a distinct compile-time constant (its static words)."""
    sites = reuse_model(order).sites()
    uses = [(context, name) for context in order for name in USES]
    assert len(sites) == len(uses), (len(sites), len(uses))

    def compute():
        results = {}
        for site, (context, name) in zip(sites, uses):
            shape = CONTEXTS[context]
            lanes = jnp.asarray(list(np.ndindex(*shape)), jnp.int32).reshape(
                math.prod(shape), len(shape))
            base, kind = site.state(KEY), USES[name][2]
            values = jax.vmap(lambda l: explicit_value(kind, base, list(l)))(lanes)
            results[context, name] = values.reshape(shape)
        return results

    return jax.jit(compute)()


class TraceReuseTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(ORDERS.items())
    def test_reused_helpers_draw_per_lane(self, order):
        model = reuse_model(order)
        results = self.variant(model)(KEY)
        # Every lane of every use draws its own value.
        values = np.concatenate([np.ravel(v) for v in results.values()])
        self.assertEqual(len(np.unique(values)), len(USES) * (1 + 3 + 4))
        # Exactly the explicit draws of each site's state at its lanes (and loop indices).
        sites = model.sites()
        uses = [(context, name) for context in order for name in USES]
        self.assertEqual(len(sites), len(uses))
        for site, (context, name) in zip(sites, uses):
            _, loop, _ = USES[name]
            shape = CONTEXTS[context]
            lanes = tuple(f"vmap lane {j}" for j in range(len(shape)))
            self.assertEqual(site.uid_names[:len(lanes)], lanes, (context, name))
            self.assertEqual([u.split()[0] for u in site.uid_names[len(lanes):]],
                             [loop] if loop else [], (context, name))
        want = explicit_results(order)
        for key, result in results.items():
            np.testing.assert_allclose(result, want[key], rtol=1e-6, err_msg=str(key))

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_inside_scan_inside_vmap_orders_lanes_then_iterations(self):
        def inner(c, _):
            return c, jax.vmap(lambda j: jp.rand.uniform())(jnp.arange(3))

        def f():
            return jax.vmap(lambda i: lax.scan(inner, 0.0, None, length=2)[1])(jnp.arange(2))

        model = jp.randomized(f)
        out = self.variant(model)(KEY)                         # (outer lane, t, inner lane)
        (site,) = model.sites()
        self.assertEqual(site.uid_names[:2], ("vmap lane 0", "vmap lane 1"))
        self.assertIn("scan iteration", site.uid_names[2])
        want = [[[jp.uniform(site.state(KEY).split(o, i, t)) for i in range(3)]
                 for t in range(2)] for o in range(2)]
        np.testing.assert_array_equal(out, np.array(want, np.float32))

    def test_reused_trace_outside_randomized_still_raises(self):
        # The helper's jaxpr traced during a randomized call is not reused by a plain call.
        jp.randomized(lambda: jax.vmap(lambda i: jitted_helper(0.0))(jnp.arange(2)))(KEY)
        with pytest.raises(RuntimeError, match="jaxpmac.rand.normal.*randomized"):
            jitted_helper(0.0)
