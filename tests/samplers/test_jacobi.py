"""Tests of ``jaxpmac._samplers._jacobi.symmetric_eigen``, the cyclic Jacobi eigensolver built from
correctly rounded operations only (issue 29): accuracy against ``numpy.linalg.eigh`` (random
symmetric matrices, singular, rank-deficient and ill-conditioned covariances), the order and
sign rules that make its result unique, the same bits with and without ``jit`` and ``vmap``, no
instruction-set-dependent operation in its compiled program (``float_audit``), and the same bits
under every ``--xla_cpu_max_isa`` level the host has.

Bounds: Jacobi's rotations are backward stable, so the eigenvalues, ``V diag(w) V^T - a`` and
``V^T V - I`` are all within a small multiple of ``d eps ||a||`` (``d eps``). Measured over 64
matrices of each kind (d = 2 to 32): at most 1.8, 1.5 and 2.1 times ``d eps (||a||)``; the
tests allow 4.
"""

from __future__ import annotations

import pathlib

import jax
import numpy as np
import pytest
from conftest import slow_except
from float_audit import audit
from isa_levels import host_levels, run_at_levels

from jaxpmac._samplers import _jacobi
from jaxpmac._samplers._jacobi import symmetric_eigen


_DIMS = (1, 2, 3, 6, 16)
_BATCH = 8
_BOUND = 4.0        # times d eps ||a|| (eigenvalues, reconstruction) or d eps (orthogonality)
_DTYPES = (np.float32, np.float64)


def _symmetric(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


def _random_symmetric(rng, d, n=_BATCH):
    return _symmetric(rng.normal(size=(n, d, d)))


def _spectral(rng, eigenvalues):
    """``Q diag(eigenvalues) Q^T`` with ``Q`` Haar-random, one matrix a row of eigenvalues."""
    n, d = eigenvalues.shape
    q = np.linalg.qr(rng.normal(size=(n, d, d)))[0]
    return _symmetric((q * eigenvalues[:, None, :]) @ np.swapaxes(q, -1, -2))


def _covariances(rng, d):
    """``_BATCH`` PSD covariances: low rank (1 and d - 1; singular), a null space with the rest
    spread over 8 decades, condition numbers 1e6, 1e16 and 1e30 (float64: numerically
    singular), repeated eigenvalues, and one graded (scales from e**-8 to e**8)."""
    rank = lambda r: (lambda b: b @ np.swapaxes(b, -1, -2))(rng.normal(size=(1, d, r)))
    spread = lambda decades: np.logspace(0, -decades, d)[rng.permutation(d)][None]
    null_space = np.where(np.arange(d) < d // 2, 0.0, np.logspace(0, -8, d))[None]
    scale = np.exp(rng.uniform(-8, 8, d))
    graded = scale[:, None] * (rank(d) + np.eye(d)) * scale[None, :]
    return np.concatenate([
        rank(1), rank(max(d - 1, 1)), _spectral(rng, null_space), _spectral(rng, spread(6)),
        _spectral(rng, spread(16)), _spectral(rng, spread(30)),
        _spectral(rng, (np.arange(d) // 2 + 1.0)[None]), _symmetric(graded)])


def _check(a, w, v, dtype):
    """The accuracy bounds (module docstring) for each matrix of a batch, and the order and
    sign rules; returns numpy's eigenvalues."""
    d = a.shape[-1]
    eps = np.finfo(dtype).eps
    a, w, v = (np.asarray(x, np.float64) for x in (a, w, v))
    reference = np.linalg.eigvalsh(a)
    norm = np.abs(reference).max(-1)
    bound = _BOUND * d * eps * norm
    assert np.all(np.abs(w - reference).max(-1) <= bound)
    rebuilt = (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)
    assert np.all(np.abs(rebuilt - a).max((-1, -2)) <= bound)
    gram = np.swapaxes(v, -1, -2) @ v
    assert np.abs(gram - np.eye(d)).max() <= _BOUND * d * eps
    assert np.all(np.diff(w, axis=-1) >= 0)
    assert np.all(_largest_component(v) > 0)
    return reference


def _largest_component(v):
    """Each eigenvector's (column's) first component of the largest magnitude."""
    largest = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return np.take_along_axis(v, largest, axis=-2)[..., 0, :]


def _bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.itemsize}")


# float64 by default; float32 in the slow run (5 s): the same code in another width, and
# test_singular_and_ill_conditioned_covariances checks float32's bounds by default.
@pytest.mark.parametrize("dtype", slow_except(_DTYPES, keep=(np.float64,)))
def test_random_symmetric_matrices_against_numpy(dtype):
    rng = np.random.default_rng(29)
    with jax.enable_x64(dtype == np.float64):
        for d in _DIMS:
            a = _random_symmetric(rng, d).astype(dtype)
            w, v = jax.jit(symmetric_eigen)(a)
            assert w.dtype == v.dtype == dtype and w.shape == (_BATCH, d) and v.shape == a.shape
            _check(a, w, v, dtype)
            # Eigenvectors of eigenvalues at least 0.1 ||a|| from the others: within
            # d eps ||a|| / gap of numpy's, given the same sign (perturbation theory).
            a64 = a.astype(np.float64)
            reference_w, reference_v = np.linalg.eigh(a64)
            reference_v = reference_v * np.sign(_largest_component(reference_v))[..., None, :]
            gaps = np.diff(reference_w, axis=-1)
            gap = np.minimum(np.pad(gaps, ((0, 0), (1, 0)), constant_values=np.inf),
                             np.pad(gaps, ((0, 0), (0, 1)), constant_values=np.inf))
            norm = np.abs(reference_w).max(-1, keepdims=True)
            separated = gap >= 0.1 * norm
            error = np.abs(np.asarray(v, np.float64) - reference_v).max(-2)
            eps = np.finfo(dtype).eps
            assert np.all(error[separated] <= (_BOUND * d * eps * norm / gap)[separated])


@pytest.mark.parametrize("dtype", _DTYPES)
def test_singular_and_ill_conditioned_covariances(dtype):
    rng = np.random.default_rng(30)
    eps = np.finfo(dtype).eps
    with jax.enable_x64(dtype == np.float64):
        for d in (3, 6, 16):
            a = _covariances(rng, d).astype(dtype)
            w, v = jax.jit(symmetric_eigen)(a)
            reference = _check(a, w, v, dtype)
            # A PSD matrix's eigenvalues are >= 0 up to the bound: the factor
            # V sqrt(max(w, 0)) of multivariate_normal loses no more than that.
            norm = np.abs(reference).max(-1)
            assert np.all(np.asarray(w, np.float64).min(-1) >= -_BOUND * d * eps * norm)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_default_sweeps_have_converged(dtype):
    """Three sweeps more change no eigenvalue's bits (sweep_count leaves sweeps to spare)."""
    rng = np.random.default_rng(31)
    with jax.enable_x64(dtype == np.float64):
        a = _covariances(rng, 16).astype(dtype)
        extra = _jacobi.sweep_count(dtype, 16) + 3
        w = jax.jit(symmetric_eigen)(a)[0]
        w_more = jax.jit(lambda x: symmetric_eigen(x, sweeps=extra))(a)[0]
    np.testing.assert_array_equal(_bits(w), _bits(w_more))


def test_sweep_counts():
    assert _jacobi.sweep_count(np.float32, 1) == _jacobi.sweep_count(np.float64, 1) == 0
    assert [_jacobi.sweep_count(np.float32, d) for d in (2, 3, 16, 17, 64)] == [7, 9, 13, 15, 17]
    assert [_jacobi.sweep_count(np.float64, d) for d in (2, 3, 16, 17, 64)] == [7, 10, 16, 19, 22]


@pytest.mark.parametrize("dtype", _DTYPES)
def test_exact_cases(dtype):
    """Diagonal matrices (no rotation: the diagonal sorted, the eigenvectors a permutation),
    zero and 1 x 1 matrices, a 2 x 2 one (one rotation), a subnormal off-diagonal (left alone)
    and ones so small against the diagonal that theta**2, or theta, would overflow."""
    tiny = np.finfo(dtype).tiny
    eigen = jax.jit(symmetric_eigen)
    with jax.enable_x64(dtype == np.float64):
        w, v = eigen(np.diag(np.array([3.0, -1.0, 2.0, -1.0], dtype)))
        np.testing.assert_array_equal(w, [-1.0, -1.0, 2.0, 3.0])
        # Ties in order of the diagonal: the -1 at index 1 first.
        np.testing.assert_array_equal(v, np.eye(4)[:, [1, 3, 2, 0]])
        w, v = eigen(np.zeros((3, 3), dtype))
        np.testing.assert_array_equal(w, np.zeros(3))
        np.testing.assert_array_equal(v, np.eye(3))
        w, v = eigen(np.array([[[-2.5]], [[4.0]]], dtype))
        np.testing.assert_array_equal(w, [[-2.5], [4.0]])
        np.testing.assert_array_equal(v, np.ones((2, 1, 1)))
        w, v = eigen(np.array([[2.0, 1.0], [1.0, 2.0]], dtype))
        np.testing.assert_allclose(w, [1.0, 3.0], rtol=2 * np.finfo(dtype).eps)
        half = np.sqrt(dtype(0.5))
        np.testing.assert_allclose(v, [[half, half], [-half, half]],
                                   rtol=2 * np.finfo(dtype).eps)
        w, v = eigen(np.array([[1.0, tiny / 4], [tiny / 4, 2.0]], dtype))
        np.testing.assert_array_equal(w, [1.0, 2.0])
        np.testing.assert_array_equal(v, np.eye(2))
        # theta = 1e30: t = 1 / (2 theta), without theta**2 (inf in float32).
        big = dtype(1e30)
        w, v = eigen(np.array([[-big, 1.0], [1.0, big]], dtype))
        np.testing.assert_array_equal(w, [-big, big])
        t = dtype(0.5) / big
        np.testing.assert_array_equal(v, np.array([[1, t], [-t, 1]], dtype))
        # theta = inf: t = 0, the identity (a_pq is 1e-3 against eigenvalues of max / 4).
        big = np.finfo(dtype).max / 4
        w, v = eigen(np.array([[-big, 1e-3], [1e-3, big]], dtype))
        np.testing.assert_array_equal(w, [-big, big])
        np.testing.assert_array_equal(v, np.eye(2))
        # A NaN anywhere spreads to every eigenvalue and eigenvector.
        w, v = eigen(np.array([[1.0, 0.5, np.nan], [0.5, 2.0, 0.0], [np.nan, 0.0, 3.0]], dtype))
        assert np.isnan(w).all() and np.isnan(v).all()


def test_bad_input_is_refused():
    with pytest.raises(TypeError, match="float32 or float64"):
        symmetric_eigen(np.eye(2, dtype=np.float16))
    with pytest.raises(TypeError, match="float32 or float64"):
        symmetric_eigen(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match=r"\[\.\.\., d, d\]"):
        symmetric_eigen(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[\.\.\., d, d\]"):
        symmetric_eigen(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="sweeps >= 0"):
        symmetric_eigen(np.eye(2, dtype=np.float32), sweeps=-1)


# float32 by default, float64 (7 s: the same code in another width) in the slow run.
@pytest.mark.parametrize("dtype", slow_except(_DTYPES, keep=(np.float32,)))
def test_jit_and_eager_give_the_same_bits(dtype):
    rng = np.random.default_rng(32)
    with jax.enable_x64(dtype == np.float64):
        a = np.concatenate([_random_symmetric(rng, 6, 4), _covariances(rng, 6)]).astype(dtype)
        jitted = jax.jit(symmetric_eigen)(a)
        eager = symmetric_eigen(a)
    for x, y in zip(jitted, eager):
        np.testing.assert_array_equal(_bits(x), _bits(y))


# float32 by default, float64 (5 s: the same code in another width) in the slow run.
@pytest.mark.parametrize("dtype", slow_except(_DTYPES, keep=(np.float32,)))
def test_vmap_and_batches_give_each_matrix_its_own_bits(dtype):
    rng = np.random.default_rng(33)
    with jax.enable_x64(dtype == np.float64):
        a = np.concatenate([_random_symmetric(rng, 6, 2), _covariances(rng, 6)]).astype(dtype)
        single = jax.jit(symmetric_eigen)
        alone = [single(m) for m in a]
        mapped = jax.jit(jax.vmap(symmetric_eigen))(a)
        nested = jax.jit(symmetric_eigen)(a.reshape(2, 5, 6, 6))
    for i, (w, v) in enumerate(alone):
        np.testing.assert_array_equal(_bits(mapped[0][i]), _bits(w))
        np.testing.assert_array_equal(_bits(mapped[1][i]), _bits(v))
        np.testing.assert_array_equal(_bits(nested[0].reshape(10, 6)[i]), _bits(w))
        np.testing.assert_array_equal(_bits(nested[1].reshape(10, 6, 6)[i]), _bits(v))


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("d", [1, 3, 16])
def test_compiled_program_has_no_float_audit_finding(dtype, d):
    with jax.enable_x64(dtype == np.float64):
        a = np.zeros((_BATCH, d, d), dtype)
        text = jax.jit(symmetric_eigen).lower(a).compile().as_text()
    findings = audit(text)
    assert findings == [], "\n".join(map(str, findings))


# A child process per instruction set (XLA reads --xla_cpu_max_isa once, at start): the
# eigenvalues and eigenvectors of traced matrices (jit arguments) in each dtype, as bits.
_CHILD = """
import sys
import jax
import numpy as np
sys.path[:0] = sys.argv[2:]        # the test's folder (this module)
import test_jacobi as t
from jaxpmac._samplers._jacobi import symmetric_eigen

rng = np.random.default_rng(34)
matrices = {d: np.concatenate([t._random_symmetric(rng, d), t._covariances(rng, d)])
            for d in (3, 16)}
out = {}
with jax.enable_x64(True):
    for dtype in (np.float32, np.float64):
        for d, a in matrices.items():
            w, v = jax.jit(symmetric_eigen)(a.astype(dtype))
            out[f"w_{d}_{np.dtype(dtype).name}"] = t._bits(w)
            out[f"v_{d}_{np.dtype(dtype).name}"] = t._bits(v)
np.savez(sys.argv[1], **out)
"""


# The host's lowest and highest levels by default (without FMA and with it, where the host has
# both: what changes float values), each a child process compiling its programs; every level
# in the slow run (the levels between: a third of this test's 18 s on a 3-level host).
@pytest.mark.parametrize("which_levels", ["lowest_and_highest",
                                          pytest.param("every_level", marks=pytest.mark.slow)])
def test_same_bits_under_every_instruction_set(tmp_path, which_levels):
    levels = host_levels()
    if len(levels) < 2:
        pytest.skip("needs an x86 host with at least two --xla_cpu_max_isa levels")
    if which_levels == "lowest_and_highest":
        levels = [levels[0], levels[-1]]
    runs = run_at_levels(["-c", _CHILD, str(tmp_path / "{level}.npz"),
                          str(pathlib.Path(__file__).parent)], levels, timeout=300)
    for level, run in runs.items():
        assert run.returncode == 0, f"{level}: {run.stderr[-3000:]}"
    results = {level: dict(np.load(tmp_path / f"{level}.npz")) for level in levels}
    first, *others = levels
    differing = {(level, key): int(np.count_nonzero(bits != results[level][key]))
                 for level in others for key, bits in results[first].items()
                 if not np.array_equal(bits, results[level][key])}
    assert not differing, f"values that differ from {first}'s: {differing}"
