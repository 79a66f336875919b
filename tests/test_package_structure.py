"""The package's structure: JAX internals in one module only."""

import ast
import pathlib

import jaxpmac

PACKAGE = pathlib.Path(jaxpmac.__file__).resolve().parent
# The one module allowed to reach into JAX's internals; it says why, and its use is tested on
# every supported jax (test_jax_interop's lookup by name, test_implicit's scan layouts).
INTERNALS_MODULE = PACKAGE / "_jax_compat.py"


def _imported_modules(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_only_the_compat_module_imports_jax_internals():
    offenders = {str(path.relative_to(PACKAGE)): sorted(n for n in _imported_modules(path)
                                                        if n.startswith("jax._src"))
                 for path in PACKAGE.rglob("*.py") if path != INTERNALS_MODULE}
    assert {k: v for k, v in offenders.items() if v} == {}
