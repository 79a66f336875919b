"""The notebooks in ``notebooks/`` run top to bottom, print what they claim, and are stored
executed.

Each notebook is executed in memory (the file on disk is never rewritten) by a fresh Jupyter
kernel whose working directory is ``notebooks/``, as when a user opens it there. Their sizes are
small: all five take about two minutes on a loaded 2-core CPU, most of it compiling.

Needs ``nbclient``, ``nbformat`` and ``ipykernel`` (the ``test`` extra) and the notebooks'
``matplotlib`` and ``scipy``. After editing a notebook, store it executed:
``jupyter nbconvert --to notebook --execute --inplace notebooks/NAME.ipynb``.
"""

from __future__ import annotations

import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
CELL_TIMEOUT_S = 300
MAX_NOTEBOOK_BYTES = 1_000_000

# Lines each notebook must print: its own checks, stated as "...: True" or similar, so a notebook
# that runs but shows a wrong result fails here.
EXPECTED_OUTPUT = {
    "01_quickstart.ipynb": [
        "same state, same bits: True",
        "split(7, 3) == split(7).split(3): True",
        "traced uid gives the same bits:   True",
        "offset reads later elements:      True",
        "step 57 reproduced: True",
        "example noise independent of batch layout: True",
        "label and uid are different words: True",
        "TypeError: split_static label 0 must be concrete",
        "key dtype: key<pmac>",
        "key(0, impl=jp.prng_impl) is as_jax_key(jp.key(0)): True",
        "jax.random.bits(as_jax_key(s)) == jp.bits(s): True",
        "fold_in(as_jax_key(s), 5) draws as s.split(5): True",
        "sharded == unsharded, bit for bit: True",
        "collectives in the compiled program: none",
    ],
    "02_design_and_hail.ipynb": [
        "jp.bits(state, (4,), uint64) == T_0: True",
        "jp.bits(state, (8,), uint32) == low/high halves of T_0: True",
        "rand_unif, rand_int32, rand_int64, rand_bool: 80 / 80 values identical",
        "(SPEC tolerance 1e-15)",
        "row 0 matches Hail: True",
    ],
    "03_benchmarks.ipynb": [
        "benchmarks/results/cpu/results.json",
    ],
    "04_implicit.ipynb": [
        "jit == eager, bit for bit: True",
        "RuntimeError: jaxpmac.rand.normal draws without a state",
        "normal    0     (2,)          ()",
        "uniform   1     (3,)          ('scan iteration @0:3',)",
        "implicit == explicit, bit for bit: True",
        "cond, batched predicate == unbatched, bit for bit: True",
        "Hail example, implicit == explicit, bit for bit: True",
    ],
    "05_kernels.ipynb": [
        "mask equals jp.bernoulli drawn outside: True",
        "output within 1e-6 of the reference: True",
        "one draw's mask, tile by tile: True",
    ],
}
NOTEBOOKS = sorted(p.name for p in NOTEBOOKS_DIR.glob("*.ipynb"))


def _stream_text(nb) -> str:
    return "".join(output.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", []) if output.get("output_type") == "stream")


def test_every_notebook_has_expectations():
    assert NOTEBOOKS == sorted(EXPECTED_OUTPUT)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom(name, monkeypatch):
    nb = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    # The kernel inherits this environment: jaxpmac importable without `pip install -e .`.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}})
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails

    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code_cells and all(cell.execution_count is not None for cell in code_cells)
    errors = [output for cell in code_cells for output in cell.outputs
              if output.get("output_type") == "error"]
    assert errors == []
    text = _stream_text(nb)
    missing = [line for line in EXPECTED_OUTPUT[name] if line not in text]
    assert missing == [], f"{name} did not print: {missing}"
    assert "NO" not in text.split(), f"{name} reported a mismatch"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stored_notebook_is_executed_and_small(name):
    """Stored with outputs, so it reads well on GitHub without running; small enough to diff."""
    path = NOTEBOOKS_DIR / name
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code_cells), \
        f"{name} is stored unexecuted: run jupyter nbconvert --execute --inplace on it"
    assert not any(output.get("output_type") == "error" for cell in code_cells
                   for output in cell.outputs)
    text = _stream_text(nb)
    assert [line for line in EXPECTED_OUTPUT[name] if line not in text] == []
