"""The API reference builds from the docstrings (``python docs/build_api.py``, needs pdoc)."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("pdoc") is None, reason="pdoc is not installed")
def test_the_api_reference_builds(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "build_api.py"), str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    page = (tmp_path / "jaxpmac.html").read_text()
    for name in ("RNGState.split", "key", "normal", "as_jax_key", "randomized"):
        assert f'id="{name}"' in page, name
    assert (tmp_path / "jaxpmac" / "hail.html").exists()
    assert (tmp_path / "jaxpmac" / "rand.html").exists()
    assert not list(tmp_path.rglob("_*.html")), "private modules are documented"
