"""The benchmark harness runs end to end in smoke mode and writes its reports (no timing
asserts)."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import _host  # noqa: E402
from benchmarks import cpu_plan  # noqa: E402
from benchmarks import quick  # noqa: E402
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


# -- what an accelerator reports: sizes picked from its free memory, its peak as the fallback --
class _FakeAccelerator:
    """A device whose ``memory_stats`` reads like a GPU's or TPU's (the CPU has none)."""

    def __init__(self, limit: int, in_use: int, peak: int):
        self.stats = {"bytes_limit": limit, "bytes_in_use": in_use, "peak_bytes_in_use": peak}

    def memory_stats(self):
        return self.stats


def test_free_memory_is_the_accelerators_limit_less_its_use(monkeypatch):
    monkeypatch.setattr(bench.jax, "devices", lambda: [_FakeAccelerator(16 << 30, 1 << 30, 0)])
    assert bench.free_memory_bytes() == 15 << 30


def test_free_memory_without_device_stats_is_the_hosts(monkeypatch):
    class NoStats:
        def memory_stats(self):
            return None

    monkeypatch.setattr(bench.jax, "devices", lambda: [NoStats()])
    free = bench.free_memory_bytes()
    meminfo = pathlib.Path("/proc/meminfo")
    if meminfo.exists():
        line = next(x for x in meminfo.read_text().splitlines() if x.startswith("MemAvailable:"))
        assert abs(free - int(line.split()[1]) * 1024) < 1 << 30   # the host's, give or take
    else:
        assert free == 4 << 30


def test_sizes_that_do_not_fit_are_skipped_with_a_note(monkeypatch):
    budget = bench.BYTES_PER_ELEMENT_BUDGET
    monkeypatch.setattr(bench, "free_memory_bytes", lambda: (2 ** 20) * budget)
    args = argparse.Namespace(smoke=False, repeats=1, sizes=["2**18", "2**20", "2**22"])
    cfg = bench.plan(args)
    assert cfg["sizes"] == [2 ** 18, 2 ** 20] and cfg["skipped_sizes"] == [2 ** 22]
    assert bench.plan(argparse.Namespace(smoke=False, repeats=None, sizes=None))[
        "skipped_sizes"] == [n for n in bench.DEFAULT_SIZES if n > 2 ** 20]


def test_programs_without_memory_analysis_report_the_device_peak(monkeypatch):
    monkeypatch.setattr(bench.jax, "devices", lambda: [_FakeAccelerator(1 << 30, 0, 12345)])
    analysed = bench.Program("analysed", lambda: np.zeros(3), peak_bytes=99,
                             peak_source="memory_analysis")
    unanalysed = bench.Program("unanalysed", lambda: np.zeros(3))
    times = bench.time_programs([analysed, unanalysed], repeats=2)
    assert {k: len(v) for k, v in times.items()} == {"analysed": 2, "unanalysed": 2}
    assert (analysed.peak_bytes, analysed.peak_source) == (99, "memory_analysis")
    assert (unanalysed.peak_bytes, unanalysed.peak_source) == (12345,
                                                               "device peak (process-wide)")


def test_json_and_markdown_record_the_isa_level(smoke_result):
    result = json.loads((smoke_result / "results.json").read_text())
    assert result["isa"] == _host.process_isa()
    assert "xla_flags" in result
    assert f"XLA CPU instruction set: {result['isa']}" in (smoke_result / "results.md").read_text()


# -- per instruction-set level (``--isa``): XLA_FLAGS' --xla_cpu_max_isa, a process a level --
_CPUINFO = """processor\t: 0
model name\t: Some CPU
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw avx512dq
"""


def test_host_isa_levels_need_every_flag_of_a_level():
    # avx512vl is missing: AVX512 is not a level this CPU has.
    assert _host.host_isa_levels(_CPUINFO) == ["SSE4_2", "AVX", "AVX2"]
    assert _host.host_isa_levels("flags : sse4_2 avx avx2\n") == ["SSE4_2", "AVX"]
    assert _host.host_isa_levels("processor : 0\n") == []


def test_process_isa_reads_the_last_max_isa_flag():
    assert _host.process_isa({}) == _host.HOST_DEFAULT
    assert _host.process_isa({"XLA_FLAGS": "--xla_cpu_max_isa=AVX --foo=1 "
                                           "--xla_cpu_max_isa=avx2"}) == "AVX2"


def test_a_levels_flags_keep_the_users_other_flags():
    flags = _host.xla_flags_with_isa("--foo=1 --xla_cpu_max_isa=AVX --bar", "AVX512")
    assert flags == "--foo=1 --bar --xla_cpu_max_isa=AVX512"
    assert _host.xla_flags_with_isa("", "SSE4_2") == "--xla_cpu_max_isa=SSE4_2"


def test_isa_option_names_levels_in_order_and_refuses_others():
    host = _host.host_isa_levels()
    if host:
        assert _host.isa_levels_asked(["all"]) == host
        assert _host.isa_levels_asked([",".join(reversed(host))]) == host
    with pytest.raises(ValueError, match="not one of"):
        _host.isa_levels_asked(["AVX3"])


def test_child_arguments_leave_out_the_isa_option():
    assert bench._without_isa(["--smoke", "--isa", "AVX2", "AVX512", "--out", "x"]) == [
        "--smoke", "--out", "x"]
    assert bench._without_isa(["--is=all", "--smoke"]) == ["--smoke"]
    assert quick._split_isa_tokens(["all", "bits22,vmap"], None) == (["all"], "bits22,vmap")
    assert quick._split_isa_tokens(["AVX2,AVX512"], "site1") == (["AVX2,AVX512"], "site1")


def _one_isa_level() -> str:
    levels = _host.host_isa_levels()
    if not levels:
        pytest.skip("no x86 instruction-set levels on this host")
    return "AVX2" if "AVX2" in levels else levels[0]


def test_isa_run_writes_a_folder_per_level_and_a_combined_table(tmp_path, monkeypatch):
    level = _one_isa_level()
    # Another flag of the user's, which the level's run must keep.
    kept = "--xla_force_host_platform_device_count=1"
    monkeypatch.setenv("XLA_FLAGS", kept)
    assert bench.main(["--smoke", "--isa", level, "--workloads", "bits", "--no-plot",
                       "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / f"cpu-{level}" / "results.json").read_text())
    assert (result["backend"], result["isa"]) == ("cpu", level)
    assert result["xla_flags"].split() == [kept, f"--xla_cpu_max_isa={level}"]
    assert {r["workload"] for r in result["records"]} == {"bits"}
    assert f"XLA CPU instruction set: {level}" in (
        tmp_path / f"cpu-{level}" / "results.md").read_text()
    table = (tmp_path / bench.ISA_FOLDER / "results.md").read_text()
    assert f"| {level} x jax | {level} compile x |" in table
    row = next(line for line in table.splitlines() if line.startswith("| bits |"))
    ratio, compile_ratio = (float(x) for x in row.strip(" |").split("|")[-2:])
    assert ratio > 0 and compile_ratio > 0


def test_quick_isa_prints_a_table_per_level(capsys):
    level = _one_isa_level()
    assert quick.main(["--isa", level, "bits16"]) == 0
    out = capsys.readouterr().out
    assert f"| workload | {level} |" in out
    assert next(line for line in out.splitlines() if line.startswith("| bits16 |")).count(
        "x") == 2   # run time ratio / compile time ratio


def test_cpu_plan_benchmark_traces_each_constants_value_anew():
    """A full chunk for a draw of 2**16 values (the smallest chunk raised to the usual one)
    peaks at 2.38x the output, chunks of a sixth of the draw at 1.35x: each setting is its own
    program, though jaxpmac's jitted helpers cache their traces."""
    variants = cpu_plan.settings("MIN_CPU_CHUNK_BLOCKS=1024,4096", None)
    got = cpu_plan.measure("bits16", variants, repeats=1)
    peaks = [got[label][2] for label in variants]
    assert peaks[0] < 1.5 < peaks[1]
    with pytest.raises(ValueError, match="int constant"):
        cpu_plan.settings("TILE=1", None)
    with pytest.raises(ValueError, match="buffer or map_placement"):
        cpu_plan.settings(None, "tiles=1")


@pytest.mark.slow
def test_the_gpu_float_stage_comparison_runs_and_finds_one_backend_equal_to_itself():
    # On a CPU-only machine both "devices" are the CPU: every stage agrees with itself.
    from benchmarks import gpu_float_stages
    rows = list(gpu_float_stages.stages())
    assert len(rows) == 22 and all(count == 0 for _, count in rows), rows
