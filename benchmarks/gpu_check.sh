#!/usr/bin/env bash
# A lent GPU's check, in one device call of under 10 minutes (each step time-boxed, results
# under $OUT; see benchmarks/README.md, "GPU"). Runs from the repository root with the machine's
# own jax (no install: PYTHONPATH), in this order:
#  1. the test suite on 12 workers (compile-bound, on the CPU cores), the golden values first:
#     their bits against the CPU's;
#  2. then, with the GPU to itself: python -m benchmarks.run.
# On an H200 (2026-11-26) 1428 tests ran in 250 s: GPU programs compile slower than CPU ones,
# so the suite does not finish in one call.
set -u
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD" PYTHONUNBUFFERED=1

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    python3 -c "import jax, sys; print('Python', sys.version.split()[0], 'jax', jax.__version__, jax.devices())"
    lscpu | grep -E "Model name|^CPU\(s\)"
} >"$OUT/env.txt" 2>&1

# The ISA, deviceless and notebook tests need a CPU backend, ../shared or Jupyter.
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -s INT 290 python3 -m pytest -q -rf -n 12 \
    --dist loadfile --timeout 150 \
    --ignore tests/samplers/test_golden_values_isa.py --ignore tests/test_notebooks.py \
    --ignore tests/test_benchmarks_deviceless.py \
    tests/samplers/test_golden_values.py tests/hail tests/lowering tests/message tests/cipher \
    tests/samplers tests/implicit tests/interop tests jaxpmac >"$OUT/pytest.log" 2>&1
echo "pytest exit $?" >>"$OUT/pytest.log"

timeout -s INT 230 python3 -m benchmarks.run --out "$OUT/bench" --no-plot 2>"$OUT/bench.err"
echo "benchmarks exit $?" >>"$OUT/bench.err"
