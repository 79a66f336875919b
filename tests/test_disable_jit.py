"""Every public function under ``jax.disable_jit()``: it runs, and gives its jitted values.

``TABLE`` maps every public name (``jaxpmac.__all__``, ``jaxpmac.hail.__all__``,
``jaxpmac.rand.__all__`` through ``jaxpmac.randomized``, the ``RNGState`` methods and the
``jax.random`` functions on a jaxpmac key) to a draw, or to the reason it draws nothing and a
check that it works under ``disable_jit``; ``test_every_public_name_has_an_entry`` fails for a
name without one, so a sampler added later must be added here.

A draw is run under ``jax.jit`` (its parameters traced arguments) and under
``jax.disable_jit()`` (op by op), with x64 off and, where ``x64`` says so, on (with its 64-bit
dtype), unbatched and vmapped over three states. Integers, Hail's values and keys must be
equal bit for bit; floats too, except the few in ``TOLERANCES`` (one table, written up with
its reasons and measured numbers in ``docs/disable_jit.md``). Two draws longer than one CPU
chunk (``bits`` and ``normal`` of 20000 elements) run the chunk loop in Python.
"""

from __future__ import annotations

import dataclasses
import inspect
import pathlib
import re
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import LOWERINGS
from conftest import param

ROOT = jp.key(11).split_static("disable_jit")
N = 48                   # elements per draw: op by op, every element costs little
LONG = 20000             # more than one CPU chunk of uint32 words
F32_64 = (jnp.float32, jnp.float64)
COV = [[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]]

# Float draws that are not bit for bit under disable_jit: {sampler: (max ulps with x64 off,
# max ulps with x64 on, why)}, written up in docs/disable_jit.md; a sampler listed here also
# covers its jaxpmac.rand counterpart. None today: every draw is bit for bit.
TOLERANCES: dict[str, tuple[int, int, str]] = {}


@dataclasses.dataclass(frozen=True)
class Draw:
    """``draw(state, **params)``: ``params`` are traced arguments of the jitted function
    (given as Python values, made arrays in the x64 mode of the run); ``dtypes`` the values of
    the ``dtype`` keyword with x64 off and on (None: no dtype argument)."""
    draw: Callable
    params: dict = dataclasses.field(default_factory=dict)
    dtypes: Optional[tuple] = None
    x64: bool = False
    sampler: str = ""          # the key into TOLERANCES
    vmapped: bool = False      # also vmapped over three states (a few per kind of draw)
    x64_only: bool = False


@dataclasses.dataclass(frozen=True)
class Keyless:
    """``jaxpmac.rand.<name>``: drawn with every other keyless sampler in one randomized
    function (one compilation), see ``test_keyless_samplers_under_disable_jit``."""
    name: str


@dataclasses.dataclass(frozen=True)
class NoDraw:
    """A public name that draws nothing by itself: why, and ``check()``, which runs under
    ``disable_jit`` and asserts that it still does its job there."""
    reason: str
    check: Callable


# -- the samplers: jaxpmac.<name> and jaxpmac.rand.<name> ------------------------------------

def _sampler(fn, *, static=None, params=None, dtypes=None, x64=False, sampler="",
             vmapped=False, x64_only=False):
    return dict(fn=fn, static=static or {}, params=params or {}, dtypes=dtypes, x64=x64,
                sampler=sampler, vmapped=vmapped, x64_only=x64_only)


SAMPLERS = {
    "bits": _sampler(jp.bits, static=dict(shape=(N,)), dtypes=(jnp.uint32, jnp.uint64),
                     x64=True, vmapped=True),
    "uniform": _sampler(jp.uniform, static=dict(shape=(N,)), dtypes=F32_64, x64=True,
                        params=dict(minval=-2.0, maxval=3.0), sampler="uniform"),
    "normal": _sampler(jp.normal, static=dict(shape=(N,)), dtypes=F32_64, x64=True,
                       vmapped=True),
    "truncated_normal": _sampler(jp.truncated_normal, static=dict(shape=(N,)), dtypes=F32_64,
                                 x64=True, params=dict(lower=-1.5, upper=2.0),
                                 sampler="truncated_normal"),
    "multivariate_normal": _sampler(jp.multivariate_normal, static=dict(shape=(N // 3,)),
                                    dtypes=F32_64, x64=True,
                                    params=dict(mean=[1.0, -1.0, 0.5], cov=COV)),
    "bernoulli": _sampler(jp.bernoulli, static=dict(shape=(N,)), params=dict(p=0.3)),
    "randint": _sampler(jp.randint, static=dict(shape=(N,)), params=dict(minval=-7, maxval=1000),
                        dtypes=(jnp.int32, jnp.int64), x64=True, vmapped=True),
    "categorical": _sampler(jp.categorical, static=dict(shape=(N,)),
                            params=dict(logits=[0.1, -1.0, 2.0, 0.0, 0.5])),
    "permutation": _sampler(jp.permutation, static=dict(x=50)),
    "choice": _sampler(jp.choice, static=dict(a=50, shape=(20,), replace=False),
                       params=dict(p=[float(i) for i in range(1, 51)])),
    "exponential": _sampler(jp.exponential, static=dict(shape=(N,)), dtypes=F32_64, x64=True),
    "gumbel": _sampler(jp.gumbel, static=dict(shape=(N,)), dtypes=F32_64, x64=True),
    "laplace": _sampler(jp.laplace, static=dict(shape=(N,)), dtypes=F32_64, x64=True),
    "logistic": _sampler(jp.logistic, static=dict(shape=(N,)), dtypes=F32_64, x64=True),
    "cauchy": _sampler(jp.cauchy, static=dict(shape=(N,)), dtypes=F32_64, x64=True),
    "gamma": _sampler(jp.gamma, static=dict(shape=(N // 4, 4)), dtypes=F32_64, x64=True,
                      params=dict(a=[0.3, 1.0, 4.5, 100.0]), sampler="gamma"),
    "beta": _sampler(jp.beta, static=dict(shape=(N,)), dtypes=F32_64, x64=True,
                     params=dict(a=0.7, b=2.5), sampler="beta"),
    "dirichlet": _sampler(jp.dirichlet, static=dict(shape=(N // 3,)), dtypes=F32_64, x64=True,
                          params=dict(alpha=[0.5, 1.0, 3.0]), sampler="dirichlet"),
    "poisson": _sampler(jp.poisson, static=dict(shape=(N // 4, 4)), x64=True,
                        params=dict(lam=[3.0, 12.0, 300.0, 1e4])),
    "binomial": _sampler(jp.binomial, static=dict(shape=(N // 4, 4)), dtypes=F32_64, x64=True,
                         params=dict(n=[10.0, 1000.0, 50_000.0, 80.0], p=[0.3, 0.5, 0.01, 0.9])),
    "rademacher": _sampler(jp.rademacher, static=dict(shape=(N,))),
    "geometric": _sampler(jp.geometric, static=dict(shape=(N,)), params=dict(p=0.2),
                          dtypes=(jnp.int32, jnp.int64), x64=True),
    "multinomial": _sampler(jp.multinomial, static=dict(shape=(N // 4,)), x64=True,
                            dtypes=F32_64, params=dict(n=30.0, p=[0.2, 0.5, 0.3])),
    "orthogonal": _sampler(jp.orthogonal, static=dict(n=4, shape=(3,)), dtypes=F32_64,
                           x64=True),
    "ball": _sampler(jp.ball, static=dict(d=3, shape=(N // 3,)), params=dict(p=1.5),
                     dtypes=F32_64, x64=True),
    "t": _sampler(jp.t, static=dict(shape=(N,)), params=dict(df=3.5), dtypes=F32_64, x64=True),
    "lognormal": _sampler(jp.lognormal, static=dict(shape=(N,)), params=dict(sigma=0.7),
                          dtypes=F32_64, x64=True),
    "chisquare": _sampler(jp.chisquare, static=dict(shape=(N,)), params=dict(df=3.0),
                          dtypes=F32_64, x64=True),
    "f": _sampler(jp.f, static=dict(shape=(N,)), params=dict(dfnum=4.0, dfden=9.0),
                  dtypes=F32_64, x64=True),
    "loggamma": _sampler(jp.loggamma, static=dict(shape=(N,)), params=dict(a=0.2),
                         dtypes=F32_64, x64=True),
    "pareto": _sampler(jp.pareto, static=dict(shape=(N,)), params=dict(b=2.5), dtypes=F32_64,
                       x64=True),
    "weibull_min": _sampler(jp.weibull_min, static=dict(shape=(N,)),
                            params=dict(scale=2.0, concentration=1.7), dtypes=F32_64, x64=True),
    "rayleigh": _sampler(jp.rayleigh, static=dict(shape=(N,)), params=dict(scale=1.5),
                         dtypes=F32_64, x64=True),
    "maxwell": _sampler(jp.maxwell, static=dict(shape=(N,)), dtypes=F32_64, x64=True),
    "double_sided_maxwell": _sampler(jp.double_sided_maxwell, static=dict(shape=(N,)),
                                     params=dict(loc=1.0, scale=2.0), dtypes=F32_64, x64=True),
    "generalized_normal": _sampler(jp.generalized_normal, static=dict(shape=(N,)),
                                   params=dict(p=1.5), dtypes=F32_64, x64=True),
    "wald": _sampler(jp.wald, static=dict(shape=(N,)), params=dict(mean=2.0), dtypes=F32_64,
                     x64=True),
    "triangular": _sampler(jp.triangular, static=dict(shape=(N,)),
                           params=dict(left=-1.0, mode=0.5, right=3.0), dtypes=F32_64,
                           x64=True),
    # Hail's functions with several forms draw each form (the keyless one: the last form).
    "hail_rand_unif": _sampler(lambda s, **p: (jp.hail.rand_unif(s, **p),
                                               jp.hail.rand_unif(s, **p, size=(2, 3))),
                               params=dict(lower=-1.0, upper=2.0), x64=True),
    "hail_rand_norm": _sampler(lambda s, **p: (jp.hail.rand_norm(s, **p),
                                               jp.hail.rand_norm(s, **p, size=(3, 2))),
                               params=dict(mean=1.0, sd=3.0), x64=True),
    "hail_rand_int32": _sampler(lambda s, a, b: (jp.hail.rand_int32(s, a),
                                                 jp.hail.rand_int32(s, a, b)),
                                params=dict(a=10, b=1000), x64=True, vmapped=True),
    "hail_rand_int64": _sampler(lambda s, a, b: (jp.hail.rand_int64(s),
                                                 jp.hail.rand_int64(s, a),
                                                 jp.hail.rand_int64(s, a, b)),
                                params=dict(a=10**12, b=2**62), x64=True, x64_only=True),
    "hail_rand_bool": _sampler(jp.hail.rand_bool, params=dict(p=0.3), x64=True),
    "hail_rand_norm2d": _sampler(jp.hail.rand_norm2d,
                                 params=dict(mean=[1.0, -2.0], cov=[2.0, 0.5, 1.0]), x64=True),
    "hail_rand_cat": _sampler(jp.hail.rand_cat, params=dict(prob=[0.1, 0.0, 5.0, 2.5, 0.001]),
                              x64=True, vmapped=True),
    "hail_shuffle": _sampler(jp.hail.shuffle, params=dict(a=[5, 3, 8, 1, 9, 2, 7, 4, 6, 0]),
                             vmapped=True),
    # jdistlib's samplers need x64 (TypeError otherwise).
    "hail_rand_pois": _sampler(jp.hail.rand_pois, params=dict(lamb=12.5), x64=True,
                               x64_only=True),
    "hail_rand_gamma": _sampler(jp.hail.rand_gamma, params=dict(shape=0.7, scale=2.0),
                                x64=True, x64_only=True),
    "hail_rand_beta": _sampler(jp.hail.rand_beta, params=dict(a=0.5, b=2.0), x64=True,
                               x64_only=True),
    "hail_rand_dirichlet": _sampler(jp.hail.rand_dirichlet, params=dict(a=[0.5, 2.0]),
                                    x64=True, x64_only=True),
    "hail_rand_hyper": _sampler(jp.hail.rand_hyper,
                                params=dict(popsize=100, ngood=60, nsample=40), x64=True,
                                x64_only=True),
    "hail_rand_multi_hyper": _sampler(jp.hail.rand_multi_hyper,
                                      params=dict(colors=[2, 7, 1], nsample=4), x64=True,
                                      x64_only=True),
}


def _explicit(spec):
    def draw(state, dtype=None, **params):
        kwargs = dict(spec["static"], **params)
        if dtype is not None:
            kwargs["dtype"] = dtype
        return spec["fn"](state, **kwargs)
    return draw


def _draw_of(name, spec, draw):
    return Draw(draw, spec["params"], spec["dtypes"], spec["x64"], spec["sampler"] or name,
                spec["vmapped"], spec["x64_only"])


# -- everything else ------------------------------------------------------------------------

def _words_as_pairs(words):
    return [tuple(w.to_pair(word)) for word in words]


def _randomized_model(x):
    """Draws in a vmap, a scan, a while loop and a cond."""
    noisy = jax.vmap(lambda v: v + jp.rand.normal(()))(x)

    def step(c, _):
        return c + jp.rand.uniform(()), jp.rand.bits((2,))
    c, ys = jax.lax.scan(step, 0.0, None, length=3)
    t, total = jax.lax.while_loop(lambda tc: tc[0] < 2,
                                  lambda tc: (tc[0] + 1, tc[1] + jp.rand.randint((), 0, 9)),
                                  (0, 0))
    branch = jax.lax.cond(x.sum() > 1.5, lambda: jp.rand.exponential((2,)),
                          lambda: -jp.rand.exponential((2,)))
    # A predicate that vmap batches: cond becomes a select over both branches.
    per_example = jax.vmap(lambda v: jax.lax.cond(v > 0.5, lambda: jp.rand.logistic((2,)),
                                                  lambda: -jp.rand.logistic((2,))))(x)
    return noisy, c, ys, total, branch, per_example


def _check_streams():
    model = jp.randomized(_randomized_model)
    x = jnp.arange(3.0)
    reused = lambda: (jp.normal(ROOT, (2,)), jp.uniform(ROOT, (2,)))  # noqa: E731
    with jax.disable_jit():
        assert jp.check_streams(model, ROOT, x) == []
        (finding,) = jp.check_streams(reused)
    assert isinstance(finding, jp.StreamFinding) and finding.kind == "same stream"


def _check_keyed_by():
    def keyed(ids):
        def one(i):
            with jp.rand.keyed_by(i):
                return jp.rand.normal((2,))
        return jax.vmap(one)(ids)
    model = jp.randomized(keyed)
    ids = jnp.arange(5, 9)
    want = jax.jit(model)(ROOT, ids)
    with jax.disable_jit():
        np.testing.assert_array_equal(np.asarray(model(ROOT, ids)), np.asarray(want))


def _check_draw_sites():
    model = jp.randomized(_randomized_model)
    x = jnp.arange(3.0)
    sites = jp.draw_sites(model, x)
    with jax.disable_jit():
        assert jp.draw_sites(model, x) == sites
        # The scan's bits site, drawn explicitly at iterations 0..2, gives the model's ys.
        (site,) = [s for s in sites if s.sampler == "bits"]
        explicit = [jp.bits(site.state(ROOT).split(t), (2,)) for t in range(3)]
        ys = model(ROOT, x)[2]
    np.testing.assert_array_equal(np.asarray(ys), np.stack(explicit))


# The lowerings forced op by op by default: the CPU's and the GPU's. The TPU's runs op by op by
# default in tests/lowering/test_tpu_kernel.py's
# test_hash_kernel_under_vmap_and_eagerly_equals_the_cpu (its kernel's window, and under vmap
# its elementwise one); here it is in the slow run
# (test_force_lowering_to_the_other_lowerings_under_disable_jit).
FORCED_BY_DEFAULT = ("rolled", "elementwise")


def _check_force_lowering(lowerings=FORCED_BY_DEFAULT):
    # Bits and a float map under each lowering (op by op, normal's transform cost 25 s more
    # under the accelerators' lowerings; the maps' values are those of every lowering anyway).
    for name in lowerings:
        with jp.force_lowering(name):
            jitted = jax.jit(lambda s: (jp.bits(s, (300,)), jp.uniform(s, (40,))))(ROOT)
            with jax.disable_jit():
                eager = (jp.bits(ROOT, (300,)), jp.uniform(ROOT, (40,)))
        for a, b in zip(jitted, eager):
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a), err_msg=name)


def _check_is_static():
    with jax.disable_jit():
        assert ROOT.split(3).is_static
        assert ROOT.split(jnp.int32(3)).is_static      # concrete: no tracer op by op
        assert jax.vmap(lambda i: jnp.int32(ROOT.split(i).is_static))(jnp.arange(2)).sum() == 0


def _check_tree_round_trip():
    state = ROOT.split(5, 2**40).split_static("x")
    with jax.disable_jit():
        leaves, tree = jax.tree_util.tree_flatten(state)
        rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
        children, aux = state.tree_flatten()
        assert jp.RNGState.tree_unflatten(aux, children) == state
        passed = jax.vmap(lambda s: jp.bits(s, (3,)), in_axes=None, axis_size=2)(rebuilt)
    np.testing.assert_array_equal(np.asarray(passed[0]), np.asarray(jp.bits(state, (3,))))


def _check_submodule(module):
    def check():
        for name in module.__all__:
            assert f"jaxpmac.{module.__name__.split('.')[-1]}.{name}" in TABLE
    return check


def _jax_key(state):
    return jp.as_jax_key(state)


OTHERS = {
    # jaxpmac.__all__, other than the samplers.
    "jaxpmac.key": Draw(lambda s, seed: jp.bits(jp.key(seed), (8,)), dict(seed=2**31 - 5),
                        x64=True),
    "jaxpmac.RNGState": Draw(lambda s, uid: jp.bits(jp.RNGState(0).split(uid), (8,)),
                             dict(uid=7)),
    "jaxpmac.as_jax_key": Draw(lambda s: jax.random.key_data(jp.as_jax_key(s.split(3)))),
    "jaxpmac.state_of": Draw(lambda s: jp.bits(jp.state_of(jp.as_jax_key(s.split(3))).split(4),
                                               (8,))),
    "jaxpmac.prng_impl": Draw(lambda s, seed: jax.random.bits(
        jax.random.key(seed, impl=jp.prng_impl), (8,)), dict(seed=5), x64=True),
    "jaxpmac.fold_in_uids": Draw(lambda s, uid: jax.random.key_data(
        jp.fold_in_uids(_jax_key(s), uid, 2**40 + 1)), dict(uid=-3), x64=True),
    "jaxpmac.randomized": Draw(lambda s, x: jp.randomized(_randomized_model)(s, x),
                               dict(x=[0.0, 1.0, 2.0])),
    "jaxpmac.draw_sites": NoDraw("reports draw sites; checked: the same sites under "
                                 "disable_jit, and a site's explicit draws equal the model's",
                                 _check_draw_sites),
    "jaxpmac.DrawSite": NoDraw("a record of a site (see draw_sites); its state() is checked "
                               "there", _check_draw_sites),
    "jaxpmac.check_streams": NoDraw("traces and reports, computes nothing; checked: the same "
                                    "findings under disable_jit", _check_streams),
    "jaxpmac.StreamFinding": NoDraw("a record of a finding (see check_streams)",
                                    _check_streams),
    "jaxpmac.rand.keyed_by": NoDraw("a context for keyless draws; checked: a keyed model gives "
                                    "its jitted values under disable_jit", _check_keyed_by),
    "jaxpmac.force_lowering": NoDraw("a context switch; checked: every forced lowering gives "
                                     "the jitted bits and normals under disable_jit (the "
                                     "TPU's lowering in the slow run)", _check_force_lowering),
    "jaxpmac.hail": NoDraw("a module: its functions have entries of their own",
                           _check_submodule(jp.hail)),
    "jaxpmac.rand": NoDraw("a module: its functions have entries of their own",
                           _check_submodule(jp.rand)),
    # RNGState's methods.
    "RNGState.split": Draw(lambda s, uid: jp.bits(s.split(uid, 2**40 + 3, -1), (8,)),
                           dict(uid=9), x64=True),
    "RNGState.split_static": Draw(lambda s: jp.bits(s.split_static("label", 7), (8,))),
    "RNGState.partial_hash": Draw(lambda s, uid: (lambda h: (_words_as_pairs(h[0]),
                                                             jnp.int32(h[1]),
                                                             _words_as_pairs(h[2])))(
        s.split(uid, 2, 3, 4, 5).partial_hash()), dict(uid=1)),
    "RNGState.message_hash": Draw(lambda s, uid: (lambda h: (w.to_pair(h[0]),
                                                             _words_as_pairs(h[1])))(
        s.split(uid).message_hash()), dict(uid=1)),
    "RNGState.is_static": NoDraw("a property of the message's words", _check_is_static),
    "RNGState.tree_flatten": NoDraw("pytree protocol", _check_tree_round_trip),
    "RNGState.tree_unflatten": NoDraw("pytree protocol", _check_tree_round_trip),
    # jax.random on a jaxpmac key.
    "jax.random.bits": Draw(lambda s: jax.random.bits(_jax_key(s), (N,))),
    "jax.random.uniform": Draw(lambda s: jax.random.uniform(_jax_key(s), (N,), minval=-1.0)),
    "jax.random.normal": Draw(lambda s: jax.random.normal(_jax_key(s), (N,))),
    "jax.random.bernoulli": Draw(lambda s, p: jax.random.bernoulli(_jax_key(s), p, (N,)),
                                 dict(p=0.3), vmapped=True),
    "jax.random.randint": Draw(lambda s: jax.random.randint(_jax_key(s), (N,), -5, 100)),
    "jax.random.permutation": Draw(lambda s: jax.random.permutation(_jax_key(s), 30)),
    "jax.random.choice": Draw(lambda s: jax.random.choice(_jax_key(s), 30, (5,), False)),
    "jax.random.split": Draw(lambda s: jax.random.key_data(jax.random.split(_jax_key(s), 3))),
    "jax.random.fold_in": Draw(lambda s, d: jax.random.key_data(
        jax.random.fold_in(_jax_key(s), d)), dict(d=12)),
}
JAX_RANDOM = ("bits", "uniform", "normal", "bernoulli", "randint", "permutation", "choice",
              "split", "fold_in")


def _explicit_name(name):
    """The public name of ``SAMPLERS[name]``'s explicit sampler."""
    return f"jaxpmac.hail.{name[5:]}" if name.startswith("hail_") else f"jaxpmac.{name}"


def _table():
    table = {}
    for name, spec in SAMPLERS.items():
        table[_explicit_name(name)] = _draw_of(name, spec, _explicit(spec))
        table[f"jaxpmac.rand.{name}"] = Keyless(name)
    table.update(OTHERS)
    return table


TABLE = _table()


def _public_names():
    names = [f"jaxpmac.{n}" for n in jp.__all__]
    names += [f"jaxpmac.hail.{n}" for n in jp.hail.__all__]
    names += [f"jaxpmac.rand.{n}" for n in jp.rand.__all__]
    names += [f"RNGState.{n}" for n, _ in inspect.getmembers(jp.RNGState)
              if not n.startswith("_")]
    names += [f"jax.random.{n}" for n in JAX_RANDOM]
    return names


def test_every_public_name_has_an_entry():
    missing = [n for n in _public_names() if n not in TABLE]
    assert not missing, (f"public names without an entry in tests/test_disable_jit.py's TABLE "
                         f"(add a draw, or a NoDraw with its reason): {missing}")
    extra = [n for n in TABLE if n not in _public_names()]
    assert not extra, f"entries for names that are not public: {extra}"


# -- running a draw both ways ---------------------------------------------------------------

def _both_ways(fn, *args):
    """``fn(*args)`` under jax.jit and under jax.disable_jit, as lists of numpy arrays."""
    jitted = jax.jit(fn)(*args)
    with jax.disable_jit():
        eager = fn(*args)
    as_list = lambda tree: [np.asarray(x) for x in jax.tree.leaves(tree)]
    return as_list(jitted), as_list(eager)


def _ulps_apart(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in ulps (adjacent floats have adjacent bit patterns within a sign;
    NaNs must match)."""
    signed = np.dtype(f"i{a.dtype.itemsize}")
    both_nan = np.isnan(a) & np.isnan(b)
    apart = np.abs(a.view(signed).astype(np.int64) - b.view(signed).astype(np.int64))
    return int(np.where(both_nan, 0, apart).max(initial=0))


def _compare(name, sampler, x64, jitted, eager):
    """Asserts ``jitted == eager`` bit for bit (floats of TOLERANCES: within their ulps)."""
    for a, b in zip(jitted, eager, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        exact = a.view(f"u{a.dtype.itemsize}") if a.dtype != np.bool_ else a
        if np.array_equal(exact, b.view(exact.dtype)):
            continue
        differ = int((exact != b.view(exact.dtype)).sum())
        floating = np.issubdtype(a.dtype, np.floating) or a.dtype == jnp.bfloat16
        message = (f"{name} (x64 {'on' if x64 else 'off'}): {differ} of {a.size} values differ "
                   f"under jax.disable_jit" + (f", by up to {_ulps_apart(a, b)} ulps"
                                              if floating else ""))
        if floating and sampler in TOLERANCES:
            allowed = TOLERANCES[sampler][int(x64)]
            assert _ulps_apart(a, b) <= allowed, f"{message} (documented: {allowed})"
        else:
            raise AssertionError(message)


def _params(entry):
    return {k: jnp.asarray(v) for k, v in entry.params.items()}


def _run(name, entry, x64):
    with jax.enable_x64(x64):
        params = _params(entry)
        dtype = None if entry.dtypes is None else entry.dtypes[int(x64)]
        extra = {} if dtype is None else {"dtype": dtype}

        def plain(state, params):
            return entry.draw(state, **extra, **params)

        def vmapped(state, params):
            return jax.vmap(lambda i: entry.draw(state.split(i), **extra, **params))(
                jnp.arange(3))

        # vmapped with x64 off only: the lanes' code does not depend on the word width.
        both = entry.vmapped and not x64
        fn = (lambda s, p: (plain(s, p), vmapped(s, p))) if both else plain
        jitted, eager = _both_ways(fn, ROOT.split_static(name), params)
        _compare(name, entry.sampler, x64, jitted, eager)


DRAWS = sorted(n for n, e in TABLE.items() if isinstance(e, Draw))


# Samplers composed of other samplers (gammas, normals, binomials) in the slow run: their parts
# run op by op in the default run, and the composition is the same code jitted or not.
COMPOSED_SAMPLERS = ("jaxpmac.ball", "jaxpmac.beta", "jaxpmac.chisquare", "jaxpmac.f",
                     "jaxpmac.generalized_normal", "jaxpmac.loggamma", "jaxpmac.lognormal",
                     "jaxpmac.multinomial", "jaxpmac.t")


# jax.random's samplers on a jaxpmac key are jax's own code over the key's bits: its bits, split,
# fold_in, uniform and normal by default, the rest in the slow run.
JAX_RANDOM_BY_DEFAULT = ("jax.random.bits", "jax.random.split", "jax.random.fold_in",
                         "jax.random.uniform", "jax.random.normal")


# Of the other samplers, one of each kind of program runs op by op by default: words (bits), a
# float map (uniform), normal's transform, a rejection loop (gamma), poisson's and binomial's
# loops, a sort (permutation), a matrix sampler (multivariate_normal), the truncated normal's
# inverse CDF, a Hail function with x64 off (rand_bool: a float64 compared in uint32 words) and
# Hail's shuffle; vmapped draws stay with bits, normal and shuffle. The rest (other maps of
# uniform words, choice, categorical, randint, dirichlet, orthogonal, the other Hail functions,
# whose engine draws also run op by op in tests/hail/test_hail_engine.py's
# test_call_sequence_under_disable_jit) are the same kinds of program again, in the slow run.
SAMPLERS_BY_DEFAULT = ("jaxpmac.bits", "jaxpmac.uniform", "jaxpmac.normal", "jaxpmac.gamma",
                       "jaxpmac.poisson", "jaxpmac.binomial", "jaxpmac.permutation",
                       "jaxpmac.multivariate_normal", "jaxpmac.truncated_normal",
                       "jaxpmac.hail.rand_bool", "jaxpmac.hail.shuffle")
EXPLICIT_SAMPLERS = tuple(_explicit_name(name) for name in SAMPLERS)


def _in_the_slow_run(name: str) -> bool:
    return (name in COMPOSED_SAMPLERS
            or (name in EXPLICIT_SAMPLERS and name not in SAMPLERS_BY_DEFAULT)
            or (name.startswith("jax.random.") and name not in JAX_RANDOM_BY_DEFAULT))


@pytest.mark.parametrize("name", [
    param(n, slow=_in_the_slow_run(n)) for n in sorted(n for n in DRAWS if not TABLE[n].x64_only)])
def test_draw_under_disable_jit_equals_the_jitted_one(name):
    assert (set(COMPOSED_SAMPLERS) | set(SAMPLERS_BY_DEFAULT) | set(JAX_RANDOM_BY_DEFAULT)
            <= set(DRAWS))
    _run(name, TABLE[name], x64=False)


# With x64 on (float64 and 64-bit integer paths): in the slow run, to keep the default run short.
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n in DRAWS if TABLE[n].x64))
def test_draw_with_x64_under_disable_jit_equals_the_jitted_one(name):
    _run(name, TABLE[name], x64=True)


# The keyless functions are thin wrappers of the explicit ones, whose values under disable_jit
# test_draw_under_disable_jit_equals_the_jitted_one checks one by one; what is their own is the
# implicit pass of jaxpmac.randomized run op by op, which one sampler of each kind of draw
# exercises: one word per value, several words per value, a rejection loop, a vector per
# value, a sort. Every sampler at once is in the slow run (74 s of op-by-op draws on 2 cores).
KEYLESS_KINDS = ("normal", "gamma", "poisson", "dirichlet", "permutation")
# With x64 on, the default run takes the one word-reading x64-only sampler (also the default
# run's jitted rand_int64 with traced bounds, see tests/hail/test_hail_functions.py); every
# x64-only one (the jdistlib-based Hail functions: about six minutes of op-by-op rejection
# loops) is slow.
KEYLESS_KINDS_X64 = ("hail_rand_int64",)


@pytest.mark.parametrize("x64, every_sampler", [
    (False, False),
    pytest.param(False, True, marks=pytest.mark.slow),
    (True, False),
    pytest.param(True, True, marks=pytest.mark.slow),
])
def test_keyless_samplers_under_disable_jit(x64, every_sampler):
    # jaxpmac.rand samplers in one randomized function (one compilation; the parameters are
    # its traced arguments), jitted and op by op. With x64 on, only the samplers that need it.
    kinds = KEYLESS_KINDS_X64 if x64 else KEYLESS_KINDS
    names = [e.name for e in TABLE.values() if isinstance(e, Keyless)
             and SAMPLERS[e.name]["x64_only"] == x64
             and (every_sampler or e.name in kinds)]
    if not every_sampler:
        assert sorted(names) == sorted(kinds)
    elif not x64:
        # Every keyless sampler (jp.rand.__all__ less keyed_by) but the x64-only ones.
        x64_only = sum(spec["x64_only"] for spec in SAMPLERS.values())
        assert len(names) == len(jp.rand.__all__) - 1 - x64_only
    assert names
    with jax.enable_x64(x64):
        params = {n: {k: jnp.asarray(v) for k, v in SAMPLERS[n]["params"].items()}
                  for n in names}

        def model(params):
            out = {}
            for n in names:
                spec = dict(SAMPLERS[n]["static"])
                if SAMPLERS[n]["dtypes"] is not None:
                    spec["dtype"] = SAMPLERS[n]["dtypes"][int(x64)]
                out[n] = getattr(jp.rand, n)(**spec, **params[n])
            return out

        fn = lambda s, p: jp.randomized(model)(s, p)
        jitted = jax.jit(fn)(ROOT.split_static("keyless"), params)
        with jax.disable_jit():
            eager = fn(ROOT.split_static("keyless"), params)
    for n in names:
        _compare(f"jaxpmac.rand.{n}", SAMPLERS[n]["sampler"] or n, x64,
                 [np.asarray(jitted[n])], [np.asarray(eager[n])])


def test_a_draw_in_a_cond_with_a_batched_predicate_under_disable_jit():
    def draw(i):
        return jax.lax.cond(i > 1, lambda: jp.bits(ROOT.split(i), (2,)),
                            lambda: jp.bits(ROOT.split(i + 7), (2,)))
    jitted = jax.jit(jax.vmap(draw))(jnp.arange(3))
    with jax.disable_jit():
        eager = jax.vmap(draw)(jnp.arange(3))
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))


# A record type runs its function's check (DrawSite: draw_sites', StreamFinding:
# check_streams'), and tree_unflatten tree_flatten's round trip: the same check once more, in the
# slow run; the names they share a check with run it by default.
SAME_CHECK_AS = {"jaxpmac.DrawSite": "jaxpmac.draw_sites",
                 "jaxpmac.StreamFinding": "jaxpmac.check_streams",
                 "RNGState.tree_unflatten": "RNGState.tree_flatten"}


@pytest.mark.parametrize("name", [
    param(n, slow=n in SAME_CHECK_AS)
    for n in sorted(n for n, e in TABLE.items() if isinstance(e, NoDraw))])
def test_name_that_draws_nothing_works_under_disable_jit(name):
    assert all(TABLE[n].check is TABLE[same].check for n, same in SAME_CHECK_AS.items())
    TABLE[name].check()


# The forced lowerings that jaxpmac.force_lowering's entry leaves to the slow run (see
# FORCED_BY_DEFAULT).
@pytest.mark.slow
def test_force_lowering_to_the_other_lowerings_under_disable_jit():
    others = [name for name in LOWERINGS if name not in FORCED_BY_DEFAULT]
    assert others
    _check_force_lowering(others)


# With x64 on (uint64 words, float64 normals) in the slow run: the same chunk loop in Python as
# with x64 off; x64 op by op stays by default with test_keyless_samplers_under_disable_jit's
# rand_int64.
@pytest.mark.parametrize("x64", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_long_draws_run_the_chunk_loop_in_python_with_the_jitted_values(x64):
    # More than one CPU chunk: under disable_jit the chunk loop's fori_loop runs in Python.
    with jax.enable_x64(x64):
        wide = jnp.uint64 if x64 else jnp.uint32
        fn = lambda s: (jp.bits(s, (LONG,), wide), jp.normal(s.split(1), (LONG,)),
                        jax.random.bits(jp.as_jax_key(s.split(2)), (LONG,)))
        jitted, eager = _both_ways(fn, ROOT.split_static("long"))
    _compare("long bits, normal and jax.random.bits", "", x64, jitted, eager)


def test_tolerances_are_documented():
    """docs/disable_jit.md's tolerance table lists exactly TOLERANCES (today: none)."""
    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "disable_jit.md").read_text()
    section = text.split("## Tolerances", 1)[1].split("\n## ", 1)[0]
    rows = {name: (int(x32), int(x64)) for name, x32, x64 in
            re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \|", section, flags=re.M)}
    assert rows == {name: (x32, x64) for name, (x32, x64, _) in TOLERANCES.items()}
