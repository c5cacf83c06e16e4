"""CSV and JSON exports of a comparison, written atomically.

The CSV is one file for all runs: a row per run per epoch, then summary rows, under one header,
with `row` saying which kind a line is. Verdicts are written as data (their kind in `value` or
`note`, an arm's accuracy verdict in `accuracy_kind`), never as sentences: those are
`xlagui.present.verdicts`', and the core writes this file after every round. What a summary
row's `note` says of its figure ("XLA step time / baseline (median)", "of 2 cores, over every
timed block") is a `Said`: a code and its facts, worded by the front end's `NoteWords`
(`xlagui.present.csv_notes.note_words`, handed down as `ComparisonRequest.csv_notes`); without
words, the note is its code. The JSON holds
everything needed to reproduce the comparison: config, dataset, environment, every event of
every run, and the summary (its verdicts as data too).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlagui.core.analysis.ranking import ranked
from xlagui.core.analysis.stats import Comparison, Interval
from xlagui.core.files.atomic import atomic_write_text
from xlagui.core.protocol.events import BlockEvent, EpochEvent
from xlagui.core.protocol.precision import FLOAT32_DTYPE
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport

CSV_COLUMNS = [
    "row",
    "run_id",
    "variant",
    "repeat",
    "xla_mode",
    "epoch",
    "loss",
    "accuracy",
    "val_loss",
    "val_accuracy",
    "epoch_seconds",
    "cumulative_seconds",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "note",
    "seq",
    "steps",
    "arm",
    "rank",
    "pairs",
    "valid",
    "accuracy_ok",
    "accuracy_kind",
]


@dataclass(frozen=True)
class Said:
    """What a summary row's note says of its figure, as data: `code` picks the words, `facts`
    are the figures they name (`NoteWords`)."""

    code: str
    facts: Mapping[str, Any] = field(default_factory=dict)


# A front end's words for a note: (its code, its facts) -> the note.
NoteWords = Callable[[str, Mapping[str, Any]], str]


# A row of the CSV before its notes are worded (a note may be a `Said`).
Row = dict[str, Any]


def _code(code: str, facts: Mapping[str, Any]) -> str:
    """A note without words: its code."""
    return code


def _num(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


RUN_METRICS = (
    "total_seconds",
    "first_epoch_seconds",
    "steady_epoch_seconds",
    "compile_overhead_seconds",
    "peak_rss_bytes",
    "peak_device_bytes",
    "final_accuracy",
    "final_val_accuracy",
)


def _summary(metric: str, value: Any, low: Any = None, high: Any = None,
             note: str | Said = "") -> dict[str, Any]:
    return {"row": "summary", "metric": metric, "value": _num(value), "ci_low": _num(low),
            "ci_high": _num(high), "note": note}


def run_metric_rows(report: ComparisonReport) -> list[Row]:
    """Each training run's figures (`RUN_METRICS`), its status in `note`."""
    rows: list[Row] = []
    for r in report.runs:
        s = r.summary
        run = {
            "row": "run",
            "run_id": r.run_id,
            "variant": r.variant,
            "repeat": str(r.repeat),
            "xla_mode": r.xla_mode,
            "note": r.status,
        }
        if s is None:
            rows.append({**run, "metric": "status", "value": _num(None)})
        for key in RUN_METRICS if s is not None else ():
            rows.append({**run, "metric": key, "value": _num(getattr(s, key))})
    return rows


def _basis(s: Interval) -> str:
    """What an interval was computed from, as data (an `IntervalBasis`: "interleaved",
    "repeats", "epochs"), or a comparison saved before that in its own words."""
    return str(s.basis) or s.method


def _interleaved_rows(c: Comparison) -> list[Row]:
    """The interleaved measurement's figures (none without one)."""
    i = c.interleaved
    if i is None:
        return []
    rows = []
    if c.speedup is not None:
        sp = c.speedup
        rows.append(_summary("speedup_per_step", sp.value, sp.low, sp.high, _basis(sp)))
    rows += [
        _summary("interleaved_ratio", i.ratio, i.low, i.high, Said("ratio.median")),
        _summary("interleaved_pairs", i.pairs),
        _summary("interleaved_block_steps", i.block_steps),
        _summary("interleaved_outliers", i.outliers, note=Said("outliers.kept")),
        _summary("interleaved_stopped_by", "", note=i.stopped_by),
        _summary("interleaved_half_width", i.half_width, note=Said("half_width")),
        _summary("interleaved_measuring_seconds", i.measuring_seconds),
    ]
    if i.rounds_budget_seconds is not None:  # not in comparisons saved before it was recorded
        rows += [
            _summary("interleaved_setup_seconds", i.setup_seconds, note=Said("setup")),
            _summary("interleaved_rounds_budget_seconds", i.rounds_budget_seconds,
                     note=Said("rounds_budget", {"budget": i.budget_seconds or 0})),
        ]
    if i.baseline_block_steps and i.baseline_block_steps != i.block_steps:
        # Comparisons saved when the baseline's K could differ from the arms'.
        rows.append(_summary("interleaved_baseline_block_steps", i.baseline_block_steps))
    for side in (i.baseline, i.xla):
        if side is not None:
            rows.append(_summary(f"{side.arm}_steady_step_seconds", side.steady_step_seconds))
            rows.append(_summary(
                f"{side.arm}_compile_seconds",
                side.compile_seconds,
                note=Said("compile.first_step" if side.compile_seconds is not None
                          else "not_measurable"),
            ))
    m = i.machine
    if m is not None and m.other_share is not None:
        # What else used the machine (issue 37): the share of its cores, the rounds set aside,
        # and whether the answer was measured on a busy machine.
        rows.append(_summary("other_programs_share", m.other_share,
                             note=Said("other_share", {"cores": m.cores})))
        rows.append(_summary("disturbed_rounds", m.disturbed_rounds, note=Said(
            "disturbed", {"rounds": m.rounds, "busy_percent": m.busy_percent})))
        rows.append(_summary("busy_machine", m.busy, note=Said("busiest", {
            "programs": [(p.name, p.pid, p.share) for p in m.busiest]})))
    return rows


def summary_rows(report: ComparisonReport) -> list[Row]:
    """The runs' figures, then the comparison's (its verdicts as data: kinds and codes), each
    arm's, and how far from the limit."""
    c = report.comparison
    rows = run_metric_rows(report)
    if c is None:
        return rows
    rows += _interleaved_rows(c)
    epochs = c.speedup_epochs or (c.speedup if c.interleaved is None else None)
    if epochs is not None:
        rows.append(_summary("speedup_steady_epoch", epochs.value, epochs.low, epochs.high,
                             _basis(epochs)))
    rows += [
        _summary("total_time_ratio", c.total_time_ratio, note=Said("total_time_ratio")),
        _summary("baseline_steady_epoch_seconds", c.baseline_steady_seconds),
        _summary("xla_steady_epoch_seconds", c.xla_steady_seconds),
        _summary("extra_compile_seconds", c.extra_compile_seconds,
                 note=c.compile_measured_on if c.extra_compile_seconds is not None
                 else Said("not_measurable")),
        _summary("break_even_epoch", c.break_even_epoch,
                 note=c.break_even.kind if c.break_even is not None else ""),
        _summary("memory_ratio", c.memory_ratio, note=Said("memory_ratio")),
        _summary("device_memory_ratio", c.device_memory_ratio, note=Said("device_memory_ratio")),
        _summary("baseline_val_accuracy", c.baseline_val_accuracy),
        _summary("xla_val_accuracy", c.xla_val_accuracy, note=c.accuracy_kind),
        _summary("valid", c.valid, note="; ".join(p.code for p in c.problems)),
        _summary("verdict", c.verdict_kind),
    ]
    if c.recommendation is not None:
        rows.append(_summary("recommendation", c.recommended_arm,
                             note=c.recommendation.kind.value))
    rows += [{**_summary("note", n.kind, note=n.said), "run_id": ",".join(n.runs)}
             for n in c.notes]
    return rows + arm_rows(report) + efficiency_rows(report)


def efficiency_rows(report: ComparisonReport) -> list[Row]:
    """How far from the limit: the counted work, the machine's limits, and per arm and run
    (keyed by run id) the achieved FLOP/s and its share of the peak."""
    e = report.comparison.efficiency if report.comparison is not None else None
    if e is None:
        return []
    rows = []

    def add(metric: str, value: Any, note: str | Said = "",
            run: tuple[str, str, str] = ("", "", "")) -> None:
        rows.append({"row": "efficiency", "run_id": run[0], "variant": run[1],
                     "xla_mode": run[2], "metric": metric, "value": _num(value), "note": note})

    add("flops_per_step", e.flops_per_step,
        Said("flops.counted", {"batch": e.batch_size, "image_size": e.image_size}))
    add("bytes_per_step", e.bytes_per_step, Said("bytes.estimated"))
    add("arithmetic_intensity", e.intensity, Said("intensity"))
    add("peak_flops_per_second", e.peak_flops_per_second,
        Said("peak.probe", {"dtype": FLOAT32_DTYPE}))
    for dtype, rate in e.peaks.items():
        if dtype != FLOAT32_DTYPE:
            add(f"peak_flops_per_second_{dtype}", rate, Said("peak.probe", {"dtype": dtype}))
    add("bandwidth_bytes_per_second", e.bandwidth_bytes_per_second, Said("bandwidth.probe"))
    add("ceiling_flops_per_second", e.ceiling_flops_per_second,
        Said("ceiling", {"layers": list(e.ceiling_layers)}))
    for a in e.arms:
        run = (a.key, a.variant, a.xla_mode)
        add("achieved_flops_per_second", a.achieved_flops_per_second, a.source, run)
        add("percent_of_peak", a.percent_of_peak,
            Said("percent_of_peak", {"dtype": a.compute_dtype}), run)
        add("percent_of_ceiling", a.percent_of_ceiling, Said("percent_of_ceiling"), run)
        add("gap", "", a.bound, run)
    return rows


def arm_rows(report: ComparisonReport) -> list[Row]:
    """One row per arm, fastest first: its step-time ratio to the baseline with the interval,
    whether it engaged (`valid`) and learns as well (`accuracy_ok`, empty: not known)."""
    c = report.comparison
    if c is None or c.interleaved is None:
        return []
    out = []
    for rank, a in enumerate(ranked(c.interleaved.arms), start=1):
        entry = next((r for r in report.measure_runs if r.variant == a.variant), None)
        out.append(
            {
                "row": "arm",
                "arm": a.arm,
                "rank": str(rank),
                "variant": a.variant,
                "xla_mode": entry.xla_mode if entry is not None else "",
                "metric": "step_time_ratio",
                "value": _num(a.ratio),
                "ci_low": _num(a.low),
                "ci_high": _num(a.high),
                "pairs": str(a.pairs),
                "valid": _num(a.valid),
                "accuracy_ok": _num(a.accuracy_ok),
                "accuracy_kind": a.accuracy_kind,
                # Data, not words: each problem's code, the hardware's kind (or an older
                # file's note).
                "note": "; ".join(x for x in [*(p.code for p in a.problems), a.hardware, a.note]
                                  if x),
            }
        )
    return out


def _run_cells(r: RunEntry) -> dict[str, object]:
    """The cells that say which run a row belongs to."""
    return {"run_id": r.run_id, "variant": r.variant, "repeat": r.repeat, "xla_mode": r.xla_mode}


def to_csv(report: ComparisonReport, words: NoteWords | None = None) -> str:
    """The CSV of `report`, its summary rows' notes worded by `words` (their codes without)."""
    say = words or _code
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    for r in report.runs:
        for e in r.events:
            if isinstance(e, EpochEvent):
                writer.writerow(
                    {
                        "row": "epoch",
                        **_run_cells(r),
                        "epoch": e.epoch,
                        "loss": _num(e.loss),
                        "accuracy": _num(e.accuracy),
                        "val_loss": _num(e.val_loss),
                        "val_accuracy": _num(e.val_accuracy),
                        "epoch_seconds": _num(e.epoch_seconds),
                        "cumulative_seconds": _num(e.cumulative_seconds),
                    }
                )
    for r in report.measure_runs:
        for e in r.events:
            if isinstance(e, BlockEvent):
                writer.writerow(
                    {
                        "row": "block",
                        **_run_cells(r),
                        "loss": _num(e.loss),
                        "metric": "block_seconds",
                        "value": _num(e.seconds),
                        "seq": e.seq,
                        "steps": e.steps,
                    }
                )
    for row in summary_rows(report):
        note = row.get("note")
        writer.writerow({**row, "note": say(note.code, note.facts)}
                        if isinstance(note, Said) else row)
    return buf.getvalue()


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def to_json(report: ComparisonReport) -> str:
    return json.dumps(report.to_dict(), indent=1, allow_nan=False, default=str) + "\n"


def write_csv(report: ComparisonReport, path: Path, words: NoteWords | None = None) -> Path:
    atomic_write_text(path, to_csv(report, words))
    return path


def write_json(report: ComparisonReport, path: Path) -> Path:
    atomic_write_text(path, to_json(report))
    return path


def read_json(path: Path) -> ComparisonReport:
    return ComparisonReport.from_dict(json.loads(path.read_text(encoding="utf-8")))


def write_all(report: ComparisonReport, out_dir: Path, words: NoteWords | None = None
              ) -> list[Path]:
    """comparison.csv (its notes worded by `words`) and comparison.json in `out_dir` (created
    if needed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [
        write_csv(report, out_dir / "comparison.csv", words),
        write_json(report, out_dir / "comparison.json"),
    ]


EXPORT_SUFFIXES = (".png", ".csv", ".json")


def export_stem(report: ComparisonReport, folder: Path) -> str:
    """A file name stem for an export that names nothing already in `folder`."""
    name = str(report.dataset.get("name") or "dataset")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name).strip("-")
    stamp = report.created[:19].replace(":", "").replace("-", "").replace("T", "-")
    stem = f"xlagui-{safe or 'dataset'}-{stamp}"
    candidate, n = stem, 2
    while any((folder / f"{candidate}{ext}").exists() for ext in EXPORT_SUFFIXES):
        candidate = f"{stem}-{n}"
        n += 1
    return candidate


def export_report(
    report: ComparisonReport,
    folder: Path,
    render_png: Callable[[ComparisonReport, Path], Path],
    stem: str | None = None,
    words: NoteWords | None = None,
) -> list[Path]:
    """Write `report` as PNG (drawn by `render_png`), CSV (its notes worded by `words`) and
    JSON into `folder`, named after `stem` (`export_stem` when None); the written paths in that
    order.

    All or nothing: if one file cannot be written, the files this export already wrote are
    removed and the `OSError` is raised again.
    """
    stem = stem or export_stem(report, folder)
    png, csv_path, json_path = (folder / f"{stem}{ext}" for ext in EXPORT_SUFFIXES)
    written: list[Path] = []
    try:
        written.append(render_png(report, png))
        written.append(write_csv(report, csv_path, words))
        written.append(write_json(report, json_path))
    except OSError:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written
