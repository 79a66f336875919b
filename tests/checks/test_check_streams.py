"""``jp.check_streams``: every way the issue lists of drawing one stream twice is found, with
both source lines; distinct streams, disjoint slices and ``cond`` branches are not; traced words
that may be equal are "cannot tell"; ``jax.random`` draws from one key (``jp.as_jax_key``'s or
any other) are found too; the README's and the notebooks' patterns raise nothing."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import pytest

import jaxpmac as jp

S = jp.key(20261126).split_static("check streams")


def _kinds(f, *args):
    return [finding.kind for finding in jp.check_streams(f, *args)]


@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit], ids=["plain", "jit"])
def test_two_draws_of_one_state_are_found_with_both_lines(wrap):
    def model():
        a = jp.normal(S, (4,))
        b = jp.uniform(S, (4,))
        return a, b
    first = f"{__file__}:{inspect.getsourcelines(model)[1] + 1}"
    second = f"{__file__}:{inspect.getsourcelines(model)[1] + 2}"
    (finding,) = jp.check_streams(wrap(model))
    assert (finding.kind, finding.first, finding.second) == ("same stream", first, second)
    assert "jp.normal and jp.uniform draw from the same state" in finding.why


def test_a_state_built_twice_from_one_traced_seed_is_one_state():
    assert _kinds(lambda seed: (jp.normal(jp.key(seed), ()), jp.normal(jp.key(seed), ())),
                  jnp.uint32(3)) == ["same stream"]


def test_distinct_labels_disjoint_slices_and_cond_branches_are_fine():
    assert _kinds(lambda: (jp.normal(S.split_static("a"), (4,)),
                           jp.normal(S.split_static("b"), (4,)))) == []
    assert _kinds(lambda: (jp.normal(S, (4,)), jp.normal(S, (4,), offset=4))) == []
    assert _kinds(lambda p: jax.lax.cond(p, lambda: jp.normal(S, (2,)),
                                         lambda: jp.uniform(S, (2,))), True) == []
    assert _kinds(lambda: (jp.normal(S.split(1), (4,)), jp.normal(S.split(2), (4,)))) == []


def test_overlapping_slices_of_one_stream_are_found():
    (finding,) = jp.check_streams(lambda: (jp.normal(S, (4,)), jp.normal(S, (4,), offset=2)))
    assert finding.kind == "overlapping offsets" and "[0, 4) and [2, 6)" in finding.why


def test_a_state_that_does_not_vary_over_vmap_lanes_is_found():
    (finding,) = jp.check_streams(lambda xs: jax.vmap(lambda x: x + jp.normal(S, ()))(xs),
                                  jnp.zeros(3))
    assert finding.kind == "same in every vmap lane" and finding.second is None
    assert _kinds(lambda: jax.vmap(lambda i: jp.normal(S.split(i), ()))(jnp.arange(3))) == []


@pytest.mark.parametrize("loop", ["scan", "fori_loop", "while_loop"])
def test_a_state_that_a_loop_does_not_change_is_found(loop):
    def same(_):
        if loop == "scan":
            return jax.lax.scan(lambda c, x: (c + jp.normal(S, ()), None), 0.0, None, length=3)
        if loop == "fori_loop":
            return jax.lax.fori_loop(0, 3, lambda t, c: c + jp.normal(S, ()), 0.0)
        return jax.lax.while_loop(lambda c: c[0] < 3,
                                  lambda c: (c[0] + 1, c[1] + jp.normal(S, ())), (0, 0.0))

    def per_step(_):
        if loop == "scan":
            return jax.lax.scan(lambda c, t: (c + jp.normal(S.split(t), ()), None), 0.0,
                                jnp.arange(3))
        if loop == "fori_loop":
            return jax.lax.fori_loop(0, 3, lambda t, c: c + jp.normal(S.split(t), ()), 0.0)
        return jax.lax.while_loop(lambda c: c[0] < 3,
                                  lambda c: (c[0] + 1, c[1] + jp.normal(S.split(c[0]), ())),
                                  (0, 0.0))
    assert _kinds(same, 0.0) == ["same every iteration"]
    assert _kinds(per_step, 0.0) == []


def test_traced_words_that_may_be_equal_cannot_be_told():
    (finding,) = jp.check_streams(lambda i, j: (jp.normal(S.split(i), ()),
                                                jp.normal(S.split(j), ())), 1, 2)
    assert finding.kind == "cannot tell"
    assert _kinds(lambda i: (jp.normal(S.split(i), ()), jp.normal(S.split(i), ())),
                  1) == ["same stream"]


def test_a_jitted_function_called_twice_holds_two_values():
    # JAX traces the function once; each call's values are its own.
    draw = jax.jit(lambda i: jp.normal(S.split(i * 2), ()))
    assert _kinds(lambda i, j: (draw(i), draw(j)), 1, 2) == ["cannot tell"]
    assert _kinds(lambda i: (draw(i), draw(i)), 1) == ["same stream"]


KEYS = {"pmac (as_jax_key)": lambda: jp.as_jax_key(S), "threefry": lambda: jax.random.key(7)}


@pytest.mark.parametrize("make_key", KEYS.values(), ids=KEYS.keys())
def test_a_jax_random_key_drawn_twice_is_found_with_both_lines(make_key):
    key = make_key()

    def model():
        a = jax.random.normal(key, (4,))
        b = jax.random.uniform(key, (4,))
        return a, b
    first = f"{__file__}:{inspect.getsourcelines(model)[1] + 1}"
    second = f"{__file__}:{inspect.getsourcelines(model)[1] + 2}"
    (finding,) = jp.check_streams(model)
    assert (finding.kind, finding.first, finding.second) == ("same stream", first, second)
    assert "two jax.random draws from the same key" in finding.why
    # The same data folded in twice is the same key; a jitted caller changes nothing.
    assert _kinds(jax.jit(lambda: (jax.random.normal(jax.random.fold_in(key, 1)),
                                   jax.random.bernoulli(jax.random.fold_in(key, 1))))) == [
        "same stream"]


@pytest.mark.parametrize("make_key", KEYS.values(), ids=KEYS.keys())
def test_split_and_folded_keys_and_jax_random_samplers_raise_nothing(make_key):
    key = make_key()

    def model(key):
        k1, k2 = jax.random.split(key)
        ks = jax.random.split(k2, 9)
        return (jax.random.normal(k1, (4,)), jax.random.normal(jax.random.fold_in(key, 1)),
                jax.random.normal(jax.random.fold_in(key, 2)),
                jax.random.randint(ks[0], (3,), 0, 5), jax.random.choice(ks[1], 5, (3,)),
                jax.random.permutation(ks[2], 10), jax.random.gamma(ks[3], 2.0, (3,)),
                jax.random.beta(ks[4], 2.0, 3.0, (3,)), jax.random.dirichlet(ks[5], jnp.ones(3)),
                jax.random.t(ks[6], 3.0, (3,)), jax.random.truncated_normal(ks[7], -1, 1, (3,)),
                jax.random.orthogonal(ks[8], 3))
    assert _kinds(model, key) == []
    assert _kinds(jax.jit(model), key) == []


def test_a_key_that_a_loop_does_not_change_is_found():
    key = jp.as_jax_key(S)
    (finding,) = jp.check_streams(lambda: jax.lax.scan(
        lambda c, t: (c + jax.random.normal(key, ()), None), 0.0, jnp.arange(3)))
    assert finding.kind == "same every iteration" and "Split the key" in finding.why
    assert _kinds(lambda: jax.lax.scan(
        lambda c, t: (c + jax.random.normal(jax.random.fold_in(key, t), ()), None), 0.0,
        jnp.arange(3))) == []


def test_randomized_functions_are_checked_at_their_sites():
    model = jp.randomized(lambda x: x + jp.rand.normal(x.shape) + jp.rand.uniform(x.shape))
    assert _kinds(model, S, jnp.zeros(3)) == []
    # vmap outside the randomized function: the pass sees no lanes, every example the same.
    findings = jp.check_streams(lambda xs: jax.vmap(model, in_axes=(None, 0))(S, xs),
                                jnp.zeros((4, 3)))
    assert [f.kind for f in findings] == ["same in every vmap lane"] * 2
    assert "(jp.rand.normal, implicit site @" in findings[0].first


def test_the_readme_and_notebook_patterns_raise_nothing():
    def readme_model(x):
        h = x + jp.rand.normal(x.shape)

        def step(c, _):
            return c + jp.rand.uniform(()), None
        c, _ = jax.lax.scan(step, 0.0, None, length=10)
        return h * c
    assert _kinds(jp.randomized(readme_model), jp.key(0), jnp.zeros(3)) == []

    def explicit(state, xs):
        noise = jax.vmap(lambda i, x: x + jp.normal(state.split(i), x.shape))(
            jnp.arange(xs.shape[0]), xs)
        steps = jax.lax.scan(lambda c, t: (c, jp.uniform(state.split_static("steps").split(t),
                                                         (2,))), None, jnp.arange(5))[1]
        tiles = [jp.bits(state.split_static("tiles"), (8,), offset=8 * i) for i in range(4)]
        return noise, steps, tiles
    assert _kinds(explicit, jp.key(0), jnp.zeros((3, 2))) == []


def test_the_notebooks_models_raise_nothing():
    root = jp.key(0)

    def quickstart(ids, x):
        walk_state = root.split_static("random walk")
        _, path = jax.lax.scan(
            lambda position, t: (position + jp.normal(walk_state.split(t), (3,)), position),
            jnp.zeros(3), jnp.arange(20))
        noise_state = root.split_static("augment")
        augmented = jax.vmap(lambda i, xi: xi + jp.normal(noise_state.split(i), xi.shape))(ids, x)
        s = root.split_static("samplers")
        draws = (jp.uniform(s.split(0), (8,)), jp.exponential(s.split(1), (8,)),
                 jp.gamma(s.split(2), 2.5, (8,)), jp.poisson(s.split(4), 4.0, (8,)))
        streams = jax.vmap(lambda i: jp.uniform(root.split(i), (16,)))(jnp.arange(4))
        return path, augmented, draws, streams
    assert _kinds(quickstart, jnp.arange(8), jnp.zeros((8, 5))) == []

    @jp.randomized
    def hail_matrix():
        def cell():
            return jax.lax.scan(lambda c, _: (c, jp.rand.hail_rand_int32(100)), None, None,
                                length=4)[1]
        return jax.vmap(lambda r: jax.vmap(lambda c: cell())(jnp.arange(3)))(jnp.arange(2))
    assert _kinds(hail_matrix, root) == []


def test_nothing_is_computed_and_a_non_callable_is_an_error():
    with pytest.raises(TypeError, match="check_streams accepts a callable, but was given int"):
        jp.check_streams(3)
    # Marks stay out of programs traced outside a check.
    program = jax.jit(lambda: jp.normal(S, (2,)))
    jp.check_streams(program)
    assert "jaxpmac_stream_mark" not in str(jax.make_jaxpr(program)())
