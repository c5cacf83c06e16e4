"""Soak: 20 consecutive tiny comparisons in one app session, with real worker processes.

    python bench/bench_soak.py [--comparisons 20] [--write]

Scripted through the main window's public API, offscreen. Measured after each comparison: the
GUI process's RSS, its threads, its open file descriptors and its child processes. Goals: RSS
growth ≤ 10%, no leftover processes or threads, the fd count back to where it started.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import add_write, load_average, publish, section_text, wait_for

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def python_threads() -> int:
    """Live Python threads, without the records Python keeps for threads it did not start (a
    QThread that once ran Python code leaves a "dummy" record behind after it has ended)."""
    return sum(1 for t in threading.enumerate() if not t.name.startswith("Dummy-"))


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--comparisons", type=int, default=20)
    add_write(p)
    args = p.parse_args(argv)
    load = load_average()

    import psutil
    from PySide6.QtCore import QSettings

    from tests.helpers.datasets import tiny_split_dataset
    from xlagui.ui.app import make_application
    from xlagui.ui.main_window import MainWindow

    tmp = Path(tempfile.mkdtemp(prefix="xlagui-soak-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")
    os.environ["XLAGUI_CACHE_DIR"] = str(tmp / "cache")
    app = make_application()
    window = MainWindow(
        settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
        probe=lambda: [{"id": "cpu", "name": "CPU", "kind": "CPU"}],
        history_root=tmp / "history",
    )
    window.resize(1600, 1000)
    window.show()

    window.open_dataset(tiny_split_dataset(tmp / "dataset", train=8, test=2))
    wait_for(window.dataset_loaded, 30_000)
    panel = window.settings_panel
    panel.epochs.setValue(2)
    panel.batch_size.setValue(8)
    panel.image_size.setValue(36)
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
        for _ in range(50):  # let queued signals and deferred deletes run
            app.processEvents()
            time.sleep(0.01)
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
    window.close()
    app.processEvents()

    first, last = rows[0], rows[-1]
    growth = (last["rss"] - first["rss"]) / first["rss"]
    finished = sum(all(s == "finished" for s in r["statuses"]) for r in rows)
    ok_rss = growth <= 0.10
    ok_children = all(r["children"] == 0 for r in rows)
    ok_threads = last["threads"] <= first["threads"] and last["py_threads"] <= first["py_threads"]
    # The OS count is the one that matters; Python's own count is there to name a culprit.
    ok_fds = last["fds"] <= first["fds"]

    def mark(ok: bool) -> str:
        return "met" if ok else "MISSED"

    mib = 2**20
    lines = [
        "## Soak: 20 comparisons in one app session (issue 4)",
        "",
        f"`python bench/bench_soak.py --comparisons {args.comparisons}`: the main window "
        "(offscreen), scripted through its public API (`open_dataset`, `start_comparison`, "
        "`comparison_finished`); each comparison is a real baseline and a real XLA "
        "(`jit_compile`) worker process on a tiny dataset (16 training images, 36 px, 2 "
        f"epochs). {finished} of {len(rows)} comparisons finished both runs, in "
        f"{seconds / 60:.1f} min.",
        "",
        "| what | before the first | after the first | after the last | goal |",
        "|---|---|---|---|---|",
        f"| GUI RSS | {start['rss'] / mib:.0f} MiB | {first['rss'] / mib:.0f} MiB | "
        f"{last['rss'] / mib:.0f} MiB ({growth:+.1%} since the first) | ≤ +10%: "
        f"{mark(ok_rss)} |",
        f"| OS threads (Python threads) | {start['threads']} ({start['py_threads']}) | "
        f"{first['threads']} ({first['py_threads']}) | {last['threads']} "
        f"({last['py_threads']}) | no growth: {mark(ok_threads)} |",
        f"| open file descriptors | {start['fds']} | {first['fds']} | {last['fds']} | back to "
        f"the start: {mark(ok_fds)} |",
        f"| worker processes left after a comparison | – | {first['children']} | "
        f"{last['children']} (max {max(r['children'] for r in rows)}) | none: "
        f"{mark(ok_children)} |",
        "",
        "RSS growth is measured from the end of the first comparison: the first one loads "
        "pyqtgraph's plots and Qt's fonts once.",
    ]
    publish("soak", section_text(lines, load), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
