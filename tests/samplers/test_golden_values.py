"""Every sampler's and Hail function's values equal the stored golden values, bit for bit, on
whichever supported jax is installed (CI runs this on the oldest and the newest)."""

from __future__ import annotations

import numpy as np
import pytest

from golden_values import CASES, GOLDEN_FILE, compute


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN_FILE) as stored:
        return {name: stored[name] for name in stored.files}


def test_every_case_is_stored(golden):
    assert sorted(golden) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_values_equal_the_golden_values(case, golden):
    values = compute(case)
    want = golden[case.name]
    assert values.dtype == want.dtype and values.shape == want.shape
    signed = np.dtype(f"i{want.dtype.itemsize}")
    if case.ulps:     # floats only: adjacent floats of one sign have adjacent bit patterns
        apart = np.abs(values.view(signed).astype(np.int64) - want.view(signed).astype(np.int64))
        assert apart.max() <= case.ulps, f"{case.name}: {apart.max()} ulps from the golden values"
        return
    differ = np.flatnonzero(values != want)
    assert differ.size == 0, (
        f"{case.name}: {differ.size} of {want.size} values differ from the golden values, "
        f"first at flat index {differ[0]} (bits {int(values.flat[differ[0]]):#x}, golden "
        f"{int(want.flat[differ[0]]):#x})")
