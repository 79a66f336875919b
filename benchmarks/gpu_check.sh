#!/usr/bin/env bash
# A lent GPU's check, in one device call of under 10 minutes (each step time-boxed, results
# under $OUT; see benchmarks/README.md, "GPU"). Runs from the repository root with the machine's
# own jax (no install: PYTHONPATH).
#
#   bash benchmarks/gpu_check.sh values   # ~2 min: the golden values' bits against the CPU's
#                                         # (8 processes), draws under disable_jit, derivatives
#   bash benchmarks/gpu_check.sh          # the above, the test suite, python -m benchmarks.run
#
# GPU programs compile slower than CPU ones: on an H200 (2026-11-26) 1428 tests ran in 250 s,
# so the suite does not finish in one call.
set -u
MODE="${1:-all}"
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD" PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    python3 -c "import jax, sys; print('Python', sys.version.split()[0], 'jax', jax.__version__, jax.devices())"
    lscpu | grep -E "Model name|^CPU\(s\)"
} >"$OUT/env.txt" 2>&1

for i in 0 1 2 3 4 5 6 7; do
    timeout 140 python3 tests/golden_values.py --check --shard "$i/8" >"$OUT/golden.$i" 2>&1 &
done
timeout -s INT 140 python3 -m pytest -q -rf -n 6 --dist loadfile tests/test_disable_jit.py \
    tests/samplers/test_gradients.py -k "disable_jit or golden" >"$OUT/values_tests.log" 2>&1
wait
for i in 0 1 2 3 4 5 6 7; do echo "shard $i/8: $(tail -n 1 "$OUT/golden.$i")"; done \
    >"$OUT/golden_differences.txt"
rm -f "$OUT"/golden.[0-7]
[ "$MODE" = values ] && exit 0

# The ISA, deviceless and notebook tests need a CPU backend, ../shared or Jupyter.
timeout -s INT 290 python3 -m pytest -q -rf -n 12 --dist loadfile --timeout 150 \
    --ignore tests/samplers/test_golden_values_isa.py --ignore tests/test_notebooks.py \
    --ignore tests/test_benchmarks_deviceless.py \
    tests/hail tests/lowering tests/message tests/cipher tests/samplers tests/implicit \
    tests/interop tests jaxpmac >"$OUT/pytest.log" 2>&1
echo "pytest exit $?" >>"$OUT/pytest.log"

unset XLA_PYTHON_CLIENT_PREALLOCATE
timeout -s INT 230 python3 -m benchmarks.run --out "$OUT/bench" --no-plot 2>"$OUT/bench.err"
echo "benchmarks exit $?" >>"$OUT/bench.err"
