"""Division and square root correctly rounded on every platform (``_correctly_rounded``).

The float64 form (GPUs) runs on this CPU under ``jp.force_lowering("elementwise")``, the switch
that gives any machine the GPU's program; a lent GPU ran the golden values
(``benchmarks/gpu_check.sh values``), and ``benchmarks/deviceless_ptx_audit.py`` reads the H100
compiler's PTX for approximate instructions.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from conftest import param
from golden_values import CASES, GOLDEN_FILE, ROOT, compute
from jaxpmac._samplers._correctly_rounded import divide, sqrt

FORMS = {"platform's": None, "float64": "elementwise"}


def _normal_floats(rng, n, dtype):
    """Finite, normal floats of every exponent and sign (XLA's CPU flushes subnormals to zero,
    numpy does not, so they are left out here)."""
    width = np.dtype(dtype).itemsize * 8
    bits = rng.integers(0, 2 ** width, n, dtype=np.uint64).astype(f"u{width // 8}")
    x = bits.view(dtype)
    tiny = jnp.finfo(dtype).tiny
    return x[np.isfinite(x) & (np.abs(x) >= tiny)]


def _same_bits(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    # NaNs compare as NaNs (their payloads are the compiler's).
    both_nan = np.isnan(actual) & np.isnan(expected)
    differ = (actual.view(f"u{actual.itemsize}") != expected.view(f"u{expected.itemsize}"))
    bad = np.flatnonzero(differ & ~both_nan)
    assert bad.size == 0, f"{bad.size} values differ, first {actual.flat[bad[0]]!r} != " \
                          f"{expected.flat[bad[0]]!r}"


def _specials(dtype):
    return np.array([0.0, -0.0, 1.0, -1.0, 3.0, np.inf, -np.inf, np.nan,
                     jnp.finfo(dtype).max, jnp.finfo(dtype).tiny], dtype)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16])
def test_divide_and_sqrt_are_the_correctly_rounded_values(form, dtype):
    """IEEE 754's quotient and root (numpy's), jitted and op by op, in each form."""
    rng = np.random.default_rng(29)
    x = np.concatenate([_normal_floats(rng, 4000, dtype), _specials(dtype)])
    y = np.concatenate([_normal_floats(rng, 4000, dtype), _specials(dtype)])
    x, y = x[-min(x.size, y.size):], y[-min(x.size, y.size):]
    with np.errstate(all="ignore"):
        quotient = x / y
        root = np.sqrt(x)
    keep = ~(np.abs(quotient) < jnp.finfo(dtype).tiny) | (quotient == 0)   # no subnormals
    # jax arrays: a numpy divisor is a constant, which ``divide`` multiplies by its reciprocal.
    x_kept, y_kept = jnp.asarray(x[keep]), jnp.asarray(y[keep])
    with jp.force_lowering(FORMS[form]):
        for run in (jax.jit, lambda f: f):
            _same_bits(np.asarray(run(divide)(x_kept, y_kept)), quotient[keep])
            _same_bits(np.asarray(run(sqrt)(jnp.asarray(x))), root)


@pytest.mark.parametrize("form", FORMS)
def test_vmap_and_disable_jit_give_the_jitted_values(form):
    rng = np.random.default_rng(30)
    x = jnp.asarray(np.abs(_normal_floats(rng, 64, np.float32)[:48].reshape(6, 8)) + 1)
    y = jnp.asarray(np.abs(_normal_floats(rng, 64, np.float32)[:48].reshape(6, 8)) + 1)
    with jp.force_lowering(FORMS[form]):
        want = np.asarray(jax.jit(divide)(x, y))
        _same_bits(jax.vmap(divide)(x, y), want)
        _same_bits(jax.vmap(divide, (0, None))(x, y[0]), np.asarray(jax.jit(divide)(x, y[:1])))
        _same_bits(jax.vmap(divide, (None, 1), 1)(x[:, 0], y), jax.jit(divide)(x[:, :1], y))
        _same_bits(jax.vmap(sqrt)(x), jax.jit(sqrt)(x))
        with jax.disable_jit():
            _same_bits(divide(x, y), want)
            _same_bits(sqrt(x), jax.jit(sqrt)(x))


def test_broadcast_and_constant_divisors_are_reciprocal_products():
    """What XLA's CPU compiler computes for ``A / broadcast(B)`` and ``A / constant``, on every
    platform and op by op: ``A * (1 / B)``."""
    x = jnp.linspace(1, 2, 24, dtype=jnp.float32).reshape(3, 8)
    s = jnp.array([[3.0], [7.0], [11.0]], jnp.float32)
    for form in FORMS.values():
        with jp.force_lowering(form):
            _same_bits(jax.jit(divide)(x, s), np.asarray(x) * (np.float32(1) / np.asarray(s)))
            _same_bits(divide(x, np.float32(3)), np.asarray(x) * (np.float32(1) / np.float32(3)))
            _same_bits(jax.jit(lambda a: divide(a, 3.0))(x),
                       np.asarray(x) * (np.float32(1) / np.float32(3)))


@pytest.mark.parametrize("form", FORMS)
def test_derivatives_are_lax_divs_and_sqrts(form):
    """``lax.div``'s and ``lax.sqrt``'s derivative rules, in these operations: gradients with
    the values of jax's own rules on a CPU (IEEE 754's division; a GPU's float32 division is
    approximate, and on an H200 jax's own gradient was an ulp off where ours was not); a forward
    derivative's two terms may round differently (XLA compiles ``lax.integer_pow`` its own
    way), by an ulp or two."""
    x = jnp.linspace(0.5, 3.0, 7, dtype=jnp.float32)
    y = jnp.linspace(1.5, 4.0, 7, dtype=jnp.float32)
    pairs = ((divide, jnp.divide),
             (lambda a, b: sqrt(a * b), lambda a, b: jnp.sqrt(a * b)))

    def jax_gradient_on_a_cpu(fn, argnums):
        cpu = jax.devices("cpu")[0]
        with jax.default_device(cpu):
            args = jax.device_put((x, y), cpu)
            return np.asarray(jax.grad(lambda a, b: fn(a, b).sum(), argnums)(*args))

    with jp.force_lowering(FORMS[form]):
        for ours, theirs in pairs:
            for argnums in (0, 1):
                _same_bits(jax.grad(lambda a, b: ours(a, b).sum(), argnums)(x, y),
                           jax_gradient_on_a_cpu(theirs, argnums))
            np.testing.assert_allclose(jax.jvp(ours, (x, y), (y, x))[1],
                                       jax.jvp(theirs, (x, y), (y, x))[1], rtol=3e-7)
            _same_bits(jax.jacfwd(ours)(x, y), jax.jacrev(ours)(x, y))


def test_the_float64_form_is_lowered_for_gpus_only():
    def lowered(platform):
        return jax.jit(lambda a, b: (divide(a, b), sqrt(a))).trace(
            jnp.ones(4), jnp.ones(4)).lower(lowering_platforms=(platform,)).as_text()

    for platform in ("cuda", "rocm"):
        assert "tensor<4xf64>" in lowered(platform)
    for platform in ("cpu", "tpu"):
        assert "f64" not in lowered(platform)


_NARROW_DIVISION = re.compile(r"stablehlo\.(divide|sqrt|rsqrt)\b[^\n]*tensor<[^>]*x?(f16|bf16|f32)>")
_FLOAT32_CASES = [case for case in CASES if "float32" in case.name or "x32" in case.name]
# Programs whose divisions another case's program has, in the slow run (6 s): the same program
# at other parameters or shapes (gamma's other a, the truncated normal's tail, normal's 2-d
# shape, the multivariate normal's d = 6, orthogonal's tall and wide forms, ball's other p and
# d), svd's factor (eigh's eigendecomposition, sorted) and gamma's own program (chisquare,
# loggamma: 2 exp(log x) and log x).
_SAME_DIVISIONS_AS_ANOTHER_CASE = {
    f"{name}/float32" for name in (
        "gamma/a=1.0", "gamma/a=4.5", "gamma/a=100.0", "truncated_normal_tail", "normal_2d",
        "multivariate_normal_d6", "multivariate_normal_svd", "orthogonal_7x3", "orthogonal_3x7",
        "ball_p0.6", "chisquare", "loggamma")}


@pytest.mark.parametrize("case", [
    param(case, id=case.name, slow=case.name in _SAME_DIVISIONS_AS_ANOTHER_CASE)
    for case in _FLOAT32_CASES])
def test_programs_lowered_for_a_gpu_divide_in_float64(case):
    """No float32 (or narrower) division or root in a golden program lowered for ``cuda``:
    every one is the float64 form (XLA's GPU compiler approximates the float32 ones)."""
    state = ROOT.split_static(case.name)
    with jax.enable_x64(case.x64):
        text = jax.jit(case.draw).trace(state).lower(lowering_platforms=("cuda",)).as_text()
    assert not _NARROW_DIVISION.findall(text)


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN_FILE) as stored:
        return {name: stored[name] for name in stored.files}


def _cases_marked_slow_but(names):
    return [param(case, slow=case.name not in names) for case in CASES]


# By default one program of each kind: normal's inverse CDF, gamma's rejection loop, the
# Jacobi eigendecomposition, binomial's counts and Hail's normal. t and dirichlet (14 s),
# gamma's program with normal's and a softmax, in the slow run with the others.
@pytest.mark.parametrize("case", _cases_marked_slow_but(
    {"normal/float32", "gamma/a=0.3/float32", "multivariate_normal_eigh/float32",
     "binomial/n=1000,p=0.5", "hail.rand_norm/x32"}),
    ids=[case.name for case in CASES])
def test_the_gpus_program_gives_the_golden_values_here(case, golden):
    """The GPU's program (its cipher form and the float64 divisions), run on this CPU, gives
    the golden values bit for bit (a few cases by default; all with ``-m slow``)."""
    with jp.force_lowering("elementwise"):
        values = compute(case)
    _same_bits(values, golden[case.name])
