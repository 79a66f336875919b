"""``jaxpmac.state_of``: from a ``key<pmac>`` back to the state it names.

Round trips both ways (``state_of(as_jax_key(s))`` draws what ``s`` draws; ``as_jax_key(
state_of(k))`` is ``k``), on keys from every source (``as_jax_key``, ``jax.random.key(...,
impl=...)``, ``split``, ``fold_in``), concrete and traced, under ``jit`` and ``vmap``; the
errors for other keys; and the note of docs/interop.md on ``jax.random``'s samplers over
jaxpmac bits.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from conftest import param

# Word counts across the block boundaries (4 words a block): empty, partial, full, 5th, 9th.
UID_CASES = [tuple(range(11, 11 + 7 * n, 7)) for n in (0, 3, 4, 5, 9)]

DRAWS = {
    "bits": lambda s: jp.bits(s, (9,)),
    "normal": lambda s: jp.normal(s, (5,)),
    "uniform": lambda s: jp.uniform(s, (5,), minval=-1.0, maxval=2.0),
    "randint": lambda s: jp.randint(s, (5,), 0, 100),
    "bernoulli": lambda s: jp.bernoulli(s, 0.3, (5,)),
    "exponential": lambda s: jp.exponential(s, (5,)),
    "truncated_normal": lambda s: jp.truncated_normal(s, -1.0, 2.0, (5,)),
    "categorical": lambda s: jp.categorical(s, jnp.log(jnp.arange(1.0, 5.0)), shape=(5,)),
}


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


# Every sampler reads a state_of state as any other state: by default bits at every word count,
# and one draw of each kind of map (a float map: uniform, normal; an integer one: randint) of
# the empty message's key; the other draws and counts (the same state, another map of its
# stream) in the slow run.
DRAWS_AT_EVERY_WORD_COUNT = ("bits",)
DRAWS_BY_DEFAULT = ("bits", "uniform", "normal", "randint")


def _draw_case(name, uids):
    by_default = (name in DRAWS_AT_EVERY_WORD_COUNT
                  or (name in DRAWS_BY_DEFAULT and uids == UID_CASES[0]))
    return param(name, uids, id=f"{name}-uids{UID_CASES.index(uids)}", slow=not by_default)


@pytest.mark.parametrize("name, uids", [_draw_case(name, uids) for uids in UID_CASES
                                        for name in DRAWS])
def test_state_of_a_key_draws_what_its_state_draws(name, uids):
    draw = DRAWS[name]
    s = jp.key(42).split_static("model").split(*uids)
    k = jp.as_jax_key(s)
    expected = draw(s)
    assert same(draw(jp.state_of(k)), expected)                           # concrete key
    assert same(jax.jit(lambda k: draw(jp.state_of(k)))(k), expected)     # traced key


@pytest.mark.parametrize("uids", UID_CASES)
def test_split_of_a_keys_state_is_fold_in(uids):
    s = jp.key(7).split(*uids)
    k = jp.as_jax_key(s)

    @jax.jit
    def both(k):
        a = jp.normal(jp.state_of(k).split(3, 2**40 + 1), (4,))
        b = jp.normal(jp.state_of(jax.random.fold_in(k, 3)).split(2**40 + 1), (4,))
        return a, b

    a, b = both(k)
    assert same(a, jp.normal(s.split(3, 2**40 + 1), (4,)))
    assert same(b, a)


def test_keys_from_jax_random_key_split_and_fold_in():
    for impl in (jp.prng_impl, "pmac"):
        k = jax.random.key(5, impl=impl)
        assert same(jp.normal(jp.state_of(k), (3,)), jp.normal(jp.key(5), (3,)))
    k = jax.random.key(5, impl="pmac")
    children = jax.random.split(k, 3)
    assert same(jp.uniform(jp.state_of(children[2]), (3,)), jp.uniform(jp.key(5).split(2), (3,)))
    assert same(jp.uniform(jp.state_of(jax.random.fold_in(k, 9)), (3,)),
                jp.uniform(jp.key(5).split(9), (3,)))


def test_a_batch_of_keys_is_a_batched_state_for_vmap():
    s = jp.key(1).split_static("batch")
    keys = jax.random.split(jp.as_jax_key(s), (2, 3))
    states = jp.state_of(keys)
    drawn = jax.jit(jax.vmap(jax.vmap(lambda t: jp.normal(t, (2,)))))(states)
    expected = np.stack([jp.normal(s.split(i), (2,)) for i in range(6)]).reshape(2, 3, 2)
    assert same(drawn, expected)
    # Under vmap of keys, state_of sees one traced key per lane.
    lanes = jax.vmap(lambda k: jp.normal(jp.state_of(k), (2,)))(keys.reshape(-1))
    assert same(lanes, expected.reshape(6, 2))
    with pytest.raises(ValueError, match=r"keys of shape \(2, 3\).*jax.vmap"):
        jp.normal(states, (2,))


@pytest.mark.parametrize("uids", UID_CASES)
def test_as_jax_key_of_state_of_is_the_key(uids):
    k = jax.random.fold_in(jax.random.key(3, impl="pmac"), 4)
    for uid in uids:
        k = jax.random.fold_in(k, uid)
    assert same(jax.random.key_data(jp.as_jax_key(jp.state_of(k))), jax.random.key_data(k))
    traced = jax.jit(lambda k: jax.random.key_data(jp.as_jax_key(jp.state_of(k))))(k)
    assert same(traced, jax.random.key_data(k))
    keys = jax.random.split(k, 4)
    assert same(jax.random.key_data(jp.as_jax_key(jp.state_of(keys))), jax.random.key_data(keys))


def test_split_static_of_a_keys_state_is_a_fixed_new_message():
    s = jp.key(0)
    st = jp.state_of(jp.as_jax_key(s))
    sub = st.split_static("sub")
    assert type(sub) is jp.RNGState                 # a plain state again
    assert same(jp.bits(sub, (4,)), jp.bits(jax.jit(lambda k: jp.state_of(k).split_static(
        "sub"))(jp.as_jax_key(s)), (4,)))
    assert not same(jp.bits(sub, (4,)), jp.bits(s.split_static("sub"), (4,)))
    # gamma below 1 reads a static sub-stream: fixed values, jit or not.
    k = jp.as_jax_key(s)
    eager = jp.gamma(jp.state_of(k), 0.5, (6,))
    assert same(jax.jit(lambda k: jp.gamma(jp.state_of(k), 0.5, (6,)))(k), eager)


def test_states_of_equal_concrete_keys_are_equal():
    k = jax.random.key(9, impl="pmac")
    assert jp.state_of(k) == jp.state_of(jax.random.wrap_key_data(jax.random.key_data(k),
                                                                  impl="pmac"))
    assert jp.state_of(k) != jp.state_of(jax.random.fold_in(k, 1))
    assert jp.state_of(k) != jp.key(9)


@pytest.mark.parametrize("bad,received", [
    (jax.random.key(0), "impl threefry2x32"),
    (jax.random.PRNGKey(0), "array of dtype uint32 and shape (2,)"),
    (jp.key(0), "RNGState"),
    (3, "int 3"),
])
def test_state_of_names_what_it_accepts_and_what_it_got(bad, received):
    with pytest.raises(TypeError, match="state_of key accepts a typed jax.random key of "
                                        "jaxpmac.prng_impl") as error:
        jp.state_of(bad)
    assert received in str(error.value)


def test_samplers_given_a_key_say_to_call_state_of():
    with pytest.raises(TypeError, match=r"normal accepts a jaxpmac RNGState .* but was given "
                                        r"a jax.random key<pmac>: pass jaxpmac.state_of\(key\)"):
        jp.normal(jax.random.key(0, impl="pmac"), (2,))
    with pytest.raises(TypeError, match="but was given a jax.random key of impl threefry2x32"):
        jp.uniform(jax.random.key(0), (2,))


def test_jax_random_samplers_over_pmac_bits():
    """docs/interop.md: jax.random's samplers run their own algorithms on jaxpmac's bits, so
    bits, uniform on [0, 1) and bernoulli equal jaxpmac's; normal only in some values."""
    s = jp.key(3).split_static("x")
    k = jp.as_jax_key(s)
    n = 4096
    assert same(jax.random.bits(k, (n,)), jp.bits(s, (n,)))
    assert same(jax.random.uniform(k, (n,)), jp.uniform(s, (n,)))
    assert same(jax.random.bernoulli(k, 0.3, (n,)), jp.bernoulli(s, 0.3, (n,)))
    equal = np.mean(np.asarray(jax.random.normal(k, (n,))) == np.asarray(jp.normal(s, (n,))))
    assert 0.0 < equal < 0.2
    assert not same(jax.random.randint(k, (n,), 0, 10), jp.randint(s, (n,), 0, 10))
    assert not same(jax.random.uniform(k, (n,), minval=-2.0, maxval=3.0),
                    jp.uniform(s, (n,), minval=-2.0, maxval=3.0))


# Final tweak padded, then full (in the slow run: a full block's final tweak of a traced key's
# state is drawn by default in test_state_of_a_key_draws_what_its_state_draws[bits-uids2]).
@pytest.mark.parametrize("uids", [(), pytest.param((1, 2, 3, 4), marks=pytest.mark.slow)])
def test_traced_keys_state_under_x64_and_the_accelerator_lowerings(uids):
    """The final tweak of a traced key's state is a value: through the native uint64 words
    (x64) and the GPU/TPU lowerings (forced on the CPU) too."""
    s = jp.key(7).split(*uids)
    k = jp.as_jax_key(s)
    with jax.enable_x64(True):
        assert same(jax.jit(lambda k: jp.bits(jp.state_of(k), (5,), jnp.uint64))(k),
                    jp.bits(s, (5,), jnp.uint64))
    for lowering in ("elementwise", "elementwise_pairs"):
        with jp.force_lowering(lowering):
            assert same(jax.jit(lambda k: jp.normal(jp.state_of(k), (5,)))(k),
                        jax.jit(lambda s: jp.normal(s, (5,)))(s))
