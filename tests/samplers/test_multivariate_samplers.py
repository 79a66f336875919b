"""Behaviour of ``rademacher``, ``geometric``, ``multinomial``, ``orthogonal`` and ``ball``: shapes,
dtypes, jit/vmap, fixed stream positions, edge values, and the documented algorithms.

Goodness of fit is in test_sampler_statistics.py; the bit-level oracles of ``rademacher`` and
``geometric`` in test_sampler_oracle_float.py.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized

import jaxpmac as jp
import reference_samplers as rs
from conftest import slow_except, slow_where
from jaxpmac._samplers import _discrete_multivariate

P3 = jnp.array([0.2, 0.3, 0.5])
# name -> (draw of (state, batch shape), expected shape of a (2, 3) batch, dtype with x64 off)
VECTOR_SAMPLERS = {
    "multinomial": (lambda s, sh: jp.multinomial(s, 20.0, P3, shape=sh), (2, 3, 3),
                    jnp.float32),
    "multinomial_large": (lambda s, sh: jp.multinomial(s, 5000.0, P3, shape=sh), (2, 3, 3),
                          jnp.float32),
    "orthogonal": (lambda s, sh: jp.orthogonal(s, 4, sh), (2, 3, 4, 4), jnp.float32),
    "orthogonal_tall": (lambda s, sh: jp.orthogonal(s, 5, sh, m=2), (2, 3, 5, 2), jnp.float32),
    "orthogonal_wide": (lambda s, sh: jp.orthogonal(s, 2, sh, m=5), (2, 3, 2, 5), jnp.float32),
    "ball": (lambda s, sh: jp.ball(s, 3, 2, sh), (2, 3, 3), jnp.float32),
    "ball_p0.6": (lambda s, sh: jp.ball(s, 4, 0.6, sh), (2, 3, 4), jnp.float32),
}


# The second form of one sampler (ball's other p, orthogonal's wide and tall) in the slow run.
OTHER_FORMS = ("ball_p0.6", "orthogonal_tall", "orthogonal_wide")
# multinomial's program with a larger n (other values of the same binomials' branches).
LARGER_N = ("multinomial_large",)


def _check_shape_dtype_and_jit(variant, name):
    sample, shape, dtype = VECTOR_SAMPLERS[name]
    state = jp.key(11).split_static(name)
    out = variant(lambda s: sample(s, (2, 3)))(state)
    assert out.shape == shape and out.dtype == jnp.dtype(dtype)
    # Bit for bit: every product is rounded on its own and the parameters are opaque to
    # XLA's constant folding, so the program around a draw does not move its values.
    np.testing.assert_array_equal(np.asarray(out), np.asarray(sample(state, (2, 3))))


# The other forms and the larger n in the slow run (22 s), as in the tests below.
@slow_where(lambda name: any(name.startswith(f"test_shape_dtype_and_jit_agrees_{sampler}__")
                             for sampler in OTHER_FORMS + LARGER_N))
class VectorSamplerTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(*[(name, name) for name in VECTOR_SAMPLERS])
    def test_shape_dtype_and_jit_agrees(self, name):
        _check_shape_dtype_and_jit(self.variant, name)


@pytest.mark.parametrize("name", slow_except(sorted(VECTOR_SAMPLERS),
                                             keep=set(VECTOR_SAMPLERS) - set(OTHER_FORMS)
                                             - set(LARGER_N)))
def test_batch_element_i_is_a_fixed_stream_position(name):
    sample, _, _ = VECTOR_SAMPLERS[name]
    state = jp.key(5).split_static("positions")
    long = np.asarray(sample(state, (8,)))
    np.testing.assert_array_equal(np.asarray(sample(state, (2, 3))).reshape(long[:6].shape),
                                  long[:6])


# One sampler of each family by default: rademacher and geometric for multinomial's
# (_discrete_multivariate) and orthogonal for ball's (_random_geometry). multinomial and ball
# (16 s: loops of binomials, and gamma's, under vmap; test_samplers vmaps gamma by default) in
# the slow run, with the other forms and the larger n.
@pytest.mark.parametrize("name", slow_except(
    sorted(VECTOR_SAMPLERS) + ["rademacher", "geometric"],
    keep={"orthogonal", "rademacher", "geometric"}))
def test_vmap_over_states_equals_each_state(name):
    if name == "rademacher":
        sample = lambda s: jp.rademacher(s, (40,))
    elif name == "geometric":
        sample = lambda s: jp.geometric(s, jnp.array([0.05, 0.5, 1.0]))
    else:
        sample = lambda s: VECTOR_SAMPLERS[name][0](s, (2,))
    states = jax.vmap(lambda i: jp.key(0).split(i))(jnp.arange(3))
    batched = np.asarray(jax.vmap(sample)(states))
    for i in range(3):
        np.testing.assert_array_equal(batched[i], np.asarray(sample(jp.key(0).split(i))))


# geometric by default; multinomial and ball (about 20 s of compiling) in the slow run: their
# parameters closed over by jit are checked by default in VectorSamplerTest (jit against no
# jit, bit for bit), by the same means (``at_run_time``).
@pytest.mark.parametrize("name", slow_except(("geometric", "multinomial", "ball"),
                                             keep=("geometric",)))
def test_parameters_traced_or_concrete_give_the_same_values(name):
    """XLA folds functions of constants (a parameter closed over by jit) with its own
    evaluator, whose log/rsqrt/pow round differently; the samplers keep parameters opaque."""
    state = jp.key(3).split_static("traced")
    draws = {
        "geometric": (lambda p: jp.geometric(state, p, (64,)), jnp.float32(0.013)),
        "multinomial": (lambda p: jp.multinomial(state, 300.0, p, shape=(16,)),
                        jnp.array([0.1, 0.6, 0.3])),
        "ball": (lambda p: jp.ball(state, 4, p, (32,)), jnp.float32(0.45)),
    }
    draw, param = draws[name]
    closed = jax.jit(lambda: draw(param))()
    traced = jax.jit(draw)(param)
    np.testing.assert_array_equal(np.asarray(closed), np.asarray(traced), err_msg=name)
    np.testing.assert_array_equal(np.asarray(draw(param)), np.asarray(traced), err_msg=name)


# -- rademacher -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [jnp.int8, jnp.int32, jnp.float32, jnp.bfloat16])
def test_rademacher_is_one_bit_per_element(dtype):
    state = jp.key(9)
    words = np.asarray(jp.bits(state, (3,), jnp.uint32)).astype(np.int64)
    expected = [1 if (words[i // 32] >> (i % 32)) & 1 else -1 for i in range(70)]
    got = jp.rademacher(state, (7, 10), dtype)
    assert got.dtype == jnp.dtype(dtype)
    assert np.asarray(got.astype(jnp.float32)).reshape(-1).tolist() == expected


# -- geometric --------------------------------------------------------------------------------

def test_geometric_edge_values_and_clamping():
    state = jp.key(2)
    p = jnp.array([1.0, 0.0, -0.1, 1.1, jnp.nan, 1e-30])
    # Traced: a concrete p outside [0, 1] is a ValueError (test_domains.py).
    np.testing.assert_array_equal(jax.jit(lambda p: jp.geometric(state, p))(p),
                                  [1, 2 ** 31 - 1, -1, -1, -1, 2 ** 31 - 1])
    np.testing.assert_array_equal(jp.geometric(state, 1.0, (50,), jnp.int8), 1)
    small = np.asarray(jp.geometric(state, 1e-3, (200,), jnp.int8))
    assert small.max() == 127 and small.min() >= 1
    np.testing.assert_array_equal(
        jax.jit(lambda p: jp.geometric(state, p, (3,), jnp.uint8))(-1.0), 255)
    assert jp.geometric(state, jnp.full((2, 1), 0.5), (2, 3)).shape == (2, 3)


def test_geometric_is_inversion_of_log_u():
    state = jp.key(4)
    p = np.float32(0.37)
    expected, ambiguous = rs.geometric(rs.Message(4), [float(p)] * 500, 2.0 ** -17)
    assert not ambiguous
    assert np.asarray(jp.geometric(state, p, (500,))).tolist() == expected


def test_geometric_float64_with_x64():
    with jax.enable_x64(True):
        x = jp.geometric(jp.key(1), 0.25, (1000,))
        assert x.dtype == jnp.int64 and int(x.min()) >= 1


# -- multinomial ------------------------------------------------------------------------------

def test_multinomial_counts_add_up_to_n_exactly():
    state = jp.key(7)
    n = jnp.array([0.0, 1.0, 17.0, 1e3, 1e6])
    p = jnp.array([0.05, 0.0, 0.6, 0.35, 1e-7])
    x = np.asarray(jp.multinomial(state, n[:, None], p, shape=(5, 40)), np.float64)
    np.testing.assert_array_equal(x.sum(-1), np.broadcast_to(np.asarray(n)[:, None], (5, 40)))
    assert (x == np.round(x)).all() and (x >= 0).all()
    np.testing.assert_array_equal(x[..., 1], 0)                # a zero weight gets nothing
    # Weights need not sum to 1; trailing zero weights get nothing either.
    y = np.asarray(jp.multinomial(state, 9.0, jnp.array([2.0, 3.0, 0.0, 0.0]), shape=(30,)))
    np.testing.assert_array_equal(y[:, 2:], 0)
    np.testing.assert_array_equal(y.sum(-1), 9)
    np.testing.assert_array_equal(jp.multinomial(state, 6, jnp.ones(1), shape=(3,)), 6)


def test_multinomial_category_j_is_a_binomial_of_its_own_sub_state():
    state = jp.key(8).split_static("multinomial")
    x = np.asarray(jp.multinomial(state, 50.0, jnp.array([0.1, 0.3, 0.6]), shape=(12,)))
    sub = state.split_static(_discrete_multivariate.MULTINOMIAL_LABEL)
    first = np.asarray(jp.binomial(sub.split(0), 50.0, np.float32(0.1) / np.float32(1.0),
                                   (12,)))
    np.testing.assert_array_equal(x[:, 0], first)
    ratio = np.float32(0.3) / (np.float32(0.3) + np.float32(0.6))
    second = np.asarray(jp.binomial(sub.split(1), jnp.asarray(50.0 - first), ratio))
    np.testing.assert_array_equal(x[:, 1], second)
    np.testing.assert_array_equal(x[:, 2], 50.0 - first - second)


def test_multinomial_invalid_rows_are_nan():
    state = jp.key(3)
    p = jnp.array([[0.2, 0.8], [-0.1, 1.0], [0.0, 0.0], [jnp.nan, 1.0], [0.5, 0.5],
                   [jnp.inf, 1.0]])
    n = jnp.array([4.0, 4.0, 4.0, 4.0, -1.0, 4.0])
    # Traced: a concrete negative or infinite weight or n is a ValueError (test_domains.py).
    x = np.asarray(jax.jit(lambda n, p: jp.multinomial(state, n, p))(n, p))
    assert np.isfinite(x[0]).all() and x[0].sum() == 4
    assert np.isnan(x[1:]).all()
    traced = jax.jit(jax.vmap(lambda n, p: jp.multinomial(state, n, p)))(n, p)
    assert np.isnan(np.asarray(traced)[1:]).all()


# The loop written out (unroll=True, the program least like the rolled one) by default; unroll=2
# (a partly unrolled loop, a program of its own: 2 s) in the slow run.
@pytest.mark.parametrize("unroll", [pytest.param(True, id="unrolled"),
                                    pytest.param(2, id="unroll_2", marks=pytest.mark.slow)])
def test_multinomial_shape_is_the_batch_shape_and_unroll_changes_nothing(unroll):
    state = jp.key(6)
    p = jnp.full((2, 4), 0.25)
    assert jp.multinomial(state, 5, p).shape == (2, 4)
    assert jp.multinomial(state, jnp.array([1.0, 2.0]), p, shape=(3, 2)).shape == (3, 2, 4)
    base = np.asarray(jp.multinomial(state, 30, p, shape=(5, 2)))
    np.testing.assert_array_equal(
        np.asarray(jp.multinomial(state, 30, p, shape=(5, 2), unroll=unroll)), base)
    half = jp.multinomial(state, 30, p, shape=(5, 2), dtype=jnp.bfloat16)
    np.testing.assert_array_equal(np.asarray(half.astype(jnp.float32)), base)


# -- orthogonal -------------------------------------------------------------------------------

# Square, tall, wide and 1 x 1 by default; the larger square (24, 24), the same program with
# more columns, in the slow run.
@pytest.mark.parametrize("n,m", [(1, 1), (4, 4), (7, 3), (3, 7),
                                 pytest.param(24, 24, marks=pytest.mark.slow)])
def test_orthogonal_is_orthonormal(n, m):
    q = np.asarray(jp.orthogonal(jp.key(n * 100 + m), n, (20,), m=m), np.float64)
    gram = q.swapaxes(-1, -2) @ q if n >= m else q @ q.swapaxes(-1, -2)
    # A few float32 eps: Gram-Schmidt with one reorthogonalisation.
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(min(n, m)), gram.shape),
                               atol=8 * 2.0 ** -23 * max(n, m) ** 0.5)


def test_orthogonal_float64_and_half_types():
    with jax.enable_x64(True):
        q = np.asarray(jp.orthogonal(jp.key(1), 12, (5,), jnp.float64))
        assert q.dtype == np.float64
        np.testing.assert_allclose(q.swapaxes(-1, -2) @ q, np.broadcast_to(np.eye(12), q.shape),
                                   atol=1e-14)
    for dtype in (jnp.float16, jnp.bfloat16):
        half = jp.orthogonal(jp.key(1), 5, (2,), dtype)
        full = jp.orthogonal(jp.key(1), 5, (2,))
        assert half.dtype == jnp.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(half), np.asarray(full.astype(dtype)))


@pytest.mark.parametrize("n,m", [(5, 5), (6, 3), (3, 6)])
def test_orthogonal_is_the_documented_gram_schmidt_of_normal_draws(n, m):
    """Bit for bit against a plain-Python float32 emulation: the order of operations is fixed,
    not XLA's or LAPACK's."""
    state = jp.key(12).split_static("gram-schmidt")
    rows, cols = max(n, m), min(n, m)
    z = np.asarray(jp.normal(state, (2, rows, cols)), np.float64)
    got = np.asarray(jp.orthogonal(state, n, (2,), m=m), np.float64)
    for b in range(2):
        expected = np.array(rs.gram_schmidt32(z[b].tolist()))
        np.testing.assert_array_equal(got[b], expected if n >= m else expected.T)


# -- ball -------------------------------------------------------------------------------------

# A Euclidean ball and a p < 1 one by default, the other dimensions and norms in the slow run.
@pytest.mark.parametrize("d,p", [(3, 2.0), (4, 0.5)] + [
    pytest.param(d, p, marks=pytest.mark.slow) for d, p in [(1, 2.0), (5, 1.0), (6, 7.0)]])
def test_ball_points_lie_in_the_unit_p_ball(d, p):
    x = np.asarray(jp.ball(jp.key(d), d, p, (2000,)), np.float64)
    norm = (np.abs(x) ** p).sum(-1) ** (1 / p)
    assert (norm <= 1 + 16 * 2.0 ** -23).all() and norm.max() > 0.9
    assert np.isfinite(x).all()


def test_ball_radius_is_u_to_the_one_over_d():
    """The p-norm of point i is ``u**(1/d)``, ``u`` the open-interval uniform of word i (to
    rounding)."""
    state = jp.key(5).split_static("radius")
    d, p = 3, 1.5
    x = np.asarray(jp.ball(state, d, p, (64,)), np.float64)
    u = np.array([rs.open_unit(w) for w in np.asarray(jp.bits(state, (64,))).tolist()])
    norm = (np.abs(x) ** p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(norm, u ** (1 / d), rtol=2e-6)


def test_ball_parameters_and_edges():
    state = jp.key(2)
    p = jnp.array([1.0, 2.0, 0.0, -1.0, jnp.inf, jnp.nan])
    # Traced: a concrete p <= 0 or inf is a ValueError (test_domains.py).
    x = np.asarray(jax.jit(lambda p: jp.ball(state, 3, p, (6,)))(p))
    assert np.isfinite(x[:2]).all() and np.isnan(x[2:]).all()
    # One p per point: equal to drawing with that p alone at the same position.
    np.testing.assert_array_equal(x[1], np.asarray(jp.ball(state, 3, 2.0, (6,)))[1])


# In the slow run (three programs of their own, about 12 s): ball's float64 values are golden
# values (test_golden_values.py), and test_orthogonal_float64_and_half_types checks the half
# types' rounding of the float32 draw.
@pytest.mark.slow
def test_ball_float64_and_half_types():
    state = jp.key(2)
    with jax.enable_x64(True):
        y = jp.ball(state, 4, 3.0, (10,), jnp.float64)
        assert y.dtype == jnp.float64 and np.isfinite(np.asarray(y)).all()
    half = jp.ball(state, 4, 3.0, (10,), jnp.bfloat16)
    np.testing.assert_array_equal(
        np.asarray(half), np.asarray(jp.ball(state, 4, 3.0, (10,)).astype(jnp.bfloat16)))


# name -> (keyless draw, explicit draw of a state)
KEYLESS = {
    "rademacher": (lambda: jp.rand.rademacher((5,)), lambda s: jp.rademacher(s, (5,))),
    "geometric": (lambda: jp.rand.geometric(0.3, (4,)), lambda s: jp.geometric(s, 0.3, (4,))),
    "multinomial": (lambda: jp.rand.multinomial(7, P3, shape=(2,)),
                    lambda s: jp.multinomial(s, 7, P3, shape=(2,))),
    "orthogonal": (lambda: jp.rand.orthogonal(3, m=2), lambda s: jp.orthogonal(s, 3, m=2)),
    "ball": (lambda: jp.rand.ball(3, 1.0, (2,)), lambda s: jp.ball(s, 3, 1.0, (2,))),
}


# Every keyless sampler is one generic wrapper of its explicit sampler (jaxpmac/rand.py): three
# of them by default (one of each family, static parameters and shapes), multinomial and ball
# (their programs, about 8 s) in the slow run, as tests/implicit/test_implicit.py does for the
# derived samplers.
@pytest.mark.parametrize("names", [
    pytest.param(("rademacher", "geometric", "orthogonal"), id="three"),
    pytest.param(("multinomial", "ball"), id="the_rest", marks=pytest.mark.slow)])
def test_keyless_versions_draw_the_explicit_values(names):
    def model():
        return tuple(KEYLESS[name][0]() for name in names)

    state = jp.key(1)
    implicit = jp.randomized(model)(state)
    sites = jp.draw_sites(model)
    explicit = tuple(KEYLESS[name][1](site.state(state)) for name, site in zip(names, sites))
    assert len(sites) == len(names)
    for a, b in zip(implicit, explicit):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
