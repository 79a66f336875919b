"""The elementary functions of :mod:`jaxpmac._samplers._fixed_math` (issue 29): their accuracy
against numpy's (in long double where the host has it), their edge values, the same bits with
and without ``jit``, no float arithmetic that the static audit (``float_audit``) finds
instruction-set dependent, and the same bits under every ``--xla_cpu_max_isa`` this host runs.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from float_audit import audit
from isa_levels import host_levels, run_at_levels

from jaxpmac._samplers import _fixed_math as fm

LONG = np.longdouble
# Reference values in x87 long double (64-bit mantissa) are 11 bits better than float64; where
# the host's long double is float64 itself, the float64 accuracy tests are skipped.
LONG_IS_EXTENDED = np.finfo(LONG).nmant >= 63
PI = LONG("3.14159265358979323846264338327950288419716939937510")
DTYPES = [np.float32, np.float64]


def _ulp_errors(got, reference, dtype) -> np.ndarray:
    """|got - reference| in units of the last place of ``reference`` rounded to ``dtype``."""
    spacing = np.spacing(np.abs(reference.astype(dtype))).astype(LONG)
    return np.abs(np.asarray(got).astype(LONG) - reference) / spacing


def _max_ulp(function, x, reference, dtype) -> float:
    got = np.asarray(jax.jit(function)(x))
    assert got.dtype == dtype
    errors = _ulp_errors(got, reference, dtype)
    return float(errors.max())


def _needs_reference(dtype):
    if dtype == np.float64 and not LONG_IS_EXTENDED:
        pytest.skip("float64 references need an extended long double")


def _log_uniform(rng, low, high, n, dtype):
    return np.exp(rng.uniform(low, high, n)).astype(dtype)


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


# -- accuracy -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_log_accuracy(dtype):
    _needs_reference(dtype)
    rng = np.random.default_rng(1)
    info = np.finfo(dtype)
    high = np.log(float(info.max))
    x = np.concatenate([
        _log_uniform(rng, np.log(float(info.tiny)), high, 60000, dtype),
        rng.uniform(0.5, 2, 40000).astype(dtype),             # around k = 0 and sqrt(2)
        (1 + rng.uniform(-1e-3, 1e-3, 10000)).astype(dtype),   # near 1: f small
        np.array([info.tiny, info.max, 1, 2, 0.5, np.sqrt(2), np.sqrt(0.5)], dtype)])
    assert _max_ulp(fm.log, x, np.log(x.astype(LONG)), dtype) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_edges(dtype):
    tiny = np.finfo(dtype).tiny
    x = np.array([0, -0.0, tiny / 4, -tiny / 4, np.inf, -np.inf, -1, -tiny, np.nan, 1], dtype)
    expected = np.array([-np.inf, -np.inf, -np.inf, -np.inf, np.inf, np.nan, np.nan, np.nan,
                         np.nan, 0], dtype)
    np.testing.assert_array_equal(jax.jit(fm.log)(x), expected)


def test_exp_accuracy_f64():
    _needs_reference(np.float64)
    rng = np.random.default_rng(2)
    x = np.concatenate([
        rng.uniform(-708.3, 709.78, 60000),
        rng.uniform(-2, 2, 20000),
        rng.uniform(-1e-6, 1e-6, 5000),
        rng.uniform(-708.4, -708.39, 5000),                     # around the smallest normal
        rng.uniform(709.7, 709.7827, 5000),                     # below overflow
        [0.0, -0.0, 1.0, -1.0, 709.782712893383, np.log(2) / 2, 1.5 * np.log(2), -708.3964]])
    reference = np.exp(x.astype(LONG))
    # Results below the smallest normal are 0 by design (as XLA's CPU flushes them).
    reference = np.where(reference < np.finfo(np.float64).tiny, 0, reference)
    assert _max_ulp(fm.exp, x, reference, np.float64) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_exp_edges(dtype):
    info = np.finfo(dtype)
    x = np.array([np.inf, -np.inf, np.nan, 0, 1e4, -1e4, np.log(float(info.max)) * 1.001,
                  np.log(float(info.tiny)) * 1.001], dtype)
    expected = np.array([np.inf, 0, np.nan, 1, np.inf, 0, np.inf, 0], dtype)
    np.testing.assert_array_equal(jax.jit(fm.exp)(x), expected)
    # No subnormal results: 0 below the smallest normal.
    x = np.linspace(np.log(float(info.tiny)) - 20, np.log(float(info.tiny)) + 1, 4096,
                    dtype=dtype)
    y = np.asarray(jax.jit(fm.exp)(x))
    assert np.all((y == 0) | (y >= info.tiny))


def test_log1p_accuracy_f32():
    rng = np.random.default_rng(3)
    f32 = np.float32
    x = np.concatenate([
        rng.uniform(-1, 1, 40000).astype(f32),
        _log_uniform(rng, -30, np.log(1e30), 40000, f32),
        -_log_uniform(rng, -30, 0, 20000, f32),                 # down to -1
        rng.uniform(-1e-7, 1e-7, 5000).astype(f32),             # around u = 1 + x = 1
        np.array([1e-30, -1e-30, 2.0 ** -24, -(2.0 ** -25), 1e30, 1, -0.5, 3e38], f32)])
    x = x[x > -1]
    assert _max_ulp(fm.log1p, x, np.log1p(x.astype(LONG)), f32) <= 1.5


def test_log1p_edges_f32():
    x = np.float32([-1, -1.5, -np.inf, np.inf, np.nan, 0, -0.0, 1e-40])
    expected = np.float32([-np.inf, np.nan, np.nan, np.inf, np.nan, 0, -0.0, 1e-40])
    got = np.asarray(jax.jit(fm.log1p)(x))
    np.testing.assert_array_equal(got, expected)
    assert np.signbit(got[6])


def test_log1p_accuracy_f64():
    """float64 log1p keeps jax 0.10.2's algorithm (within 128 ulp on (1 - sqrt 2,
    sqrt(1/2) - 1), kept on purpose), its ``log(1 + x)`` branch now with this module's log."""
    _needs_reference(np.float64)
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-1, 3, 40000), _log_uniform(rng, -30, 700, 20000, float),
                        -_log_uniform(rng, -40, 0, 20000, float)])
    x = x[x > -1]
    errors = _ulp_errors(jax.jit(fm.log1p)(x), np.log1p(x.astype(LONG)), np.float64)
    kept = (x > 1 - np.sqrt(2)) & (x < np.sqrt(0.5) - 1)
    assert errors[kept].max() <= 128
    assert errors[~kept].max() <= 2.5


@pytest.mark.parametrize("dtype", DTYPES)
def test_sin_quarter_accuracy(dtype):
    _needs_reference(dtype)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0, np.pi / 2, 60000), _log_uniform(rng, -40, 0, 5000, float),
                        np.pi / 2 - _log_uniform(rng, -30, -1, 5000, float),
                        [0, np.pi / 4, np.pi / 2, np.pi / 6]]).astype(dtype)
    x = x[x <= dtype(np.pi / 2)]
    assert _max_ulp(fm.sin_quarter, x, np.sin(x.astype(LONG)), dtype) <= 2.0


def _tan_of_unit_reference(u):
    """tan(pi (u - 1/2)) in long double, from the nearer of 0 and the poles (u - 1/2, u and
    1 - u are exact there)."""
    u = u.astype(LONG)
    with np.errstate(divide="ignore"):
        return np.where(u < 0.25, -1 / np.tan(PI * u),
                        np.where(u > 0.75, 1 / np.tan(PI * (1 - u)), np.tan(PI * (u - 0.5))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tan_of_unit_accuracy(dtype):
    _needs_reference(dtype)
    rng = np.random.default_rng(6)
    u = np.concatenate([rng.uniform(0, 1, 60000), _log_uniform(rng, -60, -1, 5000, float),
                        1 - _log_uniform(rng, -20, -1, 5000, float),
                        0.5 + rng.uniform(-1e-6, 1e-6, 2000), [0.25, 0.75, 0.5]]).astype(dtype)
    u = u[(u > 0) & (u < 1)]
    assert _max_ulp(fm.tan_of_unit, u, _tan_of_unit_reference(u), dtype) <= 4.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_tan_of_unit_edges(dtype):
    got = np.asarray(jax.jit(fm.tan_of_unit)(np.array([0, 0.5, 0.25, 0.75], dtype)))
    np.testing.assert_array_equal(got, np.array([-np.inf, 0, -1, 1], dtype))
    # Odd about 1/2 where 1 - u is exact (u in [1/4, 1/2), a multiple of 2**-24): there
    # 1 - u, u and 1/2 - u are all exact, and the two sines' arguments the same.
    u = np.random.default_rng(7).integers(2 ** 22, 2 ** 23, 1000) * dtype(2.0 ** -24)
    tan = jax.jit(fm.tan_of_unit)
    np.testing.assert_array_equal(tan(1 - u), -np.asarray(tan(u)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lgamma(dtype):
    """lgamma against scipy's ``gammaln`` (error relative to ``max(1, |lgamma|)``, the same as
    with XLA's log, log1p and sin before issue 29: 2.5e-6 and 4e-15 above 1/2, 2.9e-6 and
    4.8e-15 below), with this module's log, log1p and sin_quarter."""
    scipy_special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.uniform(0.5, 30, 20000), _log_uniform(rng, 3, np.log(1e5), 5000,
                                                                  float)]).astype(dtype)
    got = np.asarray(jax.jit(fm.lgamma)(x)).astype(np.float64)
    expected = scipy_special.gammaln(x.astype(np.float64))
    scale = np.maximum(np.abs(expected), 1)
    tolerance = 1e-14 if dtype == np.float64 else 5e-6
    assert np.max(np.abs(got - expected) / scale) < tolerance
    # Reflection below 1/2 (away from the poles, where the absolute error grows).
    x = rng.uniform(-20, 0.5, 20000).astype(dtype)
    x = x[np.abs(x - np.round(x)) > 1e-2]
    got = np.asarray(jax.jit(fm.lgamma)(x)).astype(np.float64)
    expected = scipy_special.gammaln(x.astype(np.float64))
    tolerance = 1e-14 if dtype == np.float64 else 5e-6
    assert np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1)) < tolerance
    poles = np.array([0, -1, -7, np.inf, -np.inf], dtype)
    np.testing.assert_array_equal(jax.jit(fm.lgamma)(poles), np.full(5, np.inf, dtype))


# -- the same bits everywhere -------------------------------------------------------------------
FUNCTIONS = {
    "log": fm.log, "exp": fm.exp, "log1p": fm.log1p, "sin_quarter": fm.sin_quarter,
    "tan_of_unit": fm.tan_of_unit, "lgamma": fm.lgamma, "erfc": fm.erfc_f32,
}
# erfc_f32 is float32's (jaxpmac._samplers._fixed_erf.erfc serves both, tested there).
FLOAT32_ONLY = {"erfc"}


def _functions(dtype) -> dict:
    return {name: function for name, function in FUNCTIONS.items()
            if dtype == np.float32 or name not in FLOAT32_ONLY}


def _inputs(name: str, dtype, n: int) -> np.ndarray:
    """``n`` arguments in the range that matters for ``name`` (the same in every process)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    info = np.finfo(dtype)
    if name == "log":
        return np.exp(rng.uniform(np.log(float(info.tiny)), np.log(float(info.max)), n))\
            .astype(dtype)
    if name == "exp":
        return rng.uniform(np.log(float(info.tiny)) - 5, np.log(float(info.max)), n)\
            .astype(dtype)
    if name == "log1p":
        return np.where(rng.uniform(size=n) < 0.5, rng.uniform(-1, 1, n),
                        np.exp(rng.uniform(-30, 60, n))).astype(dtype)
    if name == "sin_quarter":
        return rng.uniform(0, np.pi / 2, n).astype(dtype)
    if name == "tan_of_unit":
        return rng.uniform(0, 1, n).astype(dtype)
    if name == "erfc":
        return rng.uniform(-10, 10, n).astype(dtype)
    return np.where(rng.uniform(size=n) < 0.2, rng.uniform(-20, 0.5, n),
                    np.exp(rng.uniform(np.log(0.5), np.log(1e5), n))).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_and_eager_agree(dtype):
    for name, function in _functions(dtype).items():
        x = _inputs(name, dtype, 2048)
        eager = np.asarray(function(jnp.asarray(x)))
        np.testing.assert_array_equal(np.asarray(jax.jit(function)(x)), eager, err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_audit_findings(dtype):
    """No product meets an addition unrounded and no XLA approximation remains, in each function
    and where its result meets an addition (its last product is rounded or ends in a select)."""
    for name, function in _functions(dtype).items():
        x = _inputs(name, dtype, 64)
        for program in (function, lambda x, f=function: f(x) + x):
            findings = audit(jax.jit(program).lower(x).compile().as_text())
            assert not findings, (name, [str(finding) for finding in findings])


_ISA_SCRIPT = """
import hashlib, json, sys
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
from samplers.test_fixed_math import _functions, _inputs
digests = {}
for dtype in (np.float32, np.float64):
    for name, function in _functions(dtype).items():
        x = _inputs(name, dtype, 65536)                 # a jit argument: not folded at compile
        y = np.asarray(jax.jit(function)(x))
        digests[name + "_" + dtype.__name__] = hashlib.sha256(y.tobytes()).hexdigest()
# A control: XLA's own float64 exp, which differs with and without FMA.
x = _inputs("exp", np.float64, 65536)
y = np.asarray(jax.jit(jax.lax.exp)(x))
digests["control"] = hashlib.sha256(y.tobytes()).hexdigest()
print("REPORT " + json.dumps(digests))
"""


def _digests(run) -> dict:
    assert run.returncode == 0, run.stderr[-4000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("REPORT ")]
    assert len(lines) == 1, run.stdout[-2000:] + run.stderr[-2000:]
    return json.loads(lines[0][len("REPORT "):])


def test_same_bits_on_every_instruction_set():
    isas = host_levels()
    if len(isas) < 2:
        pytest.skip("needs at least two x86 instruction set levels")
    runs = run_at_levels(["-c", _ISA_SCRIPT], isas, timeout=300)
    digests = {isa: _digests(run) for isa, run in runs.items()}
    first = digests[isas[0]]
    for isa in isas[1:]:
        differing = sorted(key for key in first if key != "control"
                           and digests[isa][key] != first[key])
        assert not differing, (isas[0], isa, differing)
    # The check can fail: XLA's own exp gives other bits with FMA than without (if the host has
    # FMA), so the flag did reach each child.
    fma = [isa for isa in isas if isa in ("AVX2", "AVX512")]
    no_fma = [isa for isa in isas if isa in ("SSE4_2", "AVX")]
    if fma and no_fma:
        assert digests[fma[0]]["control"] != digests[no_fma[0]]["control"]


# -- floor and nextafter in kernels (Mosaic GPU has neither) ------------------------------------
def _random_floats(rng, dtype, n):
    width = np.dtype(dtype).itemsize * 8
    bits = rng.integers(0, 2 ** 63, size=n, dtype=np.uint64)
    bits = bits if width == 64 else bits.astype(np.uint32)
    specials = np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.5, 2.0 ** 23 - 0.5, -(2.0 ** 52 - 0.5),
                         2.0 ** 24, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38], dtype)
    return np.concatenate([bits.view(dtype), specials])


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    unsigned = np.dtype(f"uint{got.dtype.itemsize * 8}")
    return ((got.view(unsigned) == want.view(unsigned)) | (np.isnan(got) & np.isnan(want))).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_floor_in_a_kernel_is_floor_bit_for_bit(dtype):
    import jaxpmac as jp
    x = _random_floats(np.random.default_rng(2), dtype, 1 << 16)
    with jp.force_lowering("kernel"):
        got = jax.jit(fm.floor)(x)
    assert _same_bits(got, jax.jit(jnp.floor)(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_next_after_in_a_kernel_is_nextafter_bit_for_bit(dtype):
    import jaxpmac as jp
    rng = np.random.default_rng(3)
    x = _random_floats(rng, dtype, 1 << 14)
    specials = x[-15:]
    xs = np.concatenate([x, x, x, np.repeat(specials, 15)])
    ys = np.concatenate([_random_floats(rng, dtype, 1 << 14), np.full_like(x, np.inf),
                         np.full_like(x, -np.inf), np.tile(specials, 15)])
    with jp.force_lowering("kernel"):
        got = jax.jit(fm.next_after)(xs, ys)
    assert _same_bits(got, jax.jit(jax.lax.nextafter)(xs, ys))


# A product whose fused multiply-add would differ: (1 + 2**-12)**2 - 1 is 2**-11 + 2**-24
# exactly, and 2**-11 with the product rounded first (2**-24 is half an ulp of the product:
# a tie, to even).
_TIE = np.float32(1 + 2 ** -12)


def _square_minus_one(x):
    return fm.unfused(x * x) - jnp.float32(1)


@pytest.mark.parametrize("form", ["eager", "jit", "vmap", "disable_jit", "kernel_lowering"])
def test_unfused_rounds_a_product_before_its_addition(form):
    import jaxpmac as jp
    x = jnp.full((4,), _TIE)
    if form == "eager":
        got = _square_minus_one(x)
    elif form == "jit":
        got = jax.jit(_square_minus_one)(x)
    elif form == "vmap":
        got = jax.jit(jax.vmap(_square_minus_one))(x)
    elif form == "disable_jit":
        with jax.disable_jit():
            got = _square_minus_one(x)
    else:
        with jp.force_lowering("kernel"):
            got = jax.jit(_square_minus_one)(x)
    np.testing.assert_array_equal(np.asarray(got), np.full((4,), 2.0 ** -11, np.float32))


def test_unfused_is_the_identity_to_derivatives():
    assert float(jax.grad(lambda x: fm.unfused(x * x))(np.float32(3))) == 6.0
    tangent = jax.jvp(fm.unfused, (jnp.float32(2),), (jnp.float32(5),))[1]
    assert float(tangent) == 5.0


@pytest.mark.parametrize("platform, guarded", [("cpu", True), ("rocm", True), ("tpu", True),
                                                ("cuda", False)])
def test_a_products_guard_is_lowered_only_where_a_compiler_could_fuse_it(platform, guarded):
    """``horner``'s products keep :func:`rounded`'s two caps in programs for platforms that
    could fuse them into the additions; XLA's CUDA backend never does (``mul.rn``/``add.rn``,
    checked in its PTX by ``benchmarks/deviceless_ptx_audit.py``), and there they cost nothing."""
    x = jnp.linspace(0.5, 1.5, 8, dtype=jnp.float32)
    traced = jax.jit(lambda v: fm.horner((1.5, -2.0, 0.25), v)).trace(x)
    minimums = traced.lower(lowering_platforms=(platform,)).as_text().count("stablehlo.minimum")
    assert minimums == (4 if guarded else 0)          # two caps for each of the two products
