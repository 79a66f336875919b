"""The error table of docs/errors.md, as tests: each row is a public function, a bad input, the
exact call that shows it, the exception raised and a substring of its message.

Each row's ``example`` is the call written out once: the test evaluates that text, so the table
in docs/errors.md (generated from ``ROWS`` by
``PYTHONPATH=. python tests/samplers/test_error_table.py``) shows exactly what is tested. Every
error is raised at trace time, before anything is compiled, so the whole file runs in a few
seconds. Rows marked ``gap`` pin behaviour listed under "Known gaps" in docs/errors.md (an
unclear message): when it is fixed, update the row.

``TRACED_ROWS`` are the bad values that are rejected only when concrete: each example draws
with the value traced (under ``jit`` or ``vmap``) and must equal its visibly invalid result
(NaN, -1). ``PYTHONPATH=. python tests/samplers/test_error_table.py --traced`` prints their
table, and the test checks that docs/errors.md holds both generated tables verbatim.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from jaxpmac import hail


class Row(NamedTuple):
    function: str      # the public name, as a user writes it
    bad_input: str     # what is wrong, in words
    example: str       # a Python expression that raises (S = jp.key(0), K = jp.as_jax_key(S))
    error: type
    message: str       # a literal substring of the message
    gap: bool = False  # an unclear message, listed under "Known gaps"


def _rows(function, *rows):
    return [Row(function, *row) for row in rows]


SEED = "key seed accepts a Python int in [-2**63, 2**64)"
UIDS = "accepts Python ints in [-2**63, 2**64), integer scalar arrays or 1-D integer arrays"
LABEL = "accepts ints in [-2**63, 2**64) and strs (use split() for traced values)"
STATE = ("accepts a jaxpmac RNGState (from jaxpmac.key, or jaxpmac.state_of(key) for a "
         "jax.random key<pmac>), but was given")
SHAPE = "shape accepts a sequence of non-negative ints, but was given"
FLOAT = "dtype accepts float16, bfloat16, float32 or float64 (float64 needs jax_enable_x64)"
INT = "dtype accepts int8, int16, int32, int64, uint8, uint16, uint32 or uint64"
REAL = "accepts real numbers or arrays of them, but was given"
HAIL_REAL = "accepts a Python float or int, or a real scalar array"
HAIL_N = "a accepts a Python int in [1, 2**31), or an integer scalar array"
HAIL_SIZE = "size accepts None or a tuple (nrows, ncols) of two positive Python ints"
X64 = "needs 64-bit types: enable them with jax.config.update('jax_enable_x64', True)"
KEY = "fold_in_uids key accepts a typed jax.random key of jaxpmac.prng_impl"
P_WEIGHTS = "accepts finite non-negative weights with a positive, finite sum"
LOGITS = ("categorical logits accepts rows (along axis) without NaN, with at least one entry "
          "above -inf and at most one +inf")

ROWS = [
    # -- key -------------------------------------------------------------------------------
    *_rows("key",
           ("float", "jp.key(1.5)", TypeError, f"{SEED} or an integer scalar array (traced or "
                                               f"not), but was given float 1.5"),
           ("bool", "jp.key(True)", TypeError, "but was given bool True"),
           ("str", "jp.key('3')", TypeError, "but was given str '3'"),
           ("None", "jp.key(None)", TypeError, "but was given NoneType None"),
           ("list", "jp.key([1, 2])", TypeError, "but was given list [1, 2]"),
           ("float array", "jp.key(jnp.float32(1))", TypeError,
            "but was given array of dtype float32 and shape ()"),
           ("int too large", "jp.key(2**64)", ValueError,
            "key seed must be a Python int in [-2**63, 2**64), but was given "
            "18446744073709551616"),
           ("int too small", "jp.key(-2**63 - 1)", ValueError,
            "but was given -9223372036854775809"),
           ("non-scalar array", "jp.key(jnp.arange(3))", ValueError,
            "but was given array of dtype int32 and shape (3,)"),
           ("traced float", "jax.jit(jp.key)(jnp.float32(1))", TypeError,
            "key seed accepts a Python int in [-2**63, 2**64) or an integer scalar array "
            "(traced or not), but was given traced array of dtype float32 and shape ()"),
           ("traced non-scalar", "jax.jit(jp.key)(jnp.arange(2))", ValueError,
            "but was given traced array of dtype int32 and shape (2,)")),
    # -- RNGState.split --------------------------------------------------------------------
    *_rows("RNGState.split",
           ("float", "S.split(1.0)", TypeError, f"split argument 0 {UIDS}"),
           ("bool (position named)", "S.split(7, False)", TypeError,
            "split argument 1 accepts Python ints"),
           ("str", "S.split('a')", TypeError, "but was given str 'a'"),
           ("None", "S.split(None)", TypeError, "but was given NoneType None"),
           ("list", "S.split([1, 2])", TypeError, "but was given list [1, 2]"),
           ("float array", "S.split(np.ones(3, np.float32))", TypeError,
            "but was given array of dtype float32 and shape (3,)"),
           ("bool array", "S.split(np.bool_(True))", TypeError, "array of dtype bool"),
           ("int too large", "S.split(2**64)", ValueError,
            "split argument 0 must be a Python int in [-2**63, 2**64), but was given "
            "18446744073709551616"),
           ("2-D array", "S.split(jnp.ones((2, 2), jnp.int32))", ValueError,
            "but was given array of dtype int32 and shape (2, 2)"),
           ("traced float", "jax.jit(lambda u: S.split(u).message_hash())(jnp.ones(3))",
            TypeError, "split argument 0 accepts Python ints in [-2**63, 2**64), integer "
                       "scalar arrays or 1-D integer arrays (traced or not), but was given "
                       "traced array of dtype float32 and shape (3,)"),
           ("traced 2-D", "jax.jit(lambda u: S.split(u).message_hash())"
                          "(jnp.ones((2, 3), jnp.int32))",
            ValueError, "but was given traced array of dtype int32 and shape (2, 3)")),
    # -- RNGState.split_static -------------------------------------------------------------
    *_rows("RNGState.split_static",
           ("float", "S.split_static(1.5)", TypeError,
            f"label 0 {LABEL}, but was given float 1.5"),
           ("bool (position named)", "S.split_static('ok', True)", TypeError,
            "label 1 accepts ints"),
           ("bytes", "S.split_static(b'x')", TypeError, "but was given bytes b'x'"),
           ("None", "S.split_static(None)", TypeError, "but was given NoneType None"),
           ("list", "S.split_static([1, 2])", TypeError, "but was given list [1, 2]"),
           ("float array", "S.split_static(np.float64(2.0))", TypeError,
            "but was given array of dtype float64 and shape ()"),
           ("int too large", "S.split_static(2**64)", ValueError,
            "label 0 must be a Python int in [-2**63, 2**64), but was given "
            "18446744073709551616"),
           ("array", "S.split_static(np.arange(3))", ValueError, "and shape (3,)"),
           ("traced (needs concrete)", "jax.jit(lambda x: S.split_static(x).message_hash())"
                                       "(jnp.int32(1))",
            TypeError, "split_static label 0 must be concrete, but was given traced array of "
                       "dtype int32 and shape (); pass traced values to split() instead")),
    # -- bits ------------------------------------------------------------------------------
    *_rows("bits",
           ("state not an RNGState", "jp.bits(42, (2,))", TypeError, f"bits {STATE} int 42"),
           ("jax.random key as state", "jp.bits(jax.random.key(0), (2,))", TypeError,
            "but was given a jax.random key of impl threefry2x32 (dtype key<fry>)"),
           ("raw uint32 key data", "jp.bits(jnp.zeros(4, jnp.uint32))", TypeError,
            "but was given array of dtype uint32 and shape (4,)"),
           ("negative dim", "jp.bits(S, (2, -1))", ValueError, f"bits {SHAPE} (2, -1)"),
           ("negative int shape", "jp.bits(S, -3)", ValueError, f"bits {SHAPE} -3"),
           ("float dim", "jp.bits(S, (2.0,))", TypeError, "(entry float 2.0)"),
           ("bool dim", "jp.bits(S, (True,))", TypeError, "(entry bool True)"),
           ("None shape", "jp.bits(S, None)", TypeError, f"bits {SHAPE} NoneType None"),
           ("traced dim (needs concrete)", "jax.jit(lambda n: jp.bits(S, (n,)))(3)", TypeError,
            "(entry traced array of dtype int32 and shape ())"),
           ("signed dtype", "jp.bits(S, (2,), jnp.int32)", TypeError,
            "bits dtype accepts uint8, uint16, uint32 or uint64 (uint64 needs "
            "jax_enable_x64), but was given int32"),
           ("float dtype", "jp.bits(S, (2,), jnp.float32)", TypeError, "but was given float32"),
           ("unknown dtype", "jp.bits(S, (2,), 'uint128')", TypeError,
            "but was given 'uint128'"),
           ("uint64 with x64 off", "jp.bits(S, (2,), jnp.uint64)", TypeError,
            f"bits dtype uint64 {X64}"),
           ("negative offset", "jp.bits(S, (2,), offset=-1)", ValueError,
            "bits offset accepts a Python int in [0, 2**64) or a non-negative integer scalar "
            "array (traced or not), but was given -1"),
           ("offset too large", "jp.bits(S, (2,), offset=2**64)", ValueError,
            "but was given 18446744073709551616"),
           ("draw past the end of the stream", "jp.bits(S, (4,), offset=2**64 - 2)", ValueError,
            "must end by 2**64, but was given offset 18446744073709551614"),
           ("negative offset array", "jp.bits(S, (2,), offset=jnp.int32(-1))", ValueError,
            "value -1"),
           ("float offset", "jp.bits(S, (2,), offset=1.5)", TypeError,
            "but was given float 1.5"),
           ("array offset", "jp.bits(S, (2,), offset=jnp.arange(2))", ValueError,
            "shape (2,)"),
           ("traced float offset", "jax.jit(lambda o: jp.bits(S, (2,), offset=o))"
                                   "(jnp.float32(1))",
            TypeError, "bits offset accepts a Python int in [0, 2**64) or a non-negative "
                       "integer scalar array (traced or not), but was given traced array of "
                       "dtype float32")),
    # -- uniform ---------------------------------------------------------------------------
    *_rows("uniform",
           ("state not an RNGState", "jp.uniform(None)", TypeError,
            f"uniform {STATE} NoneType None"),
           ("int dtype", "jp.uniform(S, (2,), jnp.int32)", TypeError,
            f"uniform {FLOAT}, but was given int32"),
           ("float64 with x64 off", "jp.uniform(S, (2,), jnp.float64)", TypeError,
            f"uniform dtype float64 {X64}"),
           ("unknown dtype", "jp.uniform(S, (2,), 'foo')", TypeError, "but was given 'foo'"),
           ("float dim", "jp.uniform(S, (2.0,))", TypeError, f"uniform {SHAPE} (2.0,)"),
           ("traced dim (needs concrete)", "jax.jit(lambda n: jp.uniform(S, (n,)))(3)",
            TypeError, "uniform shape accepts a sequence of non-negative ints"),
           ("str bound", "jp.uniform(S, minval='a')", TypeError,
            f"uniform minval {REAL} str 'a'"),
           ("bool bound", "jp.uniform(S, maxval=True)", TypeError,
            f"uniform maxval {REAL} bool True"),
           ("complex bound", "jp.uniform(S, minval=1j)", TypeError, "complex 1j"),
           ("list bound", "jp.uniform(S, minval=[0.0, 1.0])", TypeError, "list [0.0, 1.0]"),
           ("bound not broadcastable to shape", "jp.uniform(S, (2,), minval=jnp.zeros(3))",
            ValueError, "uniform parameters must broadcast to shape (2,), but have shapes "
                        "[(3,), ()]"),
           ("precise not a bool", "jp.uniform(S, precise=1)", TypeError,
            "uniform precise accepts True or False, but was given int 1")),
    # -- normal and the one-word transforms ------------------------------------------------
    *_rows("normal",
           ("jax.random key as state", "jp.normal(jax.random.key(0))", TypeError,
            f"normal {STATE} a jax.random key of impl threefry2x32 (dtype key<fry>)"),
           ("int dtype", "jp.normal(S, (2,), jnp.int32)", TypeError, f"normal {FLOAT}"),
           ("negative dim", "jp.normal(S, (-2,))", ValueError, f"normal {SHAPE} (-2,)"),
           ("None shape", "jp.normal(S, None)", TypeError, f"normal {SHAPE} NoneType None"),
           ("negative offset (every sampler's offset is checked as bits')",
            "jp.normal(S, (2,), offset=-1)", ValueError,
            "normal offset accepts a Python int in [0, 2**64)"),
           ("traced float offset", "jax.jit(lambda o: jp.normal(S, (2,), offset=o))"
                                   "(jnp.float32(1))",
            TypeError, "but was given traced array of dtype float32")),
    *[row for name in ("exponential", "gumbel", "laplace", "logistic", "cauchy")
      for row in _rows(name,
                       ("state not an RNGState", f"jp.{name}('s')", TypeError,
                        f"{name} {STATE} str 's'"),
                       ("int dtype", f"jp.{name}(S, (2,), jnp.int32)", TypeError,
                        f"{name} {FLOAT}, but was given int32"),
                       ("float64 with x64 off", f"jp.{name}(S, (2,), jnp.float64)",
                        TypeError, f"{name} dtype float64 {X64}"),
                       ("negative dim", f"jp.{name}(S, (2, -1))", ValueError,
                        f"{name} {SHAPE} (2, -1)"))],
    *_rows("gumbel",
           ("unknown mode", "jp.gumbel(S, (2,), mode='mid')", ValueError,
            "gumbel mode accepts None, 'low' or 'high', but was given 'mid'")),
    # -- bernoulli -------------------------------------------------------------------------
    *_rows("bernoulli",
           ("state not an RNGState", "jp.bernoulli(0, 0.5)", TypeError, f"bernoulli {STATE}"),
           ("unknown mode", "jp.bernoulli(S, 0.5, (2,), mode='x')", ValueError,
            "bernoulli mode accepts 'low' or 'high', but was given 'x'"),
           ("str p", "jp.bernoulli(S, '0.5')", TypeError, f"bernoulli p {REAL} str '0.5'"),
           ("bool p", "jp.bernoulli(S, True)", TypeError, f"bernoulli p {REAL} bool True"),
           ("p not broadcastable to shape", "jp.bernoulli(S, jnp.full(3, 0.5), (2,))",
            ValueError, "bernoulli parameters must broadcast to shape (2,), but have shapes "
                        "[(3,)]"),
           ("negative dim", "jp.bernoulli(S, 0.5, (-1,))", ValueError, f"bernoulli {SHAPE}")),
    # -- randint ---------------------------------------------------------------------------
    *_rows("randint",
           ("state not an RNGState", "jp.randint(1, (2,), 0, 10)", TypeError,
            f"randint {STATE} int 1"),
           ("draw past the end of the stream (two stream elements a value)",
            "jp.randint(S, (2,), 0, 5, offset=2**63)", ValueError,
            "offset 9223372036854775808 reads stream elements up to 18446744073709551620, "
            "past the stream's 2**64"),
           ("float bound", "jp.randint(S, (2,), 0.0, 10)", TypeError,
            "randint minval accepts an int or an integer array, but was given float 0.0"),
           ("bool bound", "jp.randint(S, (2,), False, 10)", TypeError, "bool False"),
           ("str bound", "jp.randint(S, (2,), 0, '9')", TypeError,
            "randint maxval accepts an int or an integer array, but was given str '9'"),
           ("float array bound", "jp.randint(S, (2,), 0, jnp.ones(2))", TypeError,
            "but was given array of dtype float32 and shape (2,)"),
           ("int bound outside dtype", "jp.randint(S, (2,), 0, 2**31 + 1)", ValueError,
            "randint maxval must lie in [-2147483648, 2147483648] for dtype int32, but was "
            "given 2147483649"),
           ("negative bound for unsigned dtype", "jp.randint(S, (2,), -1, 10, jnp.uint8)",
            ValueError, "randint minval must lie in [0, 255] for dtype uint8, but was given -1"),
           ("array bound outside dtype", "jp.randint(S, (2,), 0, np.int32(300), jnp.int8)",
            ValueError, "randint maxval must lie in [-128, 128] for dtype int8, but was given "
                        "values in [300, 300]"),
           ("numpy int64 bound outside int32 (x64 off)",
            "jp.randint(S, (4,), 0, np.int64(2**40))", ValueError,
            "randint maxval must lie in [-2147483648, 2147483648] for dtype int32, but was "
            "given values in [1099511627776, 1099511627776]"),
           ("float dtype", "jp.randint(S, (2,), 0, 10, jnp.float32)", TypeError,
            f"randint {INT} (64-bit types need jax_enable_x64), but was given float32"),
           ("int64 with x64 off", "jp.randint(S, (2,), 0, 10, jnp.int64)", TypeError,
            f"randint dtype int64 {X64}"),
           ("bound not broadcastable to shape", "jp.randint(S, (2,), 0, jnp.arange(1, 4))",
            ValueError, "randint parameters must broadcast to shape (2,), but have shapes "
                        "[(), (3,)]"),
           ("negative dim", "jp.randint(S, (-1,), 0, 10)", ValueError, f"randint {SHAPE}")),
    # -- truncated_normal, multivariate_normal ---------------------------------------------
    *_rows("truncated_normal",
           ("state not an RNGState", "jp.truncated_normal(None, 0.0, 1.0)", TypeError,
            f"truncated_normal {STATE}"),
           ("str bound", "jp.truncated_normal(S, 'a', 1.0)", TypeError,
            f"truncated_normal lower {REAL} str 'a'"),
           ("bool bound", "jp.truncated_normal(S, 0.0, True)", TypeError,
            f"truncated_normal upper {REAL} bool True"),
           ("bounds not broadcastable together",
            "jp.truncated_normal(S, jnp.zeros(2), jnp.ones(3))", ValueError,
            "truncated_normal parameters must broadcast together, but have shapes "
            "[(2,), (3,)]"),
           ("bounds not broadcastable to shape", "jp.truncated_normal(S, jnp.zeros(2), 1.0, (3,))",
            ValueError, "truncated_normal parameters must broadcast to shape (3,)"),
           ("int dtype", "jp.truncated_normal(S, 0.0, 1.0, dtype=jnp.int32)", TypeError,
            f"truncated_normal {FLOAT}"),
           ("lower > upper", "jp.truncated_normal(S, 1.0, 0.0, (3,))", ValueError,
            "truncated_normal accepts bounds with lower <= upper, but was given lower 1.0 and "
            "upper 0.0"),
           ("lower > upper in one element", "jp.truncated_normal(S, np.array([0., 2.]), 1.0)",
            ValueError, "but was given lower 2.0 and upper 1.0 (at broadcast index (1,))"),
           ("lower > upper, closed over under jit",
            "jax.jit(lambda: jp.truncated_normal(S, 1.0, -1.0))()", ValueError,
            "but was given lower 1.0 and upper -1.0")),
    *_rows("multivariate_normal",
           ("state not an RNGState", "jp.multivariate_normal(0, jnp.zeros(2), jnp.eye(2))",
            TypeError, f"multivariate_normal {STATE}"),
           ("unknown method", "jp.multivariate_normal(S, jnp.zeros(2), jnp.eye(2), method='lu')",
            ValueError, "multivariate_normal method accepts ('cholesky', 'eigh', 'svd'), but "
                        "was given 'lu'"),
           ("scalar mean", "jp.multivariate_normal(S, 0.0, jnp.eye(2))", ValueError,
            "multivariate_normal accepts mean of shape [..., d] and cov of shape [..., d, d], "
            "but was given shapes () and (2, 2)"),
           ("cov of the wrong size", "jp.multivariate_normal(S, jnp.zeros(2), jnp.eye(3))",
            ValueError, "but was given shapes (2,) and (3, 3)"),
           ("1-D cov", "jp.multivariate_normal(S, jnp.zeros(2), jnp.ones(2))", ValueError,
            "but was given shapes (2,) and (2,)"),
           ("batch not broadcastable to shape",
            "jp.multivariate_normal(S, jnp.zeros((3, 2)), jnp.eye(2), (4,))", ValueError,
            "multivariate_normal parameters must broadcast to shape (4,)"),
           ("str mean", "jp.multivariate_normal(S, 'x', jnp.eye(2))", TypeError,
            f"multivariate_normal mean {REAL} str 'x'"),
           ("list mean", "jp.multivariate_normal(S, [0.0, 0.0], jnp.eye(2))", TypeError,
            "list [0.0, 0.0]"),
           ("int dtype", "jp.multivariate_normal(S, jnp.zeros(2), jnp.eye(2), dtype=jnp.int32)",
            TypeError, f"multivariate_normal {FLOAT}")),
    # -- gamma, beta, dirichlet ------------------------------------------------------------
    *_rows("gamma",
           ("state not an RNGState", "jp.gamma(1, 1.0)", TypeError, f"gamma {STATE} int 1"),
           ("str a", "jp.gamma(S, 'a')", TypeError, f"gamma a {REAL} str 'a'"),
           ("int dtype", "jp.gamma(S, 1.0, dtype=jnp.int32)", TypeError, f"gamma {FLOAT}"),
           ("a not broadcastable to shape", "jp.gamma(S, np.ones(3), (2,))", ValueError,
            "gamma parameters must broadcast to shape (2,), but have shapes [(3,)]")),
    *_rows("beta",
           ("state not an RNGState", "jp.beta(None, 1.0, 1.0)", TypeError, f"beta {STATE}"),
           ("bool b", "jp.beta(S, 1.0, True)", TypeError, f"beta b {REAL} bool True"),
           ("a, b not broadcastable together", "jp.beta(S, np.ones(2), np.ones(3))",
            ValueError, "beta parameters must broadcast together, but have shapes "
                        "[(2,), (3,)]"),
           ("int dtype", "jp.beta(S, 1.0, 1.0, dtype=jnp.uint8)", TypeError,
            f"beta {FLOAT}, but was given uint8")),
    *_rows("dirichlet",
           ("state not an RNGState", "jp.dirichlet(None, np.ones(2))", TypeError,
            f"dirichlet {STATE}"),
           ("scalar alpha", "jp.dirichlet(S, 1.0)", ValueError,
            "dirichlet alpha must have at least one dimension, but was given a scalar"),
           ("str alpha", "jp.dirichlet(S, 'a')", TypeError, f"dirichlet alpha {REAL} str 'a'"),
           ("batch not broadcastable to shape", "jp.dirichlet(S, np.ones((3, 2)), (4,))",
            ValueError, "dirichlet parameters must broadcast to shape (4,), but have shapes "
                        "[(3,)]"),
           ("int dtype", "jp.dirichlet(S, np.ones(2), dtype=jnp.int32)", TypeError,
            f"dirichlet {FLOAT}")),
    # -- jaxpmac/_samplers/_derived_continuous.py --------------------------------------------------
    *[row for name, call, param in (("t", "jp.t(S, {})", "df"),
                                    ("lognormal", "jp.lognormal(S, {})", "sigma"),
                                    ("chisquare", "jp.chisquare(S, {})", "df"),
                                    ("loggamma", "jp.loggamma(S, {})", "a"),
                                    ("pareto", "jp.pareto(S, {})", "b"),
                                    ("rayleigh", "jp.rayleigh(S, {})", "scale"),
                                    ("wald", "jp.wald(S, {})", "mean"),
                                    ("generalized_normal", "jp.generalized_normal(S, {})", "p"))
      for row in _rows(name,
                       ("state not an RNGState", f"jp.{name}(None, 1.0)", TypeError,
                        f"{name} {STATE} NoneType None"),
                       (f"str {param}", call.format("'1'"), TypeError,
                        f"{name} {param} {REAL} str '1'"),
                       ("int dtype", call.format("1.0")[:-1] + ", dtype=jnp.int32)", TypeError,
                        f"{name} {FLOAT}, but was given int32"),
                       (f"{param} not broadcastable to shape",
                        call.format("np.ones(3)")[:-1] + ", (2,))", ValueError,
                        f"{name} parameters must broadcast to shape (2,), but have shapes "
                        f"[(3,)]"))],
    *_rows("lognormal",
           ("float64 with x64 off", "jp.lognormal(S, dtype=jnp.float64)", TypeError,
            f"lognormal dtype float64 {X64}")),
    *_rows("generalized_normal",
           ("array p with the default shape ()", "jp.generalized_normal(S, np.ones(3))",
            ValueError, "generalized_normal parameters must broadcast to shape (), but have "
                        "shapes [(3,)]")),
    *_rows("f",
           ("state not an RNGState", "jp.f(0, 1.0, 1.0)", TypeError, f"f {STATE} int 0"),
           ("bool dfden", "jp.f(S, 1.0, True)", TypeError, f"f dfden {REAL} bool True"),
           ("dfnum, dfden not broadcastable together", "jp.f(S, np.ones(2), np.ones(3))",
            ValueError, "f parameters must broadcast together, but have shapes [(2,), (3,)]"),
           ("int dtype", "jp.f(S, 1.0, 1.0, dtype=jnp.int32)", TypeError,
            f"f {FLOAT}, but was given int32")),
    *_rows("weibull_min",
           ("state not an RNGState", "jp.weibull_min('s', 1.0, 1.0)", TypeError,
            f"weibull_min {STATE} str 's'"),
           ("list concentration", "jp.weibull_min(S, 1.0, [1.0, 2.0])", TypeError,
            f"weibull_min concentration {REAL} list [1.0, 2.0]"),
           ("array scale with the default shape ()", "jp.weibull_min(S, np.ones(3), 1.0)",
            ValueError, "weibull_min parameters must broadcast to shape (), but have shapes "
                        "[(3,), ()]"),
           ("int dtype", "jp.weibull_min(S, 1.0, 1.0, (2,), jnp.int32)", TypeError,
            f"weibull_min {FLOAT}, but was given int32")),
    *_rows("maxwell",
           ("state not an RNGState", "jp.maxwell(None)", TypeError, f"maxwell {STATE}"),
           ("int dtype", "jp.maxwell(S, (2,), jnp.int32)", TypeError,
            f"maxwell {FLOAT}, but was given int32"),
           ("negative dim", "jp.maxwell(S, (2, -1))", ValueError, f"maxwell {SHAPE} (2, -1)")),
    *_rows("double_sided_maxwell",
           ("state not an RNGState", "jp.double_sided_maxwell(None, 0.0, 1.0)", TypeError,
            f"double_sided_maxwell {STATE}"),
           ("str loc", "jp.double_sided_maxwell(S, 'a', 1.0)", TypeError,
            f"double_sided_maxwell loc {REAL} str 'a'"),
           ("loc, scale not broadcastable to shape",
            "jp.double_sided_maxwell(S, np.zeros(2), np.ones(3), (3,))", ValueError,
            "double_sided_maxwell parameters must broadcast to shape (3,), but have shapes "
            "[(2,), (3,)]"),
           ("int dtype", "jp.double_sided_maxwell(S, 0.0, 1.0, dtype=jnp.int32)", TypeError,
            f"double_sided_maxwell {FLOAT}")),
    *_rows("triangular",
           ("state not an RNGState", "jp.triangular(1, 0.0, 0.5, 1.0)", TypeError,
            f"triangular {STATE} int 1"),
           ("complex mode", "jp.triangular(S, 0.0, 0.5j, 1.0)", TypeError,
            f"triangular mode {REAL} complex 0.5j"),
           ("bounds not broadcastable together",
            "jp.triangular(S, np.zeros(2), 0.5, np.ones(3))", ValueError,
            "triangular parameters must broadcast together, but have shapes [(2,), (), (3,)]"),
           ("int dtype", "jp.triangular(S, 0.0, 0.5, 1.0, dtype=jnp.int32)", TypeError,
            f"triangular {FLOAT}")),
    # -- poisson, binomial -----------------------------------------------------------------
    *_rows("poisson",
           ("state not an RNGState", "jp.poisson(None, 1.0)", TypeError, f"poisson {STATE}"),
           ("float dtype", "jp.poisson(S, 1.0, dtype=jnp.float32)", TypeError,
            f"poisson {INT} (64-bit types need jax_enable_x64), but was given float32"),
           ("int64 with x64 off", "jp.poisson(S, 1.0, dtype=jnp.int64)", TypeError,
            f"poisson dtype int64 {X64}"),
           ("str lam", "jp.poisson(S, '1')", TypeError, f"poisson lam {REAL} str '1'"),
           ("lam not broadcastable to shape", "jp.poisson(S, np.ones(3), (2,))", ValueError,
            "poisson parameters must broadcast to shape (2,)")),
    *_rows("binomial",
           ("state not an RNGState", "jp.binomial(None, 3, 0.5)", TypeError,
            f"binomial {STATE}"),
           ("str n", "jp.binomial(S, '3', 0.5)", TypeError, f"binomial n {REAL} str '3'"),
           ("bool p", "jp.binomial(S, 3, False)", TypeError, f"binomial p {REAL} bool False"),
           ("int dtype", "jp.binomial(S, 3, 0.5, dtype=jnp.int32)", TypeError,
            f"binomial {FLOAT}, but was given int32"),
           ("n, p not broadcastable together", "jp.binomial(S, np.ones(2), np.full(3, 0.5))",
            ValueError, "binomial parameters must broadcast together")),
    # -- rademacher, geometric, multinomial -------------------------------------------------
    *_rows("rademacher",
           ("state not an RNGState", "jp.rademacher(0, (2,))", TypeError,
            f"rademacher {STATE} int 0"),
           ("unsigned dtype", "jp.rademacher(S, (2,), jnp.uint8)", TypeError,
            "rademacher dtype accepts int8, int16, int32, int64, float16, bfloat16, float32 or "
            "float64 (64-bit types need jax_enable_x64), but was given uint8"),
           ("int64 with x64 off", "jp.rademacher(S, (2,), jnp.int64)", TypeError,
            f"rademacher dtype int64 {X64}"),
           ("negative dim", "jp.rademacher(S, (-1,))", ValueError, f"rademacher {SHAPE} (-1,)")),
    *_rows("geometric",
           ("state not an RNGState", "jp.geometric(None, 0.5)", TypeError,
            f"geometric {STATE} NoneType None"),
           ("float dtype", "jp.geometric(S, 0.5, (2,), jnp.float32)", TypeError,
            f"geometric {INT} (64-bit types need jax_enable_x64), but was given float32"),
           ("str p", "jp.geometric(S, '0.5')", TypeError, f"geometric p {REAL} str '0.5'"),
           ("p not broadcastable to shape", "jp.geometric(S, np.full(3, 0.5), (2,))",
            ValueError, "geometric parameters must broadcast to shape (2,), but have shapes "
                        "[(3,)]")),
    *_rows("multinomial",
           ("state not an RNGState", "jp.multinomial(None, 3, np.ones(2))", TypeError,
            f"multinomial {STATE}"),
           ("int dtype", "jp.multinomial(S, 3, np.ones(2), dtype=jnp.int32)", TypeError,
            f"multinomial {FLOAT}, but was given int32"),
           ("scalar p", "jp.multinomial(S, 3, 0.5)", ValueError,
            "multinomial p must have at least one dimension (the categories), but was given a "
            "scalar"),
           ("str n", "jp.multinomial(S, '3', np.ones(2))", TypeError,
            f"multinomial n {REAL} str '3'"),
           ("n not broadcastable to the batch shape",
            "jp.multinomial(S, np.ones(3), np.ones((2, 4)))", ValueError,
            "multinomial parameters must broadcast together, but have shapes [(3,), (2,)]"),
           ("shape given positionally", "jp.multinomial(S, 3, np.ones(2), (4,))", TypeError,
            "takes 3 positional arguments but 4 were given"),
           ("unroll not an int", "jp.multinomial(S, 3, np.ones(2), unroll=1.5)", TypeError,
            "multinomial unroll accepts an int or a bool, but was given float 1.5")),
    # -- orthogonal, ball --------------------------------------------------------------------
    *_rows("orthogonal",
           ("state not an RNGState", "jp.orthogonal(None, 3)", TypeError,
            f"orthogonal {STATE}"),
           ("float n", "jp.orthogonal(S, 3.0)", TypeError,
            "orthogonal n accepts a non-negative int (the number of rows), but was given "
            "float 3.0"),
           ("negative m", "jp.orthogonal(S, 3, m=-1)", ValueError,
            "orthogonal m accepts a non-negative int (the number of columns), but was given -1"),
           ("traced n (needs concrete)", "jax.jit(lambda n: jp.orthogonal(S, n))(3)", TypeError,
            "orthogonal n must be a concrete int (it fixes the output shape), but was given "
            "traced array of dtype int32 and shape ()"),
           ("int dtype", "jp.orthogonal(S, 3, (), jnp.int32)", TypeError,
            f"orthogonal {FLOAT}, but was given int32"),
           ("negative dim", "jp.orthogonal(S, 3, (-1,))", ValueError,
            f"orthogonal {SHAPE} (-1,)")),
    *_rows("ball",
           ("state not an RNGState", "jp.ball(None, 3)", TypeError, f"ball {STATE}"),
           ("float d", "jp.ball(S, 2.5)", TypeError,
            "ball d accepts a non-negative int (the dimension), but was given float 2.5"),
           ("negative d", "jp.ball(S, -3)", ValueError,
            "ball d accepts a non-negative int (the dimension), but was given -3"),
           ("str p", "jp.ball(S, 3, 'inf')", TypeError, f"ball p {REAL} str 'inf'"),
           ("p not broadcastable to shape", "jp.ball(S, 3, np.ones(3), (2,))", ValueError,
            "ball parameters must broadcast to shape (2,), but have shapes [(3,)]"),
           ("float64 with x64 off", "jp.ball(S, 3, dtype=jnp.float64)", TypeError,
            f"ball dtype float64 {X64}")),
    # -- choice, permutation, categorical --------------------------------------------------
    *_rows("choice",
           ("state not an RNGState", "jp.choice(None, 5)", TypeError, f"choice {STATE}"),
           ("unknown mode", "jp.choice(S, 5, mode='x')", ValueError,
            "choice mode accepts None, 'low' or 'high', but was given 'x'"),
           ("float a", "jp.choice(S, 5.0)", TypeError, "choice a accepts an int or an array "
                                                      "with at least one dimension, but was "
                                                      "given float 5.0"),
           ("bool a", "jp.choice(S, True)", TypeError, "but was given bool True"),
           ("negative a", "jp.choice(S, -1, (0,))", ValueError,
            "choice a must be non-negative, but was given -1"),
           ("str a", "jp.choice(S, 'abc')", TypeError, "but was given str 'abc'"),
           ("traced int a (needs concrete)", "jax.jit(lambda n: jp.choice(S, n, (2,)))(5)",
            TypeError, "choice a must be a concrete int (it fixes the output shape), but was "
                       "given traced array of dtype int32 and shape ()"),
           ("replace not a bool", "jp.choice(S, 5, (2,), replace=0)", TypeError,
            "choice replace accepts True or False, but was given int 0"),
           ("more draws than entries without replacement",
            "jp.choice(S, 3, (4,), replace=False)", ValueError,
            "choice without replacement draws at most 3 entries, but shape (4,) asks for 4"),
           ("empty population", "jp.choice(S, 0, (2,))", ValueError,
            "choice needs a non-empty population to draw from"),
           ("p of the wrong length", "jp.choice(S, 5, (2,), p=np.ones(4))", ValueError,
            "choice p must have shape (5,) to match a, but was given shape (4,)"),
           ("str p", "jp.choice(S, 5, (2,), p='x')", TypeError, f"choice p {REAL} str 'x'"),
           ("negative weight in p", "jp.choice(S, 3, (8,), p=np.array([-1., 1., 1.]))",
            ValueError, f"choice p {P_WEIGHTS}, but was given p[0] = -1.0"),
           ("all-zero p", "jp.choice(S, 3, (2,), p=np.zeros(3))", ValueError,
            "but was given all-zero weights"),
           ("NaN in p", "jp.choice(S, 3, (2,), p=jnp.array([1., jnp.nan, 1.]))", ValueError,
            "but was given p[1] = nan"),
           ("inf in p", "jp.choice(S, 3, (2,), replace=False, p=np.array([1., np.inf, 1.]))",
            ValueError, "but was given p[1] = inf"),
           ("sum of p overflows", "jp.choice(S, 2, (2,), p=np.full(2, 3e38))", ValueError,
            "but was given weights whose sum overflows float32 (rescale p)"),
           ("negative weight, closed over under jit",
            "jax.jit(lambda: jp.choice(S, 3, (2,), p=np.array([1., -1., 1.])))()", ValueError,
            "but was given p[1] = -1.0"),
           ("fewer positive weights than draws without replacement",
            "jp.choice(S, 3, (2,), replace=False, p=np.array([1., 0., 0.]))", ValueError,
            "choice without replacement draws at most as many entries as p has positive "
            "weights, but p has 1 and shape (2,) asks for 2"),
           ("axis out of range", "jp.choice(S, np.ones((2, 3)), (2,), axis=2)", ValueError,
            "choice axis 2 is out of range for an array of 2 dimensions"),
           ("float axis", "jp.choice(S, np.ones((2, 3)), (2,), axis=1.0)", TypeError,
            "choice axis accepts an int, but was given float 1.0"),
           ("negative dim", "jp.choice(S, 5, (-1,))", ValueError, f"choice {SHAPE} (-1,)")),
    *_rows("permutation",
           ("state not an RNGState", "jp.permutation(None, 5)", TypeError,
            f"permutation {STATE} NoneType None"),
           ("float x", "jp.permutation(S, 5.0)", TypeError,
            "permutation x accepts an int or an array with at least one dimension, but was "
            "given float 5.0"),
           ("bool x", "jp.permutation(S, True)", TypeError, "but was given bool True"),
           ("negative x", "jp.permutation(S, -2)", ValueError,
            "permutation x must be non-negative, but was given -2"),
           ("str x", "jp.permutation(S, 'abc')", TypeError, "but was given str 'abc'"),
           ("traced int x (needs concrete)", "jax.jit(lambda n: jp.permutation(S, n))(5)",
            TypeError, "permutation x must be a concrete int (it fixes the output shape)"),
           ("independent not a bool", "jp.permutation(S, 5, independent='yes')", TypeError,
            "permutation independent accepts True or False, but was given str 'yes'"),
           ("axis out of range", "jp.permutation(S, np.ones((2, 3)), axis=-3)", ValueError,
            "permutation axis -3 is out of range for an array of 2 dimensions"),
           ("None axis", "jp.permutation(S, np.ones((2, 3)), axis=None)", TypeError,
            "permutation axis accepts an int, but was given NoneType None")),
    *_rows("categorical",
           ("state not an RNGState", "jp.categorical(None, np.zeros(3))", TypeError,
            f"categorical {STATE}"),
           ("unknown mode", "jp.categorical(S, np.zeros(3), mode='x')", ValueError,
            "categorical mode accepts None, 'low' or 'high', but was given 'x'"),
           ("replace not a bool", "jp.categorical(S, np.zeros(3), replace=None)", TypeError,
            "categorical replace accepts True or False, but was given NoneType None"),
           ("scalar logits", "jp.categorical(S, 0.0)", ValueError,
            "categorical logits must have at least one dimension, but was given a scalar"),
           ("bool logits", "jp.categorical(S, np.array([True, False]))", TypeError,
            f"categorical logits {REAL} array of dtype bool and shape (2,)"),
           ("list logits", "jp.categorical(S, [0.0, 1.0])", TypeError, "list [0.0, 1.0]"),
           ("axis out of range", "jp.categorical(S, np.zeros(3), axis=1)", ValueError,
            "categorical axis 1 is out of range for an array of 1 dimensions"),
           ("shape not ending in the batch shape",
            "jp.categorical(S, np.zeros((2, 3)), shape=(4, 3))", ValueError,
            "categorical shape (4, 3) must end with a shape that the batch shape (2,) "
            "broadcasts to"),
           ("more draws than categories without replacement",
            "jp.categorical(S, np.zeros(3), shape=(4,), replace=False)", ValueError,
            "categorical without replacement draws at most 3 categories, but shape (4,) asks "
            "for 4"),
           ("no categories", "jp.categorical(S, np.zeros(0), shape=(2,))", ValueError,
            "categorical needs at least one category"),
           ("NaN logit", "jp.categorical(S, jnp.array([0., jnp.nan, 0.]))", ValueError,
            f"{LOGITS}, but was given logits[1] = nan"),
           ("row of only -inf", "jp.categorical(S, np.array([[0., 1.], [-np.inf, -np.inf]]))",
            ValueError, f"{LOGITS}, but was given only -inf in logits[1, :]"),
           ("several +inf in one row", "jp.categorical(S, np.array([np.inf, 0., np.inf]))",
            ValueError, "but was given logits[0] = inf and logits[2] = inf in one row (several "
            "+inf make softmax undefined)"),
           ("row of only -inf, closed over under jit",
            "jax.jit(lambda: jp.categorical(S, np.full((3, 2), -np.inf), axis=0))()",
            ValueError, "but was given only -inf in logits[:, 0]"),
           ("fewer entries above -inf than draws without replacement",
            "jp.categorical(S, np.array([0., -np.inf, 1.]), shape=(3,), replace=False)",
            ValueError, "categorical without replacement draws at most as many categories as "
            "a row of logits has entries above -inf, but logits[:] has 2 and shape (3,) asks "
            "for 3")),
    # -- hail.rand_* -----------------------------------------------------------------------
    *_rows("hail.rand_unif",
           ("state not an RNGState", "hail.rand_unif(3)", TypeError, f"rand_unif {STATE} int 3"),
           ("str bound", "hail.rand_unif(S, '0')", TypeError,
            f"rand_unif lower {HAIL_REAL} (traced or not; vmap over states to draw many "
            f"values), but was given str '0'"),
           ("bool bound", "hail.rand_unif(S, True)", TypeError, "but was given bool True"),
           ("complex bound", "hail.rand_unif(S, 0.0, 1j)", TypeError,
            "rand_unif upper accepts a Python float or int"),
           ("bool array bound", "hail.rand_unif(S, 0.0, np.bool_(True))", TypeError,
            "but was given array of dtype bool and shape ()"),
           ("non-scalar bound", "hail.rand_unif(S, 0.0, np.ones(2))", ValueError,
            "rand_unif upper accepts a Python float or int, or a real scalar array"),
           ("size not a pair", "hail.rand_unif(S, size=3)", TypeError,
            f"rand_unif {HAIL_SIZE} (Hail's size=; the result is an (nrows, ncols) array), but "
            f"was given int 3"),
           ("size with a zero", "hail.rand_unif(S, size=(2, 0))", ValueError,
            "but was given (2, 0)")),
    *_rows("hail.rand_norm",
           ("state not an RNGState", "hail.rand_norm(None)", TypeError, f"rand_norm {STATE}"),
           ("str sd", "hail.rand_norm(S, 0.0, '1')", TypeError,
            f"rand_norm sd {HAIL_REAL}"),
           ("None mean", "hail.rand_norm(S, None)", TypeError,
            "rand_norm mean accepts a Python float or int"),
           ("non-scalar mean", "hail.rand_norm(S, np.zeros(2))", ValueError,
            "but was given array of dtype float64 and shape (2,)"),
           ("size of three ints", "hail.rand_norm(S, size=(2, 2, 2))", TypeError,
            f"rand_norm {HAIL_SIZE}"),
           ("float size", "hail.rand_norm(S, size=(2.0, 1))", TypeError,
            "but was given tuple (2.0, 1)")),
    *_rows("hail.rand_norm2d",
           ("state not an RNGState", "hail.rand_norm2d(None)", TypeError,
            f"rand_norm2d {STATE}"),
           ("mean of three", "hail.rand_norm2d(S, [0.0, 0.0, 0.0])", ValueError,
            "rand_norm2d mean accepts a sequence of 2 real numbers or a real 1-D array (traced "
            "or not) of shape (2,), but was given list [0.0, 0.0, 0.0]"),
           ("str cov", "hail.rand_norm2d(S, cov='abc')", TypeError,
            "rand_norm2d cov accepts a sequence of 3 real numbers"),
           ("2-D cov", "hail.rand_norm2d(S, cov=np.eye(2))", ValueError,
            "but was given array of dtype float64 and shape (2, 2)")),
    *_rows("hail.rand_int32",
           ("state not an RNGState", "hail.rand_int32(None, 3)", TypeError,
            f"rand_int32 {STATE}"),
           ("n = 0", "hail.rand_int32(S, 0)", ValueError, f"rand_int32 {HAIL_N}"),
           ("n too large", "hail.rand_int32(S, 2**31)", ValueError,
            "but was given 2147483648"),
           ("array n out of range", "hail.rand_int32(S, np.int32(0))", ValueError,
            "but was given 0 (array of dtype int32 and shape ())"),
           ("float n", "hail.rand_int32(S, 5.0)", TypeError, "but was given float 5.0"),
           ("bool n", "hail.rand_int32(S, True)", TypeError, "but was given bool True"),
           ("str n", "hail.rand_int32(S, '3')", TypeError, "but was given str '3'"),
           ("float array n", "hail.rand_int32(S, np.float32(3))", TypeError,
            "but was given array of dtype float32 and shape ()"),
           ("non-scalar n", "hail.rand_int32(S, np.array([3, 4]))", ValueError,
            "and shape (2,)"),
           ("b <= a", "hail.rand_int32(S, 5, 5)", ValueError,
            "rand_int32 accepts a < b with b - a < 2**31 (Hail draws rand_int32(b - a) + a), "
            "but was given a=5, b=5 (b - a = 0)"),
           ("b - a too large", "hail.rand_int32(S, -2**31, 2**31 - 1)", ValueError,
            "(b - a = 4294967295)"),
           ("b out of int32", "hail.rand_int32(S, 0, 2**31)", ValueError,
            "rand_int32 b accepts a Python int or an integer scalar array (traced or not), "
            "with a < b and b - a < 2**31 when both are concrete (an int32), but was given "
            "2147483648"),
           ("float b", "hail.rand_int32(S, 0, 2.5)", TypeError, "but was given float 2.5")),
    *_rows("hail.rand_int64",
           ("state not an RNGState", "hail.rand_int64(None)", TypeError,
            f"rand_int64 {STATE}"),
           ("x64 off", "hail.rand_int64(S)", TypeError,
            "rand_int64 returns int64, which needs 64-bit types: enable them with "
            "jax.config.update('jax_enable_x64', True)")),
    *_rows("hail.rand_bool",
           ("state not an RNGState", "hail.rand_bool(0, 0.5)", TypeError,
            f"rand_bool {STATE} int 0"),
           ("str p", "hail.rand_bool(S, '0.5')", TypeError, f"rand_bool p {HAIL_REAL}"),
           ("bool p", "hail.rand_bool(S, True)", TypeError, "but was given bool True"),
           ("non-scalar p", "hail.rand_bool(S, np.ones(2))", ValueError,
            "but was given array of dtype float64 and shape (2,)")),
    *_rows("hail.rand_cat",
           ("state not an RNGState", "hail.rand_cat(None, [1.0])", TypeError,
            f"rand_cat {STATE}"),
           ("empty prob", "hail.rand_cat(S, [])", ValueError,
            "rand_cat prob accepts a sequence of one or more real numbers or a real 1-D array "
            "(traced or not) of nonzero length, but was given list []"),
           ("2-D prob", "hail.rand_cat(S, np.ones((2, 2)))", ValueError,
            "but was given array of dtype float64 and shape (2, 2)"),
           ("bool weights", "hail.rand_cat(S, [True, False])", TypeError,
            "but was given list [True, False]")),
    *_rows("hail.shuffle",
           ("state not an RNGState", "hail.shuffle(None, [1, 2])", TypeError,
            f"shuffle {STATE}"),
           ("scalar a", "hail.shuffle(S, 5)", TypeError,
            "shuffle a accepts a sequence of numbers or a 1-D array, but was given int 5"),
           ("2-D a", "hail.shuffle(S, np.ones((2, 2)))", ValueError,
            "but was given array of dtype float64 and shape (2, 2)"),
           ("uids of another length", "hail.shuffle(S, [1, 2], uids=[0])", ValueError,
            "shuffle uids accepts None (each element's index) or one word per element of a: a "
            "sequence of Python ints in [-2**63, 2**64) or a 1-D integer array (traced or not) "
            "of a's length (2), but was given list [0]"),
           ("float uids", "hail.shuffle(S, [1, 2], uids=np.ones(2))", TypeError,
            "but was given array of dtype float64 and shape (2,)"),
           ("2-D uids", "hail.shuffle(S, [1, 2], uids=np.ones((2, 1), int))", ValueError,
            "but was given array of dtype int64 and shape (2, 1)"),
           ("uid out of range", "hail.shuffle(S, [1, 2], uids=[0, 2**64])", ValueError,
            "shuffle uids must be")),
    # jdistlib's samplers: x64 first (their domain errors, with x64 on, are in
    # tests/hail/test_hail_distributions.py).
    *_rows("hail.rand_pois",
           ("state not an RNGState", "hail.rand_pois(None, 3.0)", TypeError,
            f"rand_pois {STATE}"),
           ("x64 off", "hail.rand_pois(S, 3.0)", TypeError,
            "rand_pois reproduces Hail's float64 computation (jdistlib's rejection samplers), "
            "which needs 64-bit types: enable them with")),
    *_rows("hail.rand_gamma",
           ("state not an RNGState", "hail.rand_gamma(None, 2.0, 1.0)", TypeError,
            f"rand_gamma {STATE}"),
           ("x64 off", "hail.rand_gamma(S, 2.0, 1.0)", TypeError,
            "rand_gamma reproduces Hail's float64 computation (jdistlib's rejection samplers), "
            "which needs 64-bit types: enable them with")),
    *_rows("hail.rand_beta",
           ("state not an RNGState", "hail.rand_beta(None, 2.0, 3.0)", TypeError,
            f"rand_beta {STATE}"),
           ("x64 off", "hail.rand_beta(S, 2.0, 3.0)", TypeError,
            "rand_beta reproduces Hail's float64 computation (jdistlib's rejection samplers), "
            "which needs 64-bit types: enable them with")),
    *_rows("hail.rand_dirichlet",
           ("state not an RNGState", "hail.rand_dirichlet(None, [1.0, 2.0])", TypeError,
            f"rand_dirichlet {STATE}"),
           ("x64 off", "hail.rand_dirichlet(S, [1.0, 2.0])", TypeError,
            "rand_dirichlet reproduces Hail's float64 computation (jdistlib's rejection samplers), "
            "which needs 64-bit types: enable them with")),
    *_rows("hail.rand_hyper",
           ("state not an RNGState", "hail.rand_hyper(None, 10, 4, 3)", TypeError,
            f"rand_hyper {STATE}"),
           ("x64 off", "hail.rand_hyper(S, 10, 4, 3)", TypeError,
            "rand_hyper reproduces Hail's float64 computation (jdistlib's rejection samplers), "
            "which needs 64-bit types: enable them with")),
    *_rows("hail.rand_multi_hyper",
           ("state not an RNGState", "hail.rand_multi_hyper(None, [1, 2], 2)", TypeError,
            f"rand_multi_hyper {STATE}"),
           ("x64 off", "hail.rand_multi_hyper(S, [1, 2], 2)", TypeError,
            "rand_multi_hyper reproduces Hail's float64 computation (jdistlib's rejection samplers), "
            "which needs 64-bit types: enable them with")),
    # -- jax.random interop ----------------------------------------------------------------
    *_rows("as_jax_key",
           ("int", "jp.as_jax_key(0)", TypeError, f"as_jax_key {STATE} int 0"),
           ("already a jax key", "jp.as_jax_key(jax.random.key(0))", TypeError,
            "but was given a jax.random key of impl threefry2x32 (dtype key<fry>)")),
    *_rows("state_of",
           ("an RNGState", "jp.state_of(S)", TypeError,
            "state_of key accepts a typed jax.random key of jaxpmac.prng_impl (dtype "
            "key<pmac>: from jaxpmac.as_jax_key, jax.random.key(seed, impl='pmac'), and their "
            "split/fold_in), of any shape, traced or not, but was given RNGState"),
           ("a threefry key", "jp.state_of(jax.random.key(0))", TypeError,
            "but was given a jax.random key of impl threefry2x32 (dtype key<fry>)"),
           ("raw uint32 key data", "jp.state_of(jax.random.key_data(K))", TypeError,
            "but was given array of dtype uint32 and shape (19,)"),
           ("a batch of keys' state, drawn without vmap",
            "jp.normal(jp.state_of(jax.random.split(K, 2)))", ValueError,
            "drawing needs the state of one key, but this state holds keys of shape (2,): "
            "map over them with jax.vmap")),
    *_rows("fold_in_uids",
           ("an RNGState", "jp.fold_in_uids(S, 1)", TypeError,
            f"{KEY} (from jaxpmac.as_jax_key), but was given RNGState"),
           ("a threefry key", "jp.fold_in_uids(jax.random.key(0), 1)", TypeError,
            "but was given a jax.random key of impl threefry2x32"),
           ("raw uint32 key data", "jp.fold_in_uids(jnp.zeros(2, jnp.uint32), 1)", TypeError,
            "but was given array of dtype uint32 and shape (2,)"),
           ("float uid", "jp.fold_in_uids(K, 1.5)", TypeError,
            f"fold_in_uids argument 0 {UIDS} (traced or not), but was given float 1.5"),
           ("bool uid", "jp.fold_in_uids(K, True)", TypeError, "but was given bool True"),
           ("uid too large", "jp.fold_in_uids(K, 2**64)", ValueError,
            "fold_in_uids argument 0 must be a Python int in [-2**63, 2**64), but was given "
            "18446744073709551616"),
           ("2-D uid", "jp.fold_in_uids(K, np.ones((2, 2), np.int32))", ValueError,
            "but was given array of dtype int32 and shape (2, 2)")),
    *_rows("force_lowering",
           ("unknown lowering", 'jp.force_lowering("gpu")', ValueError,
            "force_lowering name accepts one of ('rolled', 'elementwise', 'elementwise_pairs', "
            "'kernel', 'mosaic_gpu_lane') or None, but was given 'gpu'")),
    # -- randomized, draw_sites, jaxpmac.rand ----------------------------------------------
    *_rows("randomized",
           ("not callable", "jp.randomized(3)", TypeError,
            "randomized accepts a callable, but was given int"),
           ("state not an RNGState", "jp.randomized(lambda x: x)(3, 1.0)", TypeError,
            f"randomized function's first argument (the state) {STATE} int 3"),
           ("a bad draw inside (the sampler's own error)",
            "jp.randomized(lambda: jp.rand.normal((2,), jnp.int32))(S)", TypeError,
            f"normal {FLOAT}, but was given int32"),
           ("traced count inside (needs concrete)",
            "jp.randomized(lambda n: jp.rand.permutation(n))(S, jnp.int32(5))", TypeError,
            "permutation x must be a concrete int (it fixes the output shape)"),
           ("traced shape inside (needs concrete)",
            "jp.randomized(lambda x: jp.rand.normal(x))(S, jnp.zeros(2))", TypeError,
            "normal shape accepts a sequence of non-negative ints")),
    *_rows("draw_sites",
           ("a bad draw inside (the sampler's own error)",
            "jp.draw_sites(lambda: jp.rand.normal((-1,)))", ValueError,
            f"normal {SHAPE} (-1,)"),
           ("not callable", "jp.draw_sites(3)", TypeError,
            "draw_sites accepts a callable, but was given int")),
    *_rows("check_streams",
           ("not callable", "jp.check_streams(3)", TypeError,
            "check_streams accepts a callable, but was given int"),
           ("a bad draw inside (the sampler's own error)",
            "jp.check_streams(lambda: jp.normal(S, (-1,)))", ValueError,
            f"normal {SHAPE} (-1,)")),
    *_rows("rand.*",
           ("called outside randomized", "jp.rand.normal((2,))", RuntimeError,
            "jaxpmac.rand.normal draws without a state and works only inside a function "
            "transformed by jaxpmac.randomized"),
           ("name not a non-empty str", "jp.randomized(lambda: jp.rand.normal((2,), name=''))(S)",
            TypeError, "jaxpmac.rand.normal name accepts a non-empty str or None, but was given"),
           ("keyed_by outside randomized", "jp.rand.keyed_by(3).__enter__()", RuntimeError,
            "jaxpmac.rand.keyed_by works only inside a function transformed by "
            "jaxpmac.randomized"),
           ("keyed_by with a float uid",
            "jp.randomized(lambda: jp.rand.keyed_by(1.5).__enter__())(S)", TypeError,
            "jaxpmac.rand.keyed_by uid accepts an int or an integer scalar array"),
           ("two draws of one name",
            "jp.randomized(lambda: (jp.rand.normal(name='a'), jp.rand.uniform(name='a')))(S)",
            ValueError, "two draws are named 'a'"),
           ("unhashable static argument",
            "jp.randomized(lambda: jp.rand.uniform((2,), minval={}))(S)", TypeError,
            "jaxpmac.rand.uniform minval accepts arrays or hashable static values, but was "
            "given dict {}"),
           ("bad Hail argument", "jp.randomized(lambda: jp.rand.hail_rand_int32(0))(S)",
            ValueError, f"rand_int32 {HAIL_N}"),
           ("hail_rand_int64 with x64 off", "jp.randomized(lambda: jp.rand.hail_rand_int64())(S)",
            TypeError, "rand_int64 returns int64, which needs 64-bit types"),
           ("concrete array bound out of the dtype's range",
            "jp.randomized(lambda: jp.rand.randint((2,), 0, np.int32(300), jnp.int8))(S)",
            ValueError, "randint maxval must lie in [-128, 128] for dtype int8"),
           ("concrete array bound out of range, under vmap",
            "jp.randomized(lambda: jax.vmap(lambda i: jp.rand.randint((2,), 0, np.int32(300), "
            "jnp.int8))(jnp.arange(2)))(S)",
            ValueError, "randint maxval must lie in [-128, 128] for dtype int8"),
           ("concrete parameter outside its domain",
            "jp.randomized(lambda: jp.rand.bernoulli(1.5))(S)", ValueError,
            "bernoulli p accepts values in [0, 1], but was given float 1.5")),
    # -- parameters outside their sampler's domain (_sampler_args.DOMAINS) -----------------
    *[Row(function, "parameter outside its domain", example, ValueError, message)
      for function, example, message in [
        ("uniform", "jp.uniform(S, minval=2.0, maxval=1.0)",
         "uniform minval, maxval accept minval <= maxval (elementwise, after broadcasting), "
         "but was given minval 2.0 and maxval 1.0"),
        ("randint", "jp.randint(S, (3,), 5, 2)",
         "randint minval, maxval accept minval < maxval (elementwise, after broadcasting), but "
         "was given minval 5 and maxval 2"),
        ("bernoulli", "jp.bernoulli(S, p=1.5)",
         "bernoulli p accepts values in [0, 1], but was given float 1.5"),
        ("geometric", "jp.geometric(S, jnp.array([0.5, -0.1]))",
         "geometric p accepts values in [0, 1] (or NaN, which gives -1), but was given array "
         "of dtype float32 and shape (2,) holding -0.1 at index (1,)"),
        ("poisson", "jp.poisson(S, -1.0)",
         "poisson lam accepts values >= 0 (or NaN, which gives -1), but was given float -1.0"),
        ("binomial", "jp.binomial(S, 5, 1.5)",
         "binomial p accepts values in [0, 1] (or NaN, which gives NaN), but was given "
         "float 1.5"),
        ("gamma", "jp.gamma(S, -1.0)",
         "gamma a accepts values >= 0 (or NaN, which gives NaN), but was given float -1.0"),
        ("beta", "jp.beta(S, 1.0, -2)", "beta b accepts values >= 0"),
        ("dirichlet", "jp.dirichlet(S, np.array([1.0, -1.0]))",
         "dirichlet alpha accepts values >= 0"),
        ("loggamma", "jp.loggamma(S, -1.0)", "loggamma a accepts values >= 0"),
        ("chisquare", "jp.chisquare(S, -1.0)", "chisquare df accepts values >= 0"),
        ("t", "jp.t(S, 0.0)", "t df accepts values > 0"),
        ("f", "jp.f(S, 1.0, 0.0)", "f dfden accepts values > 0"),
        ("lognormal", "jp.lognormal(S, -1.0)", "lognormal sigma accepts values >= 0"),
        ("pareto", "jp.pareto(S, 0.0)", "pareto b accepts values > 0"),
        ("weibull_min", "jp.weibull_min(S, 1.0, 0.0)",
         "weibull_min concentration accepts values > 0"),
        ("rayleigh", "jp.rayleigh(S, -1.0)", "rayleigh scale accepts values >= 0"),
        ("double_sided_maxwell", "jp.double_sided_maxwell(S, 0.0, -1.0)",
         "double_sided_maxwell scale accepts values >= 0"),
        ("wald", "jp.wald(S, 0.0)", "wald mean accepts values > 0"),
        ("generalized_normal", "jp.generalized_normal(S, float('inf'))",
         "generalized_normal p accepts finite values > 0"),
        ("triangular", "jp.triangular(S, 0.0, 2.0, 1.0)",
         "triangular left, mode, right accept left <= mode <= right"),
        ("ball", "jp.ball(S, 3, 0.0)", "ball p accepts finite values > 0"),
        ("multinomial", "jp.multinomial(S, -1.0, np.array([0.5, 0.5]))",
         "multinomial n accepts finite values >= 0"),
    ]],
]


class TracedRow(NamedTuple):
    """A bad value that only a concrete argument lets us reject: traced, it gives a visibly
    invalid output instead (docs/errors.md, "Bad values under jit and vmap")."""
    function: str
    bad_input: str
    example: str       # a Python expression: the draw, with the bad value traced
    result: str        # a Python expression equal to the draw (NaN equal to NaN)


INT32_MIN = "np.iinfo(np.int32).min"

TRACED_ROWS = [
    TracedRow("truncated_normal", "lower > upper",
              "jax.jit(lambda lo: jp.truncated_normal(S, lo, 0.0, (3,)))(1.0)",
              "[np.nan, np.nan, np.nan]"),
    TracedRow("truncated_normal", "lower > upper in one element (vmap)",
              "jax.vmap(lambda lo: jp.truncated_normal(S, lo, -1.0))(jnp.array([0., -1.]))",
              "[np.nan, -1.0]"),
    TracedRow("choice", "negative weight in p (int a)",
              "jax.jit(lambda p: jp.choice(S, 3, (4,), p=p))(jnp.array([-1., 1., 1.]))",
              "[-1, -1, -1, -1]"),
    TracedRow("choice", "all-zero p (float array a)",
              "jax.jit(lambda p: jp.choice(S, jnp.arange(3.), (2,), p=p))(jnp.zeros(3))",
              "[np.nan, np.nan]"),
    TracedRow("choice", "NaN in p (int32 array a)",
              "jax.vmap(lambda p: jp.choice(S, jnp.arange(3), (2,), p=p))"
              "(jnp.array([[1., jnp.nan, 1.]]))",
              f"[[{INT32_MIN}, {INT32_MIN}]]"),
    TracedRow("choice", "fewer positive weights than draws without replacement",
              "jax.jit(lambda p: jp.choice(S, 3, (2,), replace=False, p=p))"
              "(jnp.array([1., 0., 0.]))",
              "[-1, -1]"),
    TracedRow("categorical", "NaN logit (only its row)",
              "jax.jit(lambda l: jp.categorical(S, l))"
              "(jnp.array([[0., -jnp.inf], [jnp.nan, 0.]]))",
              "[0, -1]"),
    TracedRow("categorical", "row of only -inf (vmap)",
              "jax.vmap(lambda l: jp.categorical(S, l, shape=(2,)))"
              "(jnp.array([[-jnp.inf, -jnp.inf]]))",
              "[[-1, -1]]"),
    TracedRow("categorical", "several +inf in one row",
              "jax.jit(lambda l: jp.categorical(S, l, shape=(2,)))"
              "(jnp.array([jnp.inf, 0., jnp.inf]))",
              "[-1, -1]"),
    TracedRow("categorical", "fewer entries above -inf than draws without replacement",
              "jax.jit(lambda l: jp.categorical(S, l, shape=(2,), replace=False))"
              "(jnp.array([0., -jnp.inf, -jnp.inf]))",
              "[-1, -1]"),
    # Parameters outside their domain, traced: the documented output (concrete: a ValueError).
    TracedRow("uniform", "minval > maxval (jax.random's answer)",
              "jax.jit(lambda lo: jp.uniform(S, (2,), minval=lo, maxval=1.0))(2.0)",
              "[2.0, 2.0]"),
    TracedRow("randint", "maxval <= minval (jax.random's answer)",
              "jax.jit(lambda lo: jp.randint(S, (2,), lo, 2))(5)", "[5, 5]"),
    TracedRow("bernoulli", "p outside [0, 1] (clipped, as jax.random)",
              "jax.jit(lambda p: jp.bernoulli(S, p, (2,)))(1.5)", "[True, True]"),
    TracedRow("gamma", "a < 0", "jax.jit(lambda a: jp.gamma(S, a, (2,)))(-1.0)",
              "[np.nan, np.nan]"),
    TracedRow("poisson", "lam < 0", "jax.jit(lambda lam: jp.poisson(S, lam, (2,)))(-1.0)",
              "[-1, -1]"),
    TracedRow("t", "df <= 0", "jax.jit(lambda df: jp.t(S, df, (2,)))(0.0)", "[np.nan, np.nan]"),
]

NAMESPACE = {"jax": jax, "jnp": jnp, "np": np, "jp": jp, "hail": hail}


def _namespace():
    ns = dict(NAMESPACE)
    ns["S"] = jp.key(0)
    ns["K"] = jp.as_jax_key(ns["S"])
    return ns


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.function}: {r.bad_input}" for r in ROWS])
def test_error_row(row):
    assert not jax.config.jax_enable_x64  # the "x64 off" rows rely on the default
    call = eval(f"lambda: {row.example}", _namespace())  # noqa: S307 -- the table's own text
    with pytest.raises(row.error, match=re.escape(row.message)):
        call()


@pytest.mark.parametrize("row", TRACED_ROWS,
                         ids=[f"{r.function}: {r.bad_input}" for r in TRACED_ROWS])
def test_traced_row(row):
    ns = _namespace()
    np.testing.assert_array_equal(eval(row.example, ns), eval(row.result, ns))  # noqa: S307


def test_docs_show_the_generated_tables():
    with open(DOC, encoding="utf-8") as doc:
        text = doc.read()
    assert markdown_table() in text and traced_table() in text, (
        "regenerate the tables in docs/errors.md: PYTHONPATH=. python "
        "tests/samplers/test_error_table.py [--traced]")


def _rand_names():
    return sorted(name for name in jp.rand.__all__ if name != "keyed_by")


@pytest.mark.parametrize("name", _rand_names())
def test_every_keyless_draw_needs_randomized(name):
    """The ``rand.*`` row holds for every keyless sampler (its arguments are checked later)."""
    draw = getattr(jp.rand, name)
    required = [p for p in inspect.signature(draw).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    with pytest.raises(RuntimeError, match=re.escape(f"jaxpmac.rand.{name} draws without a "
                                                     f"state and works only inside")):
        draw(*[1] * len(required))


def test_table_covers_every_public_function():
    covered = {row.function for row in ROWS}
    public = {name for name in jp.__all__ if inspect.isfunction(getattr(jp, name))}
    public |= {f"hail.{name}" for name in hail.__all__}
    public |= {"RNGState.split", "RNGState.split_static", "rand.*"}
    assert public - covered == set()
    assert covered - public == set()  # no row names a function that is not public


def test_rows_are_unique_and_well_formed():
    keys = [(row.function, row.bad_input) for row in ROWS]
    assert len(keys) == len(set(keys))
    for row in ROWS:
        assert row.error in (TypeError, ValueError, RuntimeError)
        assert row.message and "|" not in row.example + row.message + row.bad_input
    traced = [(row.function, row.bad_input) for row in TRACED_ROWS]
    assert len(traced) == len(set(traced))
    for row in TRACED_ROWS:
        assert "|" not in row.example + row.result + row.bad_input


def markdown_table() -> str:
    """docs/errors.md's table: one line per row of ``ROWS``."""
    lines = ["| function | bad input | example | error type | message contains |",
             "|---|---|---|---|---|"]
    for row in ROWS:
        gap = " *(gap)*" if row.gap else ""
        lines.append(f"| `{row.function}` | {row.bad_input}{gap} | `{row.example}` | "
                     f"{row.error.__name__} | `{row.message}` |")
    return "\n".join(lines)


def traced_table() -> str:
    """docs/errors.md's table of bad values under jit and vmap: one line per ``TRACED_ROWS``."""
    lines = ["| function | bad value (traced) | example | result |", "|---|---|---|---|"]
    for row in TRACED_ROWS:
        lines.append(f"| `{row.function}` | {row.bad_input} | `{row.example}` | "
                     f"`{row.result}` |")
    return "\n".join(lines)


DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "errors.md")

if __name__ == "__main__":
    print(traced_table() if sys.argv[1:] == ["--traced"] else markdown_table())
