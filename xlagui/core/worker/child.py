"""Every child process of the app: `python -m xlagui.core.worker.child ARGS` (from a frozen
bundle, `xlagui -m xlagui.core.worker.child ARGS`), one kind of work per process, each answering
in protocol events on its stdout (`core/protocol/events.py`):

- `SPEC.json` or `-` (the spec as stdin's first line): one training, measuring or inspecting run
  (`run`). XLA settings are process-global and TensorFlow never gives memory back, so every run
  gets its own process; the parent sets the environment before this process imports TensorFlow
  (which device is visible, XLA flags, the HLO dump folder; see
  `xlagui.core.measure.transports.environment`). Stdin then carries commands: `cancel` asks the
  run to stop at the next batch; a spec with `"mode": "measure"` makes a measuring worker that
  runs warm-up and blocks of training steps as the parent asks (`worker/measure.py`);
- `--probe`: the devices TensorFlow sees (a `devices` event);
- `--check-model SPEC.json … | -`: the model check (`xlagui.core.model.check`; `-` reads the
  specs as stdin's lines), a `model` or `error` event per model;
- `--tensorboard-text DIR`: the comparison's summary (stdin's text) for TensorBoard (a
  `text-written` event);
- `--peak --device D --image-size N --batch B [--ceiling-only] [--quick]`: the peak probe
  (`xlagui.core.machine.peak_probe`, a `limits` event).

Each of those is started through a transport (`xlagui.core.measure.transports`), decoded by the
one decoder with the one malformed-line policy. Any failure is an `error` event, then a
non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from xlagui.core.machine.devices import probe_devices
from xlagui.core.machine.peak_probe import probe
from xlagui.core.model.check import check_main
from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    CancelledEvent,
    DevicesEvent,
    ErrorEvent,
    Event,
    LimitsEvent,
    ProtocolError,
    TextWrittenEvent,
    WorkerCommand,
)
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.spec import SPEC_FILE, RunSpec
from xlagui.core.worker import tensorboard as tboard
from xlagui.core.worker.errors import error_event, error_message
from xlagui.core.worker.explain import explain
from xlagui.core.worker.io import EventSink, redirect_stdout, watch_stdin
from xlagui.core.worker.measure import measure
from xlagui.core.worker.setup import set_up
from xlagui.core.worker.train import TrainState, inspect, train

USAGE = (
    "usage: python -m xlagui.core.worker.child "
    "SPEC.json | - | --probe | --check-model SPEC.json"
)  # the run's forms; the others are the app's own (the module's docstring)


def run(
    spec: RunSpec,
    sink: EventSink,
    cancel: threading.Event,
    commands: queue.Queue[WorkerCommand] | None = None,
) -> None:
    """One run of `spec`, start to end: its events on `sink`. A failure is sent as an `error`
    event and raised again (the process then exits non-zero)."""
    state = TrainState()
    try:
        setup = set_up(spec, sink, spec.mode)
        if cancel.is_set():
            sink.emit(CancelledEvent(epochs_done=0))
            return
        if spec.mode is WorkerMode.MEASURE:
            measure(spec, setup, sink, cancel, commands or queue.Queue())
        elif spec.mode is WorkerMode.INSPECT and spec.config.explain:
            explain(spec, setup, sink)
        elif spec.mode is WorkerMode.INSPECT:
            inspect(spec, setup, sink)
        else:
            train(spec, setup, sink, cancel, state)
    except BaseException as exc:  # everything becomes an error event, then a non-zero exit
        if cancel.is_set() and not isinstance(exc, MemoryError):
            sink.emit(CancelledEvent(epochs_done=state.epochs_done))
            return
        sink.emit(error_event(exc, spec.config, spec.arm))
        raise


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    t0 = time.perf_counter()
    events = redirect_stdout()
    sink = EventSink(events, t0)
    try:
        if argv and argv[0] == "--probe":
            return _answer(sink, _devices)
        if argv and argv[0] == "--check-model" and len(argv) >= 2:
            return check_main(_check_specs(argv[1:]), events)
        if argv and argv[0] == "--tensorboard-text" and len(argv) == 2:
            return _answer(sink, lambda: _tensorboard_text(Path(argv[1])))
        if argv and argv[0] == "--peak":
            return _answer(sink, lambda: _peak(argv[1:]))
        if len(argv) != 1:
            print(USAGE, file=sys.stderr)
            return 2
        return _run_main(argv[0], sink)
    finally:
        events.flush()


def _run_main(where: str, sink: EventSink) -> int:
    cancel = threading.Event()
    commands: queue.Queue[WorkerCommand] = queue.Queue()
    watcher = threading.Thread(
        target=watch_stdin, args=(cancel, commands), daemon=True, name="stdin"
    )
    # A spec file is read with the watcher already on (a parent gone while it is read ends
    # this process); a spec on stdin (`-`) must be read before the watcher takes stdin over.
    if where != "-":
        watcher.start()
    try:
        spec = read_spec(where)
    except (OSError, ProtocolError) as exc:
        print(f"cannot read the run spec {where}: {exc}", file=sys.stderr)
        return 2
    if where == "-":
        watcher.start()
    try:
        run(spec, sink, cancel, commands)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def read_spec(where: str) -> RunSpec:
    """The run spec from its file, or with `-` from the first line of stdin (a worker on an SSH
    host: the spec comes down the same connection as the commands, and is kept in the run
    folder as `spec.json` like a local one)."""
    if where != "-":
        return RunSpec.from_json(Path(where).read_text(encoding="utf-8"))
    line = sys.stdin.readline()
    if not line:
        raise ProtocolError("run spec: stdin ended before the spec's line")
    spec = RunSpec.from_json(line)
    # The host's shell line made the run folder; it is gone only when the comparison was
    # stopped and its folder removed while this process started: then nothing is recreated.
    if not spec.run_dir.is_dir():
        raise ProtocolError(f"run spec: the run folder {spec.run_dir} is gone (stopped)")
    (spec.run_dir / SPEC_FILE).write_text(spec.to_json(), encoding="utf-8")
    return spec


def _answer(sink: EventSink, work: Callable[[], Event]) -> int:
    """A short child's one answer (`work()` gives its event), or its failure as an `error`."""
    try:
        sink.emit(work())
    except Exception as exc:
        traceback.print_exc()
        sink.emit(ErrorEvent(error_type=type(exc).__name__, message=error_message(exc),
                             details=traceback.format_exc()))
        return 1
    return 0


def _devices() -> DevicesEvent:
    return DevicesEvent(protocol=PROTOCOL_VERSION, devices=probe_devices())


def _tensorboard_text(target: Path) -> TextWrittenEvent:
    tboard.write_text_here(target, sys.stdin.read())
    return TextWrittenEvent(protocol=PROTOCOL_VERSION, target=str(target))


def _peak(argv: list[str]) -> LimitsEvent:
    parser = argparse.ArgumentParser(prog="python -m xlagui.core.worker.child --peak")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--image-size", type=int, default=150)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--ceiling-only", action="store_true")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for tests")
    args = parser.parse_args(argv)
    return probe(args.device, args.image_size, args.batch, peak_too=not args.ceiling_only,
                 quick=args.quick)


def _check_specs(words: list[str]) -> list[str]:
    """The model check's spec files; `-`: the specs are stdin's lines, kept as files in the
    child's temporary folder (its own, under its run folder: see the environment's TMPDIR)."""
    if words != ["-"]:
        return words
    folder = Path(tempfile.mkdtemp(prefix="check-"))
    paths = []
    for i, line in enumerate(ln for ln in sys.stdin.read().splitlines() if ln.strip()):
        path = folder / f"check-{i}.json"
        path.write_text(line, encoding="utf-8")
        paths.append(str(path))
    return paths


def entry(argv: list[str] | None = None) -> None:
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: TensorFlow's can take seconds and the results are out.
    os._exit(code)


if __name__ == "__main__":
    entry()
