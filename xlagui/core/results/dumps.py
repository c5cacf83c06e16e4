"""What XLA did, read back from a saved comparison or run folder: each XLA run's report from its
recorded summary, or from its dump folder when an older summary lacks it (`xlagui inspect`, the
window's "What XLA did" for a reopened comparison). The reader of one dump is `xla/hlo.py`.
"""

from __future__ import annotations

from pathlib import Path

from xlagui.core.protocol.events import FinishedEvent, ProtocolError, parse_event
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.results.export import read_json
from xlagui.core.results.report import ComparisonReport
from xlagui.core.xla.hlo import XlaReport, read_dump


class InspectError(ValueError):
    """The folder is neither a comparison folder nor a run folder."""


def xla_runs(
    report: ComparisonReport, out_dir: Path | None = None
) -> list[tuple[str, XlaReport]]:
    """(run id, what XLA did) of every XLA run of a `ComparisonReport` that has it: from the
    run's summary, or, for a summary written before it was recorded, from its dump folder when
    `out_dir` still holds it."""
    out: list[tuple[str, XlaReport]] = []
    for entry in [*report.inspect_runs, *report.runs, *report.measure_runs]:
        if entry.arm.xla is XlaMode.OFF:
            continue
        summary = entry.summary
        found = summary.xla_did if summary is not None else None
        if found is None and out_dir is not None:
            run_dir = out_dir / "runs" / entry.run_id
            if (run_dir / "xla").is_dir():
                found = read_dump(run_dir / "xla", run_dir / "worker.log")
        if found is not None and found.modules:
            out.append((entry.run_id, found))
    return out


def inspect_folder(folder: Path) -> list[tuple[str, XlaReport]]:
    """What XLA did in a comparison folder (every XLA run with a dump) or in one run folder."""
    if (folder / "comparison.json").is_file():
        return xla_runs(read_json(folder / "comparison.json"), folder)
    if (folder / "xla").is_dir():
        return [(folder.name, read_dump(folder / "xla", folder / "worker.log"))]
    if (folder / "events.jsonl").is_file():  # the dump was removed: the run's summary has it
        for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
            try:
                event = parse_event(line)
            except ProtocolError:
                continue
            if isinstance(event, FinishedEvent):
                found = event.summary.xla_did
                return [(folder.name, found)] if found is not None else []
        return []
    raise InspectError(
        f"{folder} is neither a comparison folder (with comparison.json) nor a run folder "
        "(with an xla dump folder)"
    )
