"""How fast a run stops when the user presses Stop: during training, during the XLA compile and
during validation. Goal: within 2 s every time (cooperative first, then terminate, then kill).

    python bench/bench_cancel.py [--repeats 3] [--write]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, load_average, machine, today, write_section

sys.path.insert(0, str(ROOT))
from tests.helpers.images import make_split_dataset
from xlagui.core.config import RunConfig, XlaMode
from xlagui.core.events import BatchEvent, Event, StartedEvent
from xlagui.core.runner import RunSpec, run_worker, samples_from_scan
from xlagui.core.scan import scan_dataset
from xlagui.core.task import TaskState

GOAL = 2.0


def stop_latency(phase: str, work: Path, i: int) -> tuple[float, bool]:
    """Seconds from the Stop request to the run having ended, and whether it had to be forced."""
    scan = scan_dataset(work / "data")
    names, train, val = samples_from_scan(scan)
    mode = XlaMode.JIT if phase == "compile" else XlaMode.OFF
    cfg = RunConfig(epochs=100, batch_size=8, image_size=96)
    spec = RunSpec(
        "c",
        "xla" if mode is XlaMode.JIT else "baseline",
        mode,
        cfg,
        names,
        train,
        val,
        work / f"run-{phase}-{i}",
    )
    state = TaskState()
    asked: list[float] = []

    def ask() -> None:
        if not asked:
            asked.append(time.perf_counter())
            state.request_interruption()

    def on_event(e: Event) -> None:
        if phase == "compile" and isinstance(e, StartedEvent):
            # The first step traces and compiles; ask a moment into it.
            threading.Timer(1.0, ask).start()
        elif phase == "training" and isinstance(e, BatchEvent) and e.epoch == 2 and e.step == 2:
            ask()
        elif (
            phase == "validation"
            and isinstance(e, BatchEvent)
            and e.epoch == 2
            and (e.step == len(train) // 8)
        ):
            ask()  # the last training step of the epoch: validation is next

    result = run_worker(spec, state, on_event)
    ended = time.perf_counter()
    forced = bool(getattr(result.events[-1], "forced", False))
    return ended - asked[0], forced


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    load = load_average()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # A validation set large enough that validating takes a while.
        make_split_dataset(work / "data", {"a": 24, "b": 24}, {"a": 200, "b": 200}, size=(120, 120))
        for phase in ("training", "compile", "validation"):
            lat = []
            forced = 0
            for i in range(args.repeats):
                seconds, was_forced = stop_latency(phase, work, i)
                lat.append(seconds)
                forced += was_forced
                print(
                    f"{phase}: stopped {seconds:.2f} s after the request"
                    f"{' (terminated)' if was_forced else ''}",
                    flush=True,
                )
            worst = max(lat)
            rows.append(
                f"| {phase} | {statistics.median(lat):.2f} s | {worst:.2f} s | {forced} of "
                f"{len(lat)} | {'met' if worst <= GOAL else 'MISSED'} |"
            )
    text = "\n".join(
        [
            "## Stop (cancel) latency",
            "",
            "`python bench/bench_cancel.py`: a run of the article's CNN (96 px, batch 8, CPU) is "
            "asked to stop during training (epoch 2), one second into the XLA compile "
            "(`jit_compile=True`), and at the start of validation (400 images); the time from "
            "the request to the worker process having ended. Cooperative stop at the next batch; "
            "after a 1 s grace the worker is terminated, then killed.",
            "",
            "| phase | median | worst | terminated | goal ≤ 2 s |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"Machine: {machine()}; load average before {load}. Measured {today()}.",
        ]
    )
    print(text)
    if args.write:
        write_section("cancel", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
