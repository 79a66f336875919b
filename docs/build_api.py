"""Builds the API reference (HTML) from jaxpmac's docstrings with pdoc.

    pip install pdoc
    python docs/build_api.py            # writes docs/api/ (not committed); open docs/api/index.html
    python docs/build_api.py OUT_DIR

Documents ``jaxpmac`` (the names in its ``__all__``), ``jaxpmac.hail`` and ``jaxpmac.rand``,
from this checkout. Docstrings are Google style. Fails on a module that does not import.
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = ["jaxpmac"]                  # with its public submodules: jaxpmac.hail, jaxpmac.rand


def build(output_directory: pathlib.Path) -> pathlib.Path:
    sys.path.insert(0, str(ROOT))           # this checkout's jaxpmac, not an installed one
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="google", search=True, show_source=False)
    output_directory = pathlib.Path(output_directory)
    pdoc.pdoc(*MODULES, output_directory=output_directory)
    return output_directory


if __name__ == "__main__":
    out = build(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "api")
    print("API reference:", out / "index.html")
