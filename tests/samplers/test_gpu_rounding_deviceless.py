"""The samplers' float arithmetic as XLA's CUDA compiler emits it for an H100, without a GPU:
every multiply and addition rounded on its own (``mul.rn``, ``add.rn``: no fused multiply-add,
which ``_fixed_math.unfused`` leaves to this compiler on ``cuda``), division and square root
correctly rounded, nothing flushed or approximated. Checked by the PTX audit
(``benchmarks/deviceless_ptx_audit.py``, whose exit status is 0 only when no case has a finding)
for samplers made of ``horner``, ``log``, ``exp``, ``ndtri`` and the multivariate normal's
products. Skipped, with the reason, where the CUDA plugin is not installed
(``pip install "jax[cuda12]"``):

    JAX_PLATFORMS=cpu python -m pytest tests/samplers/test_gpu_rounding_deviceless.py
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

from deviceless_targets import H100, topology_device

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ("normal/float32", "normal/float64", "normal/bfloat16", "truncated_normal/float32",
         "multivariate_normal_cholesky/float64", "exponential/float32",
         "gumbel/float64", "logistic/float32", "gamma/a=0.3/float32")


def test_the_cuda_programs_round_every_product_and_addition_on_its_own():
    topology_device(**H100)                # skips where the CUDA plugin is not installed
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "deviceless_ptx_audit.py"),
                          "--timeout", "300", *CASES],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert run.stdout.count("| ") >= len(CASES), run.stdout[-4000:]
