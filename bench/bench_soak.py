"""Soak: 20 consecutive tiny comparisons in one app session, with real worker processes.

    python bench/bench_soak.py [--comparisons 20] [--windows 20] [--save F.json]
                               [--before F.json] [--write]

Scripted through the main window's public API, offscreen. Measured after each comparison: the
GUI process's RSS, its threads, its open file descriptors and its child processes. Goals: RSS
growth ≤ 10%, no leftover processes or threads, the fd count back to where it started.

Then, with that window still open, `--windows` times: a second window opens, reopens one of
those comparisons from the history, and is closed (no reference to it kept); measured after
each: the RSS, the top-level widgets and the main windows still alive. Goal: what a closed
window held is given back (RSS growth ≤ 10% from the first close, no window left).

Run against another checkout (the code before a change) by copying `bench/` into it and
running it there: `_common.py` puts its own checkout first on the path.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, section_text, wait_for

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def python_threads() -> int:
    """Live Python threads, without the records Python keeps for threads it did not start (a
    QThread that once ran Python code leaves a "dummy" record behind after it has ended)."""
    return sum(1 for t in threading.enumerate() if not t.name.startswith("Dummy-"))


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def settle(app: Any) -> None:
    """Let queued signals and deferred deletes run."""
    from PySide6.QtCore import QCoreApplication, QEvent

    for _ in range(50):
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        time.sleep(0.01)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--comparisons", type=int, default=20)
    p.add_argument("--windows", type=int, default=20, help="windows opened and closed after")
    p.add_argument("--save", type=Path, help="also write the figures to this JSON file")
    p.add_argument("--before", type=Path, action="append", default=[],
                   help="figures saved (--save) by a run of the code before a change: shown "
                        "beside this run's, in the order given (repeat it for several)")
    p.add_argument("--label", default="", help="what this checkout is, for the column")
    add_write(p)
    args = p.parse_args(argv)
    load = load_average()

    import psutil
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    import xlagui
    from tests.helpers.datasets import tiny_split_dataset
    from xlagui.ui.app import make_application
    from xlagui.ui.window.main_window import MainWindow

    print("xlagui from", Path(xlagui.__file__).parent, flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-soak-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")
    os.environ["XLAGUI_CACHE_DIR"] = str(tmp / "cache")
    app = make_application()

    def new_window() -> MainWindow:
        return MainWindow(
            settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
            probe=lambda: [{"id": "cpu", "name": "CPU", "kind": "CPU"}],
            history_root=tmp / "history",
        )

    window = new_window()
    window.resize(1600, 1000)
    window.show()

    window.open_dataset(tiny_split_dataset(tmp / "dataset", train=8, test=2))
    wait_for(window.dataset_loaded, 30_000)
    panel = window.settings_panel
    panel.epochs.setValue(2)
    panel.batch_size.setValue(8)
    panel.image_size.setValue(36)
    # Baseline and XLA alone (no arm the machine may tick by default), the shortest speed
    # measurement: the soak is about what a session keeps, not the figures.
    for box in panel.arm_boxes.values():
        box.setChecked(False)
    panel.budget.setValue(panel.budget.minimum())
    me = psutil.Process()
    start = {
        "rss": me.memory_info().rss,
        "threads": me.num_threads(),
        "fds": fds(),
        "py_threads": python_threads(),
    }
    rows = []
    t0 = time.perf_counter()
    for i in range(1, args.comparisons + 1):
        if not window.start_comparison():
            raise SystemExit("the comparison did not start")
        wait_for(window.comparison_finished, 300_000)
        settle(app)
        report = window.comparisons.report
        statuses = [r.status for r in report.runs] if report is not None else []
        sample = {
            "rss": me.memory_info().rss,
            "threads": me.num_threads(),
            "fds": fds(),
            "py_threads": python_threads(),
            "children": len(me.children(recursive=True)),
            "statuses": statuses,
        }
        rows.append(sample)
        print(
            f"comparison {i}: {statuses} rss {sample['rss'] / 2**20:.0f} MiB, threads "
            f"{sample['threads']}, fds {sample['fds']}, children {sample['children']}",
            flush=True,
        )
    seconds = time.perf_counter() - t0
    folders = sorted(p for p in (tmp / "history").iterdir() if (p / "comparison.json").exists())
    cycles = []
    for i in range(1, args.windows + 1):
        other = new_window()
        other.resize(1600, 1000)
        other.show()
        shown: list[object] = []
        other.report_shown.connect(shown.append)  # it may come before open_history_item returns
        if not other.open_history_item(folders[(i - 1) % len(folders)]):
            raise SystemExit("the comparison did not reopen")
        if not shown:
            wait_for(other.report_shown, 30_000)
        if not shown:
            raise SystemExit("the reopened comparison was not shown")
        settle(app)
        other.close()
        del other
        settle(app)
        gc.collect()
        settle(app)
        tops = QApplication.topLevelWidgets()
        cycle = {
            "rss": me.memory_info().rss,
            "tops": len(tops),
            "windows": sum(isinstance(w, MainWindow) for w in tops),
        }
        cycles.append(cycle)
        print(
            f"window {i}: rss {cycle['rss'] / 2**20:.0f} MiB, top-level widgets "
            f"{cycle['tops']}, main windows {cycle['windows']}",
            flush=True,
        )
    window.close()
    app.processEvents()

    first, last = rows[0], rows[-1]
    figures = {
        "checkout": checkout(),
        "label": args.label,
        "comparisons": len(rows),
        "finished": sum(all(s == "finished" for s in r["statuses"]) for r in rows),
        "minutes": seconds / 60,
        "start": start,
        "first": first,
        "last": last,
        "max_children": max(r["children"] for r in rows),
        "windows": len(cycles),
        "first_close": cycles[0] if cycles else None,
        "last_close": cycles[-1] if cycles else None,
    }
    if args.save:
        args.save.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in args.before] + [figures]
    publish("soak", section_text(section_lines(runs, args), load), args.write)
    return 0


def checkout() -> str:
    """The commit of the checkout this bench runs in, and whether it has changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "xlagui"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with changes" if dirty else "")


def section_lines(runs: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    """The section: one column per run (the code before a change, then after)."""
    mib = 2**20

    def growth(a: int, b: int) -> str:
        return f"{(b - a) / a:+.1%}"

    def row(what: str, cell: Any, goal: str, ok: Any) -> str:
        cells = " | ".join(f"{cell(r)}{'' if ok(r) else ' (MISSED)'}" for r in runs)
        return f"| {what} | {cells} | {goal} |"

    def rss(key: str) -> Any:
        return lambda r: f"{r[key]['rss'] / mib:.0f} MiB"

    def closes(r: dict[str, Any]) -> str:
        a, b = r["first_close"], r["last_close"]
        return f"{b['rss'] / mib:.0f} MiB ({growth(a['rss'], b['rss'])})" if a else "–"

    heads = " | ".join(f"{r.get('label') or 'this checkout'} ({r['checkout']})" for r in runs)
    lines = [
        "## Soak: 20 comparisons, then windows opened and closed, in one app session "
        "(issues 4 and 22)",
        "",
        f"`python bench/bench_soak.py --comparisons {args.comparisons} --windows "
        f"{args.windows}`: the main window (offscreen), scripted through its public API "
        "(`open_dataset`, `start_comparison`, `comparison_finished`); each comparison is a real "
        "baseline and a real XLA (`jit_compile`) worker process on a tiny dataset (16 training "
        "images, 36 px, 2 epochs), after a speed measurement with the shortest budget (10 s) "
        "and the inspection compile for What XLA did. Then, with that window open, a second "
        "window is opened, "
        "reopens one of those comparisons from the history (`open_history_item`, "
        "`report_shown`) and is closed, no reference to it kept, "
        f"{args.windows} times. A column per checkout (an earlier one run with this "
        "`bench/` copied into it).",
        "",
        f"| what | {heads} | goal |",
        "|---|" + "---|" * len(runs) + "---|",
        row("comparisons that finished both runs (minutes)",
            lambda r: f"{r['finished']} of {r['comparisons']} ({r['minutes']:.1f} min)",
            "all", lambda r: r["finished"] == r["comparisons"]),
        row("GUI RSS before the first comparison", rss("start"), "", lambda r: True),
        row("GUI RSS after the first", rss("first"), "", lambda r: True),
        row("GUI RSS after the last (growth since the first)",
            lambda r: f"{r['last']['rss'] / mib:.0f} MiB "
                      f"({growth(r['first']['rss'], r['last']['rss'])})",
            "≤ +10%", lambda r: r["last"]["rss"] <= 1.1 * r["first"]["rss"]),
        row("OS threads (Python threads): start, first, last",
            lambda r: ", ".join(f"{r[k]['threads']} ({r[k]['py_threads']})"
                                for k in ("start", "first", "last")),
            "no growth", lambda r: r["last"]["threads"] <= r["first"]["threads"]
            and r["last"]["py_threads"] <= r["first"]["py_threads"]),
        row("open file descriptors: start, first, last",
            lambda r: ", ".join(str(r[k]["fds"]) for k in ("start", "first", "last")),
            "back to the start", lambda r: r["last"]["fds"] <= r["first"]["fds"]),
        row("worker processes left after a comparison (most)",
            lambda r: str(r["max_children"]), "none", lambda r: r["max_children"] == 0),
        row("GUI RSS after the first window closed", lambda r: (
            f"{r['first_close']['rss'] / mib:.0f} MiB" if r["first_close"] else "–"),
            "", lambda r: True),
        row(f"GUI RSS after the last of {args.windows} closed (growth since the first)",
            closes, "≤ +10%", lambda r: not r["first_close"]
            or r["last_close"]["rss"] <= 1.1 * r["first_close"]["rss"]),
        row("top-level widgets / main windows alive after the last closed", lambda r: (
            f"{r['last_close']['tops']} / {r['last_close']['windows']}"
            if r["last_close"] else "–"),
            "1 main window (the open one)",
            lambda r: not r["last_close"] or r["last_close"]["windows"] <= 1),
        "",
        "RSS growth is measured from the end of the first comparison (the first one loads "
        "pyqtgraph's plots and Qt's fonts once) and from the first window closed.",
    ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
