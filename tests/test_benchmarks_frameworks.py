"""``python -m benchmarks.frameworks``: its programs run with both keys, and a framework that
is not installed is skipped with a message (no timing asserts)."""

from __future__ import annotations

import functools
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import frameworks  # noqa: E402


def test_eight_schools_logdensity_is_the_non_centred_model():
    """At ``mu = 0``, ``tau = 1``, ``theta_tilde = 0``: the priors, the Jacobian of
    ``tau = exp(log_tau)`` (``log_tau = 0``) and the likelihood of ``y`` around 0."""
    params = {"mu": np.float32(0.0), "log_tau": np.float32(0.0),
              "theta_tilde": np.zeros(frameworks.J, np.float32)}
    expected = (stats.norm.logpdf(0.0, 0.0, 5.0) + stats.cauchy.logpdf(1.0, 0.0, 5.0)
                + frameworks.J * stats.norm.logpdf(0.0)
                + stats.norm.logpdf(frameworks.Y, 0.0, frameworks.SIGMA).sum())
    np.testing.assert_allclose(frameworks._eight_schools_logdensity(params), expected,
                               rtol=1e-5)


@pytest.mark.parametrize("impl", frameworks.IMPLS)
def test_flax_program_runs_with_each_key(impl):
    pytest.importorskip("flax.nnx")
    result = frameworks.flax_once(impl, seed=0, steps=2)
    assert set(result) == {"per step", "compile"}
    assert all(value > 0 for value in result.values())


@pytest.mark.parametrize("impl", frameworks.IMPLS)
def test_blackjax_program_counts_leapfrog_steps(impl):
    pytest.importorskip("blackjax")
    result = frameworks.blackjax_once(impl, seed=0, steps=3)
    assert set(result) == {"per step", "compile", "per leapfrog"}
    # At least one leapfrog step a NUTS step: a step is never cheaper than a leapfrog.
    assert result["per step"] >= result["per leapfrog"] > 0


def test_a_framework_not_installed_is_skipped_with_a_message(capsys):
    assert frameworks._installed("no_such_framework_module") is None
    assert "no_such_framework_module is not installed; skipped" in capsys.readouterr().out


def test_main_reports_pmac_over_threefry(capsys):
    pytest.importorskip("flax.nnx")
    assert frameworks.main(["--only", "flax", "--repeats", "1", "--flax-steps", "2"]) == 0
    out = capsys.readouterr().out
    assert "Flax NNX MLP with dropout" in out and "ratio pmac/threefry" in out


@pytest.mark.parametrize("program", ["nuts_init_and_step", "svi_init_and_update"])
def test_numpyro_programs_of_the_deviceless_benchmark_run_from_a_traced_seed(program):
    pytest.importorskip("numpyro")
    run = jax.jit(functools.partial(getattr(frameworks, program), impl="pmac"))
    assert all(np.isfinite(leaf).all() for leaf in jax.tree.leaves(run(jnp.uint32(1))))
