"""Python programs run under each x86 instruction-set level XLA's CPU compiler targets
(``XLA_FLAGS=--xla_cpu_max_isa=LEVEL``), one process per level: XLA reads the flag once, when
its CPU backend starts. The tests that check "the same bits on every instruction set" use it."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import Sequence

from benchmarks._host import host_isa_levels, xla_flags_with_isa

TESTS_DIR = pathlib.Path(__file__).resolve().parent
REPO = TESTS_DIR.parent


def host_levels() -> list[str]:
    """The levels this host's CPU allows, lowest first (empty off x86)."""
    return host_isa_levels()


def _environment(level: str) -> dict:
    path = os.pathsep.join(filter(None, [str(REPO), str(TESTS_DIR), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=path,
                XLA_FLAGS=xla_flags_with_isa(os.environ.get("XLA_FLAGS", ""), level))


def run_at_levels(args: Sequence[str], levels: Sequence[str], *,
                  timeout: float = 600) -> dict[str, subprocess.CompletedProcess]:
    """``python ARGS`` under each level, the processes at once; their results by level. An
    argument's ``{level}`` becomes the level's name (a file per child); the repository and
    ``tests/`` are on the children's ``sys.path``."""
    children = {level: subprocess.Popen([sys.executable,
                                         *(arg.replace("{level}", level) for arg in args)],
                                        env=_environment(level),
                                        cwd=REPO, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
                for level in levels}
    results = {}
    for level, child in children.items():
        stdout, stderr = child.communicate(timeout=timeout)
        results[level] = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    return results
