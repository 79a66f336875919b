"""Every sampler's and Hail function's values equal the stored golden values, bit for bit, on
whichever supported jax is installed (CI runs this on the oldest and the newest), and their
programs pass the float audit (``float_audit.py``), the static half of the promise that the
values hold on every instruction set (``test_golden_values_isa.py`` is the dynamic half)."""

from __future__ import annotations

import numpy as np
import pytest

from float_audit import audit
from golden_values import CASES, GOLDEN_FILE, compute


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN_FILE) as stored:
        return {name: stored[name] for name in stored.files}


def test_every_case_is_stored(golden):
    assert sorted(golden) == sorted(case.name for case in CASES)


# On CI's newest-jax leg and with -m slow only (marker newest_jax_leg), two thirds of this
# file's compile time:
# - the samplers' x64 cases (float64, 64-bit integers). The oldest supported jax is a fixed
#   wheel, so there only jaxpmac's own code can change their values, and the newest leg runs
#   that code against the same stored values; the x64-off cases (every GPU and TPU user's mode)
#   run by default on both.
# - Hail's functions whose values the default run also checks against Hail's own (x64 on and
#   off: tests/hail's known answers and records, stronger than golden values), which the newest
#   leg does not run. The jdistlib functions without records in the default run (the
#   Dirichlet, the hypergeometrics, the truncated beta) keep their golden values in it, and so
#   does rand_pois (one case), whose records are drawn through its internal function.
HAIL_CHECKED_BY_HAILS_VALUES = {
    case.name for case in CASES if case.name.startswith("hail.")
    and not case.name.startswith(("hail.rand_dirichlet/", "hail.rand_hyper/",
                                  "hail.rand_multi_hyper/", "hail.rand_beta_truncated/",
                                  "hail.rand_pois_table/"))}
ON_THE_NEWEST_LEG_ONLY = HAIL_CHECKED_BY_HAILS_VALUES | {
    case.name for case in CASES if case.x64 and not case.name.startswith("hail.")}
NEWEST_LEG_ONLY = (pytest.mark.slow, pytest.mark.newest_jax_leg)


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case.name,
                 marks=NEWEST_LEG_ONLY if case.name in ON_THE_NEWEST_LEG_ONLY else ())
    for case in CASES])
def test_values_equal_the_golden_values(case, golden):
    """Bit for bit; and the compiled program leaves no float operation to the compiler's or the
    instruction set's choice (``float_audit``: no multiply-add it could contract, none of XLA's
    own approximations, no reduction whose order of additions it picks, no float16 or bfloat16
    arithmetic)."""
    text = []
    values = compute(case, compiled_text=text)
    findings = audit(text[0])
    assert not findings, "\n".join(map(str, findings))
    want = golden[case.name]
    assert values.dtype == want.dtype and values.shape == want.shape
    differ = np.flatnonzero(values != want)
    assert differ.size == 0, (
        f"{case.name}: {differ.size} of {want.size} values differ from the golden values, "
        f"first at flat index {differ[0]} (bits {int(values.flat[differ[0]]):#x}, golden "
        f"{int(want.flat[differ[0]]):#x})")
