"""What XLA did, read from a real dump: `tests/helpers/hlo_dump/` is module 0172 (the validation
step on the last, 8-image batch) of the demo set at 64 px, jit, TF 2.21 on CPU, with the
metadata cut to `op_name` (after) or removed (before) and the buffer assignment cut to a few of
its lines, to keep the fixture small. Its worker.log holds the two lines xlagui reads, in
TensorFlow's format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlagui.core.measure.transports.environment import worker_env, xla_flags
from xlagui.core.protocol.config import XlaMode
from xlagui.core.xla import evidence, hlo

DUMP = Path(__file__).resolve().parents[2] / "helpers" / "hlo_dump"
NAME = "a_inference_one_step_on_data_2829__.12"
AFTER = DUMP / f"module_0172.{NAME}.cpu_after_optimizations.txt"
BEFORE = DUMP / f"module_0172.{NAME}.before_optimizations.txt"
_INSTRUCTION = re.compile(r"^\s+(ROOT )?%\S+ = ")


def _instruction_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if _INSTRUCTION.match(line))


def test_reads_the_module_of_a_real_dump() -> None:
    report = hlo.read_dump(DUMP, DUMP / "worker.log")
    assert [m.module_id for m in report.modules] == ["0172"]
    m = report.modules[0]
    assert m.name == NAME
    # Counted independently: every instruction line of every computation.
    assert m.instructions_after == _instruction_lines(AFTER) == 171
    assert m.instructions_before == _instruction_lines(BEFORE) == 217
    entry_fusions = len(re.findall(r" fusion\(.*kind=kLoop", AFTER.read_text()))
    assert m.fusions_by_kind == {"kLoop": entry_fusions} == {"kLoop": 15}
    assert m.buffer_bytes == 10041196 and m.temp_bytes == 9216004
    assert m.compile_seconds == pytest.approx(0.250466)


def test_convolutions_and_dots_carry_their_shapes() -> None:
    m = hlo.read_dump(DUMP).modules[0]
    convs = [h for h in m.heavy_ops if h.opcode == "convolution"]
    assert [c.shape for c in convs] == ["f32[8,60,60,64]", "f32[8,26,26,32]", "f32[8,9,9,16]"]
    assert convs[0].operand_shapes == ["f32[8,64,64,3]", "f32[5,5,3,64]"]
    assert convs[0].detail == "size=5x5, b01f_01io->b01f"
    assert convs[0].op_name == "article_cnn_1/conv2d_1/convolution"
    dots = [h for h in m.heavy_ops if h.opcode == "dot"]
    assert len(dots) == 3
    assert ["f32[8,256]", "f32[256,126]"] in [d.operand_shapes for d in dots]
    # The head's dot is fused into a loop fusion; the dense layers' are not.
    assert sorted(d.fused for d in dots) == [False, False, True]


def test_largest_fusions_come_first_with_the_ops_inside() -> None:
    m = hlo.read_dump(DUMP).modules[0]
    sizes = [f.output_bytes for f in m.top_fusions]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    for f in m.top_fusions:
        assert f.ops and "parameter" not in f.ops
        assert f.instructions == sum(f.ops.values())
    dot_fusion = next(f for f in m.top_fusions if f.name == "maximum_dot_fusion")
    assert dot_fusion.ops["dot"] == 1 and dot_fusion.shape == "f32[8]"


def test_kinds_tuples_and_custom_calls_of_a_hand_written_module() -> None:
    text = """HloModule jit_f, entry_computation_layout={(f32[4,4]{1,0})->f32[4]{0}}

%fused_computation (p: f32[4,4]) -> f32[4] {
  %p = f32[4,4]{1,0} parameter(0)
  %c = f32[] constant(0)
  ROOT %r = f32[4]{0} reduce(%p, %c), dimensions={1}, to_apply=%add
}

ENTRY %main (a: f32[4,4]) -> (f32[4], s32[2]) {
  %a = f32[4,4]{1,0} parameter(0)
  %mm = f32[4,4]{1,0} custom-call(%a, %a), custom_call_target="__onednn$matmul"
  %f = f32[4]{0} fusion(%mm), kind=kCustom, calls=%fused_computation, BACKEND
  %i = s32[2]{0} constant({1, 2})
  ROOT %t = (f32[4]{0}, s32[2]{0}) tuple(%f, %i)
}
"""
    m = hlo.analyse_module(
        text.replace("BACKEND", 'backend_config={"fusion_config":{"kind":"__ynn_fusion"}}')
    )
    assert m.name == "jit_f" and m.instructions_after == 8
    assert m.fusions_by_kind == {"kCustom (ynn_fusion)": 1}
    assert m.top_fusions[0].ops == {"constant": 1, "reduce": 1}
    (call,) = m.heavy_ops
    assert call.opcode == "custom-call" and call.detail == "__onednn$matmul"
    assert call.operand_shapes == ["f32[4,4]", "f32[4,4]"]
    assert hlo.shape_bytes("(f32[4]{0}, s32[2]{0}, pred[])") == 16 + 8 + 1


def test_diff_of_two_reports() -> None:
    a = hlo.read_dump(DUMP, DUMP / "worker.log")
    b = hlo.XlaReport.from_dict(a.to_dict())
    assert b is not None and b == a  # the summary's JSON gives the same report back
    b.modules[0].fusions_by_kind = {"kLoop": 14, "kInput": 2}
    b.modules[0].fusions = 16
    rows = {r.what: r for r in hlo.diff(a, b)}
    assert rows["fusions"].change == 1
    assert rows["fusions kLoop"].change == -1
    assert (rows["fusions kInput"].a, rows["fusions kInput"].b) == (0, 2)  # none, not unknown
    assert rows["modules"].change == 0
    assert rows["buffer memory"].change == 0 and rows["buffer memory"].unit == "bytes"
    assert hlo.XlaReport.from_dict(None) is None  # a summary from before there was one


def test_compilations_logged_are_evidence_without_a_dump(tmp_path: Path) -> None:
    ev = evidence.collect(tmp_path / "no-dump", DUMP / "worker.log")
    assert ev.hlo_modules == 0 and ev.compilations == 1 and ev.compiled
    assert not evidence.collect(tmp_path / "no-dump", tmp_path / "no.log").compiled


def test_dump_settings_reach_the_environment(tmp_path: Path) -> None:
    text = worker_env(XlaMode.JIT, "cpu", tmp_path, "text")
    assert text["XLA_FLAGS"] == f"--xla_dump_to={tmp_path / 'xla'} --xla_dump_hlo_as_text"
    assert text["TF_CPP_VMODULE"] == "device_compilation_profiler=1"
    none = worker_env(XlaMode.JIT, "cpu", tmp_path, "none")
    assert "XLA_FLAGS" not in none and none["TF_CPP_VMODULE"]
    assert "TF_CPP_VMODULE" not in worker_env(XlaMode.OFF, "cpu", tmp_path, "text")
    assert "--xla_dump_disable_metadata" in xla_flags(tmp_path, "nometa")
    with pytest.raises(ValueError, match="unknown XLA dump"):
        xla_flags(tmp_path, "everything")


def test_jaxs_compile_lines_and_its_step_modules_are_read(tmp_path: Path) -> None:
    """A JAX worker's log (`jax_log_compiles`) and dump: the step functions' modules and their
    compile times; the eager ops' own little modules are not what XLA did for training."""
    log = tmp_path / "worker.log"
    log.write_text(
        "WARNING:jax._src.dispatch:Finished XLA compilation of jit(convert_element_type) in "
        "0.004 sec\n"
        "WARNING:jax._src.dispatch:Finished XLA compilation of jit(train_step) in 1.398219585 "
        "sec\n", encoding="utf-8")
    assert hlo.compile_times(log) == [("jit_convert_element_type", 0.004),
                                      ("jit_train_step", 1.398219585)]
    dump = tmp_path / "xla"
    dump.mkdir()
    module = ("HloModule {name}\n\nENTRY %main.1 (a: f32[2]) -> f32[2] {{\n"
              "  ROOT %a = f32[2]{{0}} parameter(0)\n}}\n")
    for i, name in ((0, "jit_convert_element_type"), (42, "jit_train_step")):
        (dump / f"module_{i:04d}.{name}.cpu_after_optimizations.txt").write_text(
            module.format(name=name), encoding="utf-8")
    steps = {"jit_train_step"}
    report = hlo.read_dump(dump, log, steps)
    assert [(m.name, m.compile_seconds) for m in report.modules] == [
        ("jit_train_step", 1.398219585)]
    assert len(hlo.read_dump(dump, log).modules) == 2
    found = evidence.collect(dump, log, steps)
    assert (found.hlo_modules, found.compilations, found.compiled) == (1, 1, True)
