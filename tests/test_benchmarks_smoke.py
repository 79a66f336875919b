"""The benchmark harness runs end to end in smoke mode and writes its reports (no timing asserts)."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import run as bench  # noqa: E402

WORKLOADS = {"bits", "uniform", "normal", "uniform_bf16", "scan", "vmap", "nesting",
             "compile"}


@pytest.fixture(scope="module")
def smoke_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert bench.main(["--smoke", "--out", str(out)]) == 0
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1
    return folders[0]


def test_writes_json_markdown_and_plot(smoke_result):
    for name in ("results.json", "results.md"):
        assert (smoke_result / name).stat().st_size > 0
    result = json.loads((smoke_result / "results.json").read_text())
    assert (smoke_result / "results.png").exists() or any(
        "matplotlib" in n for n in result["notes"])


def test_json_has_expected_keys(smoke_result):
    result = json.loads((smoke_result / "results.json").read_text())
    for key in ("backend", "device", "jax_version", "config", "notes", "records"):
        assert key in result
    assert smoke_result.name == result["backend"]
    assert result["config"]["smoke"] is True
    records = result["records"]
    assert records
    for record in records:
        assert set(bench.RESULT_KEYS) <= set(record)
        assert record["median_s"] > 0 and record["samples_per_s"] > 0
    seen = {r["workload"] for r in records}
    assert {"bits", "scan", "vmap", "nesting", "compile"} <= seen
    assert seen <= WORKLOADS
    contenders = {r["contender"] for r in records}
    assert "jaxpmac pair" in contenders
    # Ratios are relative to jax.random's default, which is always timed.
    assert any(r["ratio_vs_jax_default"] == pytest.approx(1.0) for r in records)


def test_markdown_has_a_table_per_workload(smoke_result):
    text = (smoke_result / "results.md").read_text()
    result = json.loads((smoke_result / "results.json").read_text())
    for workload in {r["workload"] for r in result["records"]}:
        assert f"## {workload}" in text
    assert "| contender |" in text.replace("| param | n | contender |", "| contender |")


def test_parse_size_accepts_powers():
    assert bench.parse_size("2**20") == 2 ** 20
    assert bench.parse_size("4096") == 4096
