"""The deviceless compile benchmark's pure parts: planning, child limits, merging and the report.

Nothing here compiles for an accelerator (that needs libtpu or the CUDA plugin, and minutes).
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import deviceless as dl  # noqa: E402

BITS = dl.Task("bits", 2 ** 20)
SITES_200 = dl.Task("sites_200", 200 * 64 * 64)


def fake_record(target, task, library, status="ok", **measurements):
    record = dict.fromkeys(dl.RECORD_KEYS)
    record.update(target=target, program=task.program, size=task.size, library=library,
                  status=status, compiler_peak_rss_bytes=500_000_000, device="fake",
                  jax_version="0.0", traced_as_backend="tpu", **measurements)
    return record


def fake_section(target, records, command="python -m benchmarks.deviceless --quick"):
    return dl.target_section(records, command=command, python="/fake/python")


TPU_RECORDS = [
    fake_record("tpu", BITS, "jax.random", compile_s=0.5, fusions=1, bytes_accessed=4.2e6,
                temp_bytes=0, while_loops=0, stablehlo_barrier=0),
    fake_record("tpu", BITS, "jaxpmac", compile_s=10.0, fusions=12, bytes_accessed=2.1e8,
                temp_bytes=0, while_loops=0, stablehlo_barrier=1),
    fake_record("tpu", SITES_200, "jax.random", compile_s=2.0, fusions=5, bytes_accessed=1e6,
                temp_bytes=1000, while_loops=0, stablehlo_barrier=0),
    fake_record("tpu", SITES_200, "jaxpmac", status="timeout",
                reason="no result after 900 s (--timeout)"),
]


def test_plan_quick_and_sizes():
    args = dl.parse_args(["--quick"])
    tasks = dl.plan_tasks(args.programs, args.sizes)
    assert [t.program for t in tasks] == ["bits", "uniform", "normal", "dropout", "sites_5",
                                          "sites_20", "keys_10"]
    assert tasks[0] == BITS and tasks[3].size == 4096 * 4096
    assert [t.size for t in dl.plan_tasks(["normal", "bits"], [2 ** 16, 2 ** 24])] == [
        2 ** 16, 2 ** 24, 2 ** 16, 2 ** 24]
    assert dl.parse_args(["--sizes", "2**22", "4096"]).sizes == [2 ** 22, 4096]
    assert "sites_200" in dl.parse_args([]).programs
    assert [(t.program, t.size, t.label) for t in dl.plan_tasks(["keys_10"], [])] == [
        ("keys_10", 10, "keys_10 (10 x split, fold_in, uniform)")]
    # NumPyro's programs only when asked for: they need numpyro in the compilers' venvs.
    assert not set(dl.FRAMEWORK_PROGRAMS) & set(dl.parse_args([]).programs)
    assert [t.label for t in dl.plan_tasks(["numpyro_svi", "numpyro_nuts"], [])] == [
        "numpyro_nuts (NUTS init + one step)", "numpyro_svi (SVI init + one update)"]


def test_markdown_table_from_fake_results():
    cuda = [fake_record("cuda", BITS, lib, compile_s=s, fusions=1, temp_bytes=0, while_loops=0,
                        stablehlo_barrier=0) for lib, s in (("jax.random", 0.3), ("jaxpmac", 3.0))]
    results = dl.merge_results({}, {"tpu": fake_section("tpu", TPU_RECORDS),
                                    "cuda": fake_section("cuda", cuda)})
    text = dl.render_markdown(results)
    assert "compiler's estimate, not a measurement" in text and "as ratios" in text
    assert text.index("## cuda") < text.index("## tpu")
    tpu = text[text.index("## tpu"):]
    assert "`python -m benchmarks.deviceless --quick`" in tpu
    assert ("| bits 2**20 | 0.50 | 10.00 | 20.0x | 1 / 12 | 4.2 MB / 210 MB | 50.0x "
            "| 0 B / 0 B | 0 / 1 |") in tpu
    assert "| sites_200 (200 x 64x64) | 2.00 | timeout | - |" in tpu
    assert "sites_200 (200 x 64x64), jaxpmac: timeout: no result after 900 s" in tpu
    cuda_text = text[text.index("## cuda"):text.index("## tpu")]
    assert ("| bits 2**20 | 0.30 | 3.00 | 10.0x | 1 / 1 | - / - | - | 0 B / 0 B "
            "| 0 / 0 |") in cuda_text


def test_dropout_note_says_which_library_materialises_x():
    dropout = dl.Task("dropout", 4096 * 4096)
    records = [fake_record("tpu", dropout, "jax.random", compile_s=1.0,
                           materialises_input_sized_array=False),
               fake_record("tpu", dropout, "jaxpmac", compile_s=9.0,
                           materialises_input_sized_array=True)]
    text = dl.render_markdown(dl.merge_results({}, {"tpu": fake_section("tpu", records)}))
    assert "(temp bytes >= 67.1 MB): jax.random no, jaxpmac yes." in text


def test_results_of_targets_not_rerun_are_kept(tmp_path):
    old_cuda = fake_section("cuda", [fake_record("cuda", BITS, "jaxpmac", compile_s=3.0)],
                            command="old")
    dl.write_results(tmp_path, {"tpu": fake_section("tpu", TPU_RECORDS, command="old"),
                                "cuda": old_cuda})
    new_tpu = fake_section("tpu", TPU_RECORDS[:2], command="new")
    results = dl.write_results(tmp_path, {"tpu": new_tpu})
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk == results
    assert on_disk["targets"]["cuda"] == old_cuda
    assert on_disk["targets"]["tpu"]["command"] == "new"
    assert len(on_disk["targets"]["tpu"]["records"]) == 2
    assert "## cuda" in (tmp_path / "results.md").read_text()


def test_target_without_interpreter_keeps_its_results(tmp_path):
    fake_tpu_python = tmp_path / "tpu-python"
    line = json.dumps(TPU_RECORDS[0])
    fake_tpu_python.write_text(f"#!/bin/sh\necho 'a log line'\necho '{line}'\n")
    fake_tpu_python.chmod(0o755)
    old_cuda = fake_section("cuda", [fake_record("cuda", BITS, "jaxpmac", compile_s=3.0)])
    dl.write_results(tmp_path, {"cuda": old_cuda})
    assert dl.main(["--programs", "bits", "--out", str(tmp_path),
                    "--tpu-python", str(fake_tpu_python),
                    "--cuda-python", str(tmp_path / "missing")]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["targets"]["cuda"] == old_cuda
    assert results["targets"]["tpu"]["records"] == [TPU_RECORDS[0]]
    assert results["targets"]["tpu"]["command"] == (
        f"python -m benchmarks.deviceless --programs bits --out {tmp_path} "
        f"--tpu-python {fake_tpu_python} --cuda-python {tmp_path / 'missing'}")


def test_child_past_its_timeout_is_recorded_as_timeout():
    outcome = dl.run_child([sys.executable, "-c", "import time; time.sleep(60)"], timeout_s=1)
    record = dl.record_for("tpu", BITS, "jaxpmac", outcome)
    assert record["status"] == "timeout"
    assert record["reason"] == "no result after 1 s (--timeout)"
    assert record["compile_s"] is None and record["compiler_peak_rss_bytes"] > 0


def test_child_that_raises_is_recorded_as_failed_with_the_error():
    outcome = dl.run_child(
        [sys.executable, "-c", "import sys; print('W0101 00:00:00 a log line', file=sys.stderr);"
                               "raise RuntimeError('no compiler today')"], timeout_s=30)
    record = dl.record_for("tpu", BITS, "jaxpmac", outcome)
    assert record["status"] == "failed"
    assert record["reason"] == "exit code 1: RuntimeError: no compiler today"


def test_child_past_its_memory_limit_is_stopped():
    outcome = dl.run_child([sys.executable, "-c",
                            "import time; x = b'x' * (400 << 20); time.sleep(30)"],
                           timeout_s=30, max_rss_bytes=200 << 20)
    assert outcome.status == "failed" and "--max-rss-gb" in outcome.reason
    assert outcome.peak_rss_bytes > 200 << 20


def test_measurements_of_a_child_that_finished_are_recorded():
    measured = {"compile_s": 1.5, "fusions": 3}
    outcome = dl.run_child([sys.executable, "-c",
                            f"print('log'); print({json.dumps(json.dumps(measured))})"],
                           timeout_s=30)
    record = dl.record_for("cuda", BITS, "jax.random", outcome)
    assert (record["status"], record["reason"]) == ("ok", None)
    assert (record["compile_s"], record["fusions"]) == (1.5, 3)
    assert set(record) == set(dl.RECORD_KEYS)


@pytest.mark.parametrize("n, text", [(2 ** 24, "2**24"), (3000, "3000")])
def test_sizes_are_written_as_powers_of_two(n, text):
    assert dl.Task("bits", n).label == f"bits {text}"


# --------------------------------------------------------------------------------------------
# What the compilers dump (benchmarks/_compiler_dumps.py), on hand-written dumps
# --------------------------------------------------------------------------------------------

FAKE_PTX = """
.version 8.4
.target sm_90a
.address_size 64

.visible .entry wide_fusion(
	.param .u64 .ptr .align 16 wide_fusion_param_0
)
.reqntid 128, 1, 1
{
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<9>;

	mov.u32 	%r1, %ctaid.x;
	ld.param.u64 	%rd1, [wide_fusion_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	add.s64 	%rd3, %rd2, %rd1;
	shl.b64 	%rd4, %rd3, 13;
	xor.b32 	%r2, %r1, 5;
	mul.lo.s64 	%rd5, %rd4, 3;
	@%p1 bra 	$L__BB0_2;
	add.rn.f64 	%fd1, %fd2, %fd3;
$L__BB0_2:
	// a comment: add.s64 is not counted here
	st.global.v4.u32 	[%rd5], {%r1, %r2, %r1, %r2};
	ret;

}
.visible .entry small_fusion(
	.param .u64 .ptr .align 16 small_fusion_param_0
)
{
	xor.b32 	%r2, %r1, 5;
	st.global.u64 	[%rd5], %rd1;
	ret;

}
"""

FAKE_HLO = """
  %small_fusion = u32[2]{0} fusion(u32[] %p), kind=kLoop, calls=%small
  ROOT %wide.fusion = (u32[4096]{0}, u32[16]{0}) fusion(u32[2]{0} %small_fusion), kind=kLoop
"""


def test_ptx_kernels_count_alu_and_stores():
    from benchmarks import _compiler_dumps as dumps

    kernels = list(dumps.ptx_kernels(FAKE_PTX))
    # add.s64 2 + shl.b64 2 + xor.b32 1 + mul.lo.s64 1 + add.rn.f64 1; mov/ld/cvta/bra/st/ret 0.
    assert kernels == [dumps.Kernel("wide_fusion", alu=7, stored_bytes=16),
                       dumps.Kernel("small_fusion", alu=1, stored_bytes=8)]


def test_main_kernel_is_the_fusion_with_the_most_output_elements(tmp_path):
    from benchmarks import _compiler_dumps as dumps

    assert dumps.fusion_outputs(FAKE_HLO) == {"small_fusion": (2, 8),
                                              "wide_fusion": (4096 + 16, 4 * (4096 + 16))}
    (tmp_path / "module_0001.jit_f.ptx").write_text(FAKE_PTX)
    (tmp_path / "module_0001.jit_f.gpu_after_optimizations.txt").write_text(FAKE_HLO)
    # Main: 7 ALU per 4 values. All: 1028 threads x 7 + 1 thread x 1, per 4112 values.
    assert dumps.gpu_kernel_counts(tmp_path) == dict(
        kernels=2, main_kernel="wide_fusion", alu_per_value=1.8,
        alu_per_value_all=round((1028 * 7 + 1) / 4112, 1))
    assert dumps.dump_counts("cuda", tmp_path / "nothing") == dict(
        kernels=None, main_kernel=None, alu_per_value=None, alu_per_value_all=None)


def test_tpu_cycles_sum_the_static_profile(tmp_path):
    from benchmarks import _compiler_dumps as dumps

    assert dumps.tpu_estimated_cycles(tmp_path) is None
    (tmp_path / "prof").mkdir()
    (tmp_path / "prof" / "a").write_text('op { hlo_op_name: "fusion.1"\n  estimated_cycles: 1000 }'
                                         '\nop { hlo_op_name: "fusion.2" estimated_cycles: 20 }')
    (tmp_path / "prof" / "b").write_text('op { hlo_op_name: "custom-call" estimated_cycles: 3 }')
    assert dumps.dump_counts("tpu", tmp_path) == dict(tpu_cycles=1023)


def test_dump_flags_keep_the_callers_flags(tmp_path):
    from benchmarks import _compiler_dumps as dumps

    env = dumps.dump_environment("cuda", tmp_path, {"XLA_FLAGS": "--xla_a=1", "HOME": "/h"})
    assert env == {"XLA_FLAGS": f"--xla_a=1 --xla_dump_to={tmp_path} --xla_dump_emitter_re=.*",
                   "HOME": "/h"}
    env = dumps.dump_environment("tpu", tmp_path, {})
    assert env == {"LIBTPU_INIT_ARGS": f"--xla_jf_dump_to={tmp_path} "
                                       f"--xla_jf_dump_static_llo_profile_to={tmp_path}/prof",
                   "TPU_LOG_DIR": "disabled"}      # libtpu's log files could fill the disk


def test_tables_show_alu_per_value_and_cycles_with_their_ratios():
    cuda = [fake_record("cuda", BITS, "jax.random", compile_s=0.4, alu_per_value=74.8,
                        alu_per_value_all=74.9),
            fake_record("cuda", BITS, "jaxpmac", compile_s=1.0, alu_per_value=4.0,
                        alu_per_value_all=46.8)]
    tpu = [fake_record("tpu", BITS, "jax.random", compile_s=1.3, tpu_cycles=650_007),
           fake_record("tpu", BITS, "jaxpmac", compile_s=0.9, tpu_cycles=3_000_797)]
    text = dl.render_markdown(dl.merge_results({}, {"cuda": fake_section("cuda", cuda),
                                                    "tpu": fake_section("tpu", tpu)}))
    cuda_text, tpu_text = text[:text.index("## tpu")], text[text.index("## tpu"):]
    assert ("| ALU per value, main kernel (jax / jaxpmac) | ALU per value, main kernel ratio "
            "| ALU per value, all kernels (jax / jaxpmac) | ALU per value, all kernels ratio |"
            ) in cuda_text
    assert "| 74.8 / 4.0 | 0.05x | 74.9 / 46.8 | 0.62x |" in cuda_text
    assert "| 0.40 | 1.00 | 2.50x |" in cuda_text
    assert "| 650,007 / 3,000,797 | 4.62x |" in tpu_text and "ALU" not in tpu_text
