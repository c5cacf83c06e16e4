"""“What XLA did” in words: the one wording the CLI, the window and the PNG share."""

from __future__ import annotations

from pathlib import Path

from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import FinishedEvent, RunSummary
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport
from xlagui.core.xla import hlo
from xlagui.present import xla_did as did

DUMP = Path(__file__).resolve().parents[1] / "helpers" / "hlo_dump"


def test_one_line_counts_modules_and_fusions_by_kind() -> None:
    report = hlo.read_dump(DUMP)
    assert did.one_line(report) == "XLA did: 1 module, 15 fusions (15 loop)"
    report.modules.append(hlo.ModuleReport("0200", "b", "f", 3, fusions=2,
                                           fusions_by_kind={"kCustom (ynn_fusion)": 2}))
    assert did.one_line(report) == (
        "XLA did: 2 modules, 17 fusions (15 loop, 2 custom (ynn_fusion))"
    )
    assert did.one_line(None).startswith("XLA did: not recorded")
    assert did.one_line(hlo.XlaReport()) == "XLA did: no HLO modules in the dump"


def test_rows_say_what_the_dump_lacks() -> None:
    report = hlo.read_dump(DUMP)  # no log: no compile time
    report.modules[0].instructions_before = None
    (row,) = did.module_rows(report)
    assert dict(zip(did.MODULE_COLUMNS, row, strict=True)) == {
        "module": "0172",
        # Keras 3's one name for every step; no gradients and its metrics' means: evaluation.
        "what it compiles": "the evaluation step",
        "instructions before": "unavailable",
        "instructions after": "171",
        "fusions": "15",
        "by kind": "15 loop",
        "conv / dot": "3 / 3",
        "buffers": "9.6 MB",
        "compile": "—",
    }
    fusions = did.fusion_rows(report, limit=3)
    assert len(fusions) == 3 and fusions[0][1].output_bytes >= fusions[-1][1].output_bytes


def test_diff_rows_and_the_png_line() -> None:
    a = hlo.read_dump(DUMP, DUMP / "worker.log")
    b = hlo.XlaReport.from_dict(a.to_dict())
    assert b is not None
    b.modules[0].buffer_bytes = (a.modules[0].buffer_bytes or 0) + 2 * 2**20
    rows = {r[0]: r[1:] for r in did.diff_rows(hlo.diff(a, b))}
    assert rows["buffer memory"] == ("9.6 MB", "11.6 MB", "+2.0 MB")
    assert rows["compile time"] == ("0.25 s", "0.25 s", "+0.00 s")
    entry = RunEntry("02-xla-r1", "xla", 1, "jit", "finished",
                     [FinishedEvent(summary=RunSummary(xla_did=a))])
    base = RunEntry("01-baseline-r1", "baseline", 1, "off", "finished", [FinishedEvent()])

    report = ComparisonReport(config=RunConfig(), dataset={}, runs=[base, entry])
    assert did.report_line(report) == (
        "XLA did: 1 module, 15 fusions (15 loop) — in XLA jit_compile, training run 1"
    )
    report.runs = [base]
    assert did.report_line(report) is None


def test_modules_and_runs_are_named_in_the_users_words() -> None:
    """Not "a_inference_one_step_on_data_2829__.12" nor "i-xla" (issue 31): what the module
    compiles and which run of which arm; TensorFlow's and XLA's names in the tooltip."""
    report = hlo.read_dump(DUMP)
    (module,) = report.modules
    assert did.step_words(module) == "the evaluation step"
    tip = did.module_tip(module)
    assert "a_inference_one_step_on_data_2829__.12" in tip and "0172" in tip
    module.heavy_ops[0].op_name = "gradient_tape/article_cnn_1/conv2d_1/Conv2DBackpropFilter"
    assert did.step_words(module) == "the training step"
    module.heavy_ops[0].op_name = ""
    module.top_fusions = []
    assert did.step_words(module) == "a step without gradients (evaluation or prediction)"
    module.name = "a_inference_train_function_123__.9"
    assert did.step_words(module) == "the training step"
    module.name = "cluster_3__XlaCompiledKernel_true__.41"
    assert did.step_words(module) == "a cluster of ops XLA chose (auto-clustering)"

    inspect = RunEntry("i-xla", "xla", 1, "jit", "finished", [FinishedEvent()])
    bf16 = RunEntry("03-bf16-r2", "bf16", 2, "off", "finished", [FinishedEvent()],
                    precision="mixed_bfloat16")
    comparison = ComparisonReport(config=RunConfig(), dataset={}, runs=[bf16],
                                  inspect_runs=[inspect])
    assert did.run_label(comparison, "i-xla") == "XLA jit_compile, the inspection compile"
    assert did.run_label(comparison, "03-bf16-r2") == "bf16, training run 2"
    assert did.run_label(comparison, "gone") == "gone"
