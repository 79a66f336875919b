"""docs/recipes: each page shows its ``.py`` file verbatim, and each ``.py`` runs (in a fresh
process, this checkout's jaxpmac first on the path) where its framework is installed."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import slow_except

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECIPES = ROOT / "docs" / "recipes"
NEEDS = {                          # the modules each recipe imports beyond jax and jaxpmac
    "numpyro_nuts": ["numpyro"],
    "blackjax_nuts": ["blackjax"],
    "optax_noise": ["optax"],
    "flax_nnx": ["flax"],
    "equinox_dropout": ["equinox"],
    "resume_at_step": ["orbax.checkpoint"],
}


def test_every_recipe_is_listed_and_has_its_page():
    assert sorted(p.stem for p in RECIPES.glob("*.py")) == sorted(NEEDS)
    index = (RECIPES / "README.md").read_text()
    for name in NEEDS:
        assert f"({name}.md)" in index
        page = (RECIPES / f"{name}.md").read_text()
        assert f"```python\n{(RECIPES / f'{name}.py').read_text()}```" in page, (
            f"{name}.md does not show {name}.py as it is")


def _missing(modules):
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except ModuleNotFoundError:
            return module
    return None


# Each run is a fresh process (~10 s): resuming a run and Flax NNX in the default run, the
# others in the slow run (and wherever their framework is missing, a skip).
@pytest.mark.parametrize("name", slow_except(sorted(NEEDS), ("resume_at_step", "flax_nnx")))
def test_recipe_runs(name):
    missing = _missing(NEEDS[name])
    if missing:
        pytest.skip(f"{missing} is not installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, str(RECIPES / f"{name}.py")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_predictive_refuses_a_pmac_key_as_the_numpyro_recipe_says():
    # numpyro_nuts.md's reason for its workaround: when this passes no more, update the page.
    if _missing(["numpyro"]):
        pytest.skip("numpyro is not installed")
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import Predictive

    import jaxpmac as jp

    def model():
        numpyro.sample("x", dist.Normal(0.0, 1.0))

    assert jax.random.key_data(jp.as_jax_key(jp.key(0))).shape != (2,)
    with pytest.raises(TypeError, match="Incorrect type for rng_seed"):
        Predictive(model, num_samples=2)(jp.as_jax_key(jp.key(0)))
