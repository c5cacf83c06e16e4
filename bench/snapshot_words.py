"""The wording snapshot: every sentence and row xlagui shows, for a corpus of comparisons, in
one JSON file whose keys are sorted, so two snapshots (before and after a change that must keep
the words) diff cleanly.

    python bench/snapshot_words.py [--out FILE] [--corpus DIR] [--no-window]

What it renders:
- for each comparison of the corpus (`bench/_snapshot_corpus.py`: generated, changed the ways a
  comparison ends or differs, recorded streams; saved as the app saves them and reopened as
  History reopens them): the CLI's summary and progress lines, the Markdown, the rows of
  `present/format.py`, the verdicts, the limits, what XLA did, and the window's visible texts of
  the reopened comparison (Runs and "What XLA did" tabs, offscreen);
- History's lines for the whole corpus, and the window's History tab;
- outside the corpus (`bench/_snapshot_misc.py`): the scans of the bad-dataset corpus
  (`tests/helpers/corpus.py`, API, `xlagui scan` and the window's Dataset tab), the workers'
  and supervisor's error messages and hints, the hosts', the arms' and the models' words,
  3,000 random arm sets' recommendations, a grid of verdicts, and `--help` of every command.

Each kind of text is taken by one small function (`SOURCES` here, and those of the two helper
modules): after a redesign only those functions change, never the corpus. A source that raises
is recorded as `ERROR: …` in place of its text, so one break does not hide the rest.

`--corpus DIR` keeps the saved comparisons in DIR (a second run renders the files already
there, not the helpers: the same comparisons even where the helpers changed). Deterministic:
fixed time stamps, the UTC time zone, no clock, paths replaced by placeholders; two runs, and a
run on a corpus made afresh, give the same bytes.

Issue 28's "before" is /work/golden-words.json, rendered from the corpus kept in
/work/golden-corpus (615 comparisons). After a change that must keep the words:

    python bench/snapshot_words.py --corpus /work/golden-corpus --out /tmp/after.json
    python bench/snapshot_diff.py /work/golden-words.json /tmp/after.json

(`bench/snapshot_diff.py`: the differences per key, grouped, a comparison's name as `*`.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["TZ"] = "UTC"
time.tzset()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["XLAGUI_PEAK_PROBE"] = "off"
os.environ["COLUMNS"] = "100"  # argparse's --help wraps at this width
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _snapshot_common import SHARED, Texts, attempt, console, plain, printed, share  # noqa: E402

from xlagui.core.results import history  # noqa: E402
from xlagui.core.results.report import ComparisonReport  # noqa: E402

# -- one comparison: each source of words -------------------------------------------------------

def cli_summary(report: ComparisonReport) -> Texts:
    """What `xlagui compare` prints at the end (`console.print_summary`)."""
    from xlagui.cli.console import print_summary

    con = console()
    print_summary(con, report)
    return printed(con).splitlines()


def cli_progress(report: ComparisonReport) -> Texts:
    """The CLI's progress lines on a log (no terminal), replayed from the runs' events."""
    from xlagui.cli.console import MeasureProgress, RichProgress

    con = console()
    measure = MeasureProgress(con, report)
    for entry in report.measure_runs:
        for event in entry.events:
            measure.on_event(entry, event)
    measure.on_round(report)
    train = RichProgress(con, report)  # not entered: its live bars would show the clock
    for entry in report.runs:
        train.on_run_start(entry)
        for event in entry.events:
            train.on_event(entry, event)
        train.on_run_done(entry)
    return printed(con).splitlines()


def cli_xla_did(report: ComparisonReport) -> Texts:
    """`xlagui inspect` on the comparison's folder (`console.print_xla_did`)."""
    from xlagui.cli.console import print_xla_did
    from xlagui.core.results.dumps import xla_runs

    con = console()
    print_xla_did(con, xla_runs(report))
    return share(printed(con).splitlines())


def markdown(report: ComparisonReport) -> Texts:
    from xlagui.present.markdown import report_markdown, summary_markdown

    return {"report": report_markdown(report).splitlines(),
            "tensorboard": summary_markdown(report).splitlines()}


def rows(report: ComparisonReport) -> Texts:
    """The rows of `present/format.py` and `present/report.py` the CLI, the window and the PNG
    share."""
    from xlagui.present import format as fmt
    from xlagui.present import report as report_words

    c = report.comparison
    out: dict[str, Texts] = {
        "runs": plain(report_words.run_rows(report)),
        "dataset": plain(report_words.dataset_words(report)),
        "environment": plain(report_words.environment_words(report)),
        "run names": [report_words.run_name(r.variant, r.xla_mode, r.arm.name, r.repeat)
                      for r in [*report.measure_runs, *report.runs, *report.inspect_runs]],
        "training figures": {r.run_id: plain(fmt.training_figures(r.summary))
                             for r in report.runs},
        "evidence": {r.run_id: fmt.evidence(r.summary) for r in report.runs},
        "title": report_words.comparison_title(report),
        "reproduce": report.reproduce_command(),
    }
    if c is None:
        return out
    out.update({
        "comparison": plain(fmt.comparison_rows(c)),
        "arms": plain(fmt.arm_table(c)),
        "arm bars": [b.caption for b in fmt.arm_bars(c)],
        "problems beside the verdict": fmt.problems_beside_verdict(c),
        "question": fmt.question_verdict(c),
        "measured on": fmt.measured_on(c),
        "measurement end": fmt.measurement_end(c),
        "runs compared": fmt.runs_compared(c),
        "other arms": fmt.other_arms(c),
        "arm figures": {a.variant: {"figures": plain(fmt.arm_figures(report, a)),
                                    "status": fmt.arm_status(a, fmt.measure_entry(report, a)),
                                    "speed": fmt.arm_speed(a), "accuracy": fmt.arm_accuracy(a),
                                    "speed-up": fmt.arm_speedup(a),
                                    "interval": fmt.arm_interval(a), "mark": fmt.arm_mark(a)}
                        for a in fmt.extra_arms(c)},
    })
    if c.interleaved is not None and c.interleaved.check is not None:
        out["instrument check"] = fmt.instrument_check(c.interleaved.check)
    return out


def verdicts(report: ComparisonReport) -> Texts:
    from xlagui.present import verdicts as v

    c = report.comparison
    if c is None:
        return None
    out: dict[str, Texts] = {
        "verdict": v.verdict_sentence(c), "short": v.short_verdict(c),
        "speed": v.speed_sentence(c), "break-even": v.break_even_words(c.break_even),
        "accuracy": v.comparison_accuracy(c), "accuracy source": v.accuracy_source(c.accuracy),
        "recommendation": v.recommendation_sentence(c.recommendation),
    }
    if c.recommendation is not None and c.recommendation.low is not None:
        out["adjusted interval"] = v.adjusted_interval(c.recommendation)
    if c.interleaved is not None:
        out["stop"] = v.stop_sentence(c.interleaved)
        out["arms"] = {a.variant: {"accuracy": v.accuracy_words(a.accuracy),
                                   "source": v.accuracy_source(a.accuracy)}
                       for a in c.interleaved.arms}
    return out


def limits(report: ComparisonReport) -> Texts:
    from xlagui.present.limits import efficiency_rows, limit_verdict, roofline

    c = report.comparison
    line = roofline(c)
    return {"rows": plain(efficiency_rows(c)), "verdict": limit_verdict(c),
            "roofline": None if line is None else
            {"note": line.note, "points": [p.label for p in line.points]}}


def xla_did(report: ComparisonReport) -> Texts:
    from xlagui.core.results.dumps import xla_runs
    from xlagui.present import xla_did as did

    runs = {run_id: share({"line": did.one_line(r), "modules": plain(did.module_rows(r)),
                           "heavy": plain(did.heavy_rows(r)),
                           "fusions": plain([row for _m, _f, row in did.fusion_rows(r, 10)])})
            for run_id, r in xla_runs(report)}
    return {"png line": did.report_line(report), "runs": runs}


def models(report: ComparisonReport) -> Texts:
    from xlagui.present.models import model_line

    return model_line(report.config, report.model_check)


SOURCES: dict[str, Callable[[ComparisonReport], Texts]] = {
    "cli summary": cli_summary, "cli progress": cli_progress, "cli inspect": cli_xla_did,
    "markdown": markdown, "rows": rows, "verdicts": verdicts, "limits": limits,
    "xla did": xla_did, "model line": models,
}


# -- the corpus, saved and reopened ------------------------------------------------------------

def save_corpus(folder: Path, limit: int | None = None) -> list[Path]:
    """The corpus's comparisons saved in `folder` as the app saves them (one folder each);
    the folders already there when it is not empty. `limit`: the first few only (a trial)."""
    if folder.is_dir() and any(folder.iterdir()):
        return sorted(p for p in folder.iterdir() if (p / "comparison.json").is_file())
    from _snapshot_corpus import cases
    from _snapshot_misc import in_old_words

    out = []
    for case in cases()[:limit]:
        target = folder / case.name
        history.save(case.report, target)
        if case.old_words:
            in_old_words(target / "comparison.json")
        out.append(target)
    return out


def comparisons(folders: list[Path], window: Any, recompute: bool = False) -> dict[str, Texts]:
    out: dict[str, Texts] = {}
    for i, folder in enumerate(folders):
        report = history.load(folder)
        if recompute:
            report.recompute()
        texts = {name: attempt(source, report) for name, source in SOURCES.items()}
        if window is not None:
            texts["window"] = attempt(window.reopened, folder)
        out[folder.name] = texts
        if i % 50 == 0:
            print(f"{i}/{len(folders)} comparisons", file=sys.stderr, flush=True)
    return out


def history_lines(root: Path) -> Texts:
    """History's list of the corpus: each item's words, and the machines side by side."""
    from xlagui.present import history as history_words
    from xlagui.present.format import created
    from xlagui.present.hosts import side_by_side_rows
    from xlagui.present.report import history_title
    from xlagui.present.verdicts import history_verdict

    items = history.list_items(root)
    return {
        item.folder.name: {
            "title": history_title(item), "verdict": attempt(history_verdict, item),
            "brief": attempt(history_words.verdict, item),
            "when": created(item.created), "machine": history_words.machine(item),
            "device": item.device, "runs": history_words.runs(item),
            "side by side": plain(side_by_side_rows(history.same_settings(items, item))),
        }
        for item in items
    }


# The one clock in the words: how long a scan took ("Scanned 10 files in 0.01 s").
SCAN_TIME = re.compile(r"(Scanned [\d,]+ files? in )\d+\.\d+ s")


def scrub(value: Texts, paths: dict[str, str]) -> Texts:
    """`value` with each path of `paths` replaced by its placeholder, and a scan's duration
    by `<t>`."""
    if isinstance(value, str):
        for path, placeholder in paths.items():
            value = value.replace(path, placeholder)
        return SCAN_TIME.sub(r"\1<t> s", value)
    if isinstance(value, list):
        return [scrub(v, paths) for v in value]
    if isinstance(value, dict):
        return {scrub(k, paths): scrub(v, paths) for k, v in value.items()}
    return value


def snapshot(corpus: Path, with_window: bool, work: Path,
             limit: int | None = None, recompute: bool = False) -> dict[str, Texts]:
    import _snapshot_misc as misc

    folders = save_corpus(corpus, limit)
    window = None
    if with_window:
        from _snapshot_window import WindowTexts

        window = WindowTexts(corpus, work)
    out: dict[str, Texts] = {
        "comparisons": comparisons(folders, window, recompute),
        "history": history_lines(corpus),
        **misc.everything(work / "misc", window),
    }
    if window is not None:
        out["window"] = {"empty": window.empty, "history tab": attempt(window.history_tab),
                         "settings": attempt(window.settings_texts, work / "settings")}
        window.close()
    out["shared"] = dict(SHARED)
    out["meta"] = {"comparisons": len(folders),
                   "sources": sorted(SOURCES) + (["window"] if with_window else [])}
    return scrub(out, {str(corpus): "<CORPUS>", str(work): "<WORK>"})  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/work/golden-words.json"))
    parser.add_argument("--corpus", type=Path, default=None,
                        help="keep the saved comparisons here (reused when it has them)")
    parser.add_argument("--no-window", action="store_true", help="skip the window's texts")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N comparisons (a trial; not a snapshot)")
    parser.add_argument("--recompute", action="store_true",
                        help="recompute each comparison from its runs' events before its words "
                        "are taken (the verdicts as this code makes them, not as they were "
                        "saved; the window still reopens the saved file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="xlagui-words-") as tmp:
        work = Path(tmp)
        os.environ["XLAGUI_DATA_DIR"] = str(work / "data")
        os.environ["XLAGUI_CACHE_DIR"] = str(work / "cache")
        corpus = args.corpus.resolve() if args.corpus else work / "corpus"
        result = snapshot(corpus, not args.no_window, work, args.limit, args.recompute)
    text = json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"{args.out}: {len(text):,} characters", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
