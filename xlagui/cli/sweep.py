"""`xlagui sweep`: many comparisons over a grid of settings, to see where XLA's verdict flips.

    xlagui sweep DATASET|--demo --batch 16,128 --image-size 64,150 --model cnn,mixer
                 --arms jit,bf16 --host a,b --set threads=1,2 --set onednn=on,off
                 --budget SECONDS --out FOLDER [--json]

Each option with a comma list is an axis (`xlagui.core.sweep.plan`); `--arms` is the arms every
cell measures (give it more than once for an axis of arm lists). The command plans the sweep,
says the plan, runs it with `run_sweep` (here, one cell at a time) and prints the sentences of
`xlagui.present.sweep`; the folder keeps `sweep.json`, `sweep.csv`, `sweep.md` and each cell's
comparison. Run it again with the same `--out` to resume: only the missing cells run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from xlagui.cli.common import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, reach
from xlagui.cli.common import console as _console
from xlagui.cli.compare_watch import _install_stop_signals
from xlagui.cli.console import SweepProgress
from xlagui.core.compare import CLOSING
from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CellJob, CellStatus
from xlagui.core.sweep.export import SWEEP_CSV, SWEEP_MD, SWEEP_PNG
from xlagui.core.sweep.plan import (
    ARMS,
    HOST,
    LEVER_PREFIX,
    MODEL,
    SETTING_AXES,
    Axis,
    SweepPlan,
    plan_sweep,
)
from xlagui.core.sweep.result import SweepResult
from xlagui.core.sweep.runner import CellExecutor, SweepRequest, run_sweep
from xlagui.core.sweep.store import SWEEP_JSON, kept_cells
from xlagui.present.sweep import plan_words, sentences, sweep_markdown

if TYPE_CHECKING:
    from rich.console import Console


def cmd_sweep(args: argparse.Namespace, executor: CellExecutor | None = None) -> int:
    """Plan, say the plan, run, say where the verdict flips. `executor`: where the cells run
    (None: here, one at a time); a cluster's option gives its own."""
    console = _console(stderr=args.json)
    plan = sweep_plan(args)
    job = _job(args, console)
    request = SweepRequest(plan=plan, job=job, markdown=sweep_markdown)
    kept = kept_cells(job.folder, plan)  # a folder holding another sweep is refused here
    console.print(f"Sweep: {plan_words(plan, kept)}", soft_wrap=True)
    console.print(f"Folder: {job.folder}", soft_wrap=True)
    state = TaskState()
    restore = _install_stop_signals(state, console, CLOSING)
    try:
        with SweepProgress(console, plan) as progress:
            result = run_sweep(request, progress, state, executor)
    finally:
        restore()
    return _ended(args, result, job.folder, console)


def sweep_plan(args: argparse.Namespace) -> SweepPlan:
    """The plan of `sweep`'s arguments: an axis for each option given, in the order of the
    usage line, then the runtime settings (`--set`) in the order given."""
    base = RunConfig(device=args.device, seed=args.seed, holdout_percent=args.holdout_percent,
                     target_percent=args.target_percent, augment=args.augment)
    axes = [Axis(name, tuple(_list(values)))
            for name, values in (*((n, getattr(args, n)) for n in SETTING_AXES),
                                 (MODEL, args.model))
            if values]
    if args.arms:
        axes.append(Axis(ARMS, tuple(args.arms)))
    if args.host:
        axes.append(Axis(HOST, tuple(_list(args.host))))
    for setting in args.set:
        name, sep, values = setting.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--set takes NAME=VALUE,VALUE (threads=1,2), got {setting!r}")
        axes.append(Axis(LEVER_PREFIX + name.strip(), tuple(_list(values))))
    return plan_sweep(base, axes, args.budget)


def _list(text: str) -> list[str]:
    return [v.strip() for v in str(text).split(",") if v.strip()]


def _job(args: argparse.Namespace, console: Console) -> CellJob:
    if args.demo and args.dataset:
        raise ConfigError("give either a dataset folder or --demo, not both")
    from xlagui.core.compare.inputs import dataset_folder

    demo = args.demo or args.dataset is None
    if demo:
        with console.status("preparing the demo dataset…"):
            dataset = str(dataset_folder(None)[0])
    else:
        dataset = str(dataset_folder(args.dataset)[0].resolve())
    out = (args.out or Path.cwd() / f"xlagui-sweep-{_dt.datetime.now():%Y%m%d-%H%M%S}").resolve()
    if out.is_relative_to(Path(dataset).resolve()):
        raise ConfigError("the sweep folder must not be inside the dataset folder")
    from xlagui.present.sweep import CELL_WORDS

    return CellJob(dataset=dataset, folder=out, demo=demo, reach=reach(args), words=CELL_WORDS)


def _ended(args: argparse.Namespace, result: SweepResult, folder: Path, console: Console
           ) -> int:
    """The sentences, where the files are, sweep.json on stdout with --json; the exit status:
    cancelled after a stop, failed when a cell failed."""
    for sentence in sentences(result.plan, result.cells):
        console.print(f"• {sentence}", soft_wrap=True)
    written = [folder / SWEEP_JSON, folder / SWEEP_CSV, folder / SWEEP_MD]
    if getattr(args, "png", False):
        from xlagui.ui.sweep.sweep_png import render_sweep_png

        png = render_sweep_png(result, folder / SWEEP_PNG)
        if png is None:
            console.print("No sweep.png: a plot shows one or two swept settings; the table is "
                          "in sweep.md.", soft_wrap=True)
        else:
            written.append(png)
    console.print(f"Written: {', '.join(str(p) for p in written)}", soft_wrap=True)
    if args.json:
        sys.stdout.write((folder / SWEEP_JSON).read_text(encoding="utf-8"))
        sys.stdout.flush()
    if result.stopped:
        return EXIT_CANCELLED
    failed = any(c.status == CellStatus.FAILED for c in result.cells)
    return EXIT_FAILED if failed else EXIT_OK
