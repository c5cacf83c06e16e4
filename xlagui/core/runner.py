"""Supervise one worker process: start it, relay its events, cancel it, never leave it behind.

`run_worker` is a plain blocking function that reports through a `TaskState`; the CLI calls it
from its main thread, the GUI from a QThread.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from xlagui.core import paths
from xlagui.core.config import RunConfig, XlaMode
from xlagui.core.events import (
    CancelledEvent,
    ErrorEvent,
    Event,
    EventLog,
    FinishedEvent,
    JSONObject,
    JSONValue,
    ProtocolError,
    ProtocolMismatch,
    StartedEvent,
    check_protocol,
    decode,
    parse_event,
    plain,
)
from xlagui.core.pipeline import Sample
from xlagui.core.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.scan import DatasetScan

# Cancel is cooperative first (the worker checks every batch), then enforced: a worker busy in a
# long XLA compile cannot check, so after the grace period it is terminated, then killed.
CANCEL_GRACE_SECONDS = 1.0
TERMINATE_GRACE_SECONDS = 0.5
LOG_TAIL_CHARS = 4000

SAMPLE_FIELDS = ("path", "label", "format", "mode")  # a sample's order in spec.json


@dataclass
class RunSpec:
    """Everything a worker needs to train once: the parent writes it to the run's spec.json
    (`to_json`), the worker reads it back (`from_json`, every field's type checked)."""

    run_id: str
    variant: str  # "baseline" or "xla"
    xla_mode: XlaMode
    config: RunConfig
    class_names: list[str]
    train: list[Sample]
    val: list[Sample]
    run_dir: Path
    repeat: int = 1
    mode: str = "train"  # or "measure": a worker that runs blocks of steps on request
    precision: str = "float32"  # the Keras dtype policy (see `xlagui.core.arms.Precision`)
    xla_dump: str = "text"  # what XLA writes to run_dir/xla: see `XLA_DUMPS`
    tensorboard_dir: str = ""  # where a training worker writes TensorBoard scalars; "" for none

    def to_dict(self) -> JSONObject:
        def samples(items: list[Sample]) -> JSONValue:
            # A sample is a short array (path, label, format, mode): thousands of them.
            return [[s.path, s.label, s.format, s.mode] for s in items]

        return {
            "run_id": self.run_id,
            "mode": self.mode,
            "variant": self.variant,
            "xla_mode": self.xla_mode.value,
            "precision": self.precision,
            "repeat": self.repeat,
            "config": plain(self.config),
            "class_names": list(self.class_names),
            "train": samples(self.train),
            "val": samples(self.val),
            "run_dir": str(self.run_dir),
            "xla_dump": self.xla_dump,
            "tensorboard_dir": self.tensorboard_dir,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, data: object) -> RunSpec:
        """The spec a parent wrote; `ProtocolError` names a field of the wrong type."""
        if isinstance(data, dict):
            data = dict(data)
            for split in ("train", "val"):
                items = data.get(split)
                if isinstance(items, list):
                    data[split] = [_sample_object(item, f"{split}[{i}]")
                                   for i, item in enumerate(items)]
        return decode(cls, data, "run spec")

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"run spec: not JSON ({exc})") from None
        return cls.from_dict(data)


def _sample_object(item: JSONValue, where: str) -> JSONValue:
    if not isinstance(item, list) or not 2 <= len(item) <= len(SAMPLE_FIELDS):
        raise ProtocolError(
            f"run spec: field {where!r} should be [path, label, format, mode], got {item!r}"
        )
    return dict(zip(SAMPLE_FIELDS, item, strict=False))  # format and mode may be left out


@dataclass
class RunResult(EventLog):
    spec: RunSpec
    status: str  # "finished", "cancelled" or "error"
    events: list[Event] = field(default_factory=list)
    returncode: int | None = None




def samples_from_scan(scan: DatasetScan) -> tuple[list[str], list[Sample], list[Sample]]:
    """Class names and the train/validation samples of a `DatasetScan` (no second walk)."""
    names = list(scan.class_names)
    index = {n: i for i, n in enumerate(names)}

    def samples(split: str) -> list[Sample]:
        return [Sample(f.path, index[f.label], f.format, f.mode) for f in scan.files_for(split)]

    return names, samples("train"), samples("test")


# What an XLA worker dumps to run_dir/xla, the material of "what XLA did" (`core/hlo.py`).
# XLA's CPU backend in TF 2.21 writes its LLVM IR, MLIR and object files whenever dumping is on,
# whatever the format flags (`--xla_dump_emitter_re` and `--xla_dump_hlo_module_re` do not
# remove them; there is no `--xla_dump_ir`), so a dump is never only the HLO text. Without
# metadata the HLO text is half the size (186 → 93 KB at 64 px), but the whole dump only 6%
# smaller and its compile no faster within the noise, and the op names it drops are what label
# the fusions: `text` it is. bench/bench_evidence.py measured what a dump costs (BENCHMARKS.md,
# "Evidence collection"); `compare.spec_for` keeps it out of the measuring workers.
XLA_DUMPS: dict[str, str] = {
    "text": "--xla_dump_hlo_as_text",
    "nometa": "--xla_dump_hlo_as_text --xla_dump_disable_metadata",
    "none": "",
}


def xla_flags(run_dir: Path, dump: str) -> str:
    """XLA_FLAGS for a worker that dumps `dump` (a key of `XLA_DUMPS`) into run_dir/xla."""
    if dump not in XLA_DUMPS:
        raise ValueError(f"unknown XLA dump setting {dump!r}; one of {', '.join(XLA_DUMPS)}")
    if dump == "none":
        return ""
    return f"--xla_dump_to={run_dir / 'xla'} {XLA_DUMPS[dump]}"


def worker_env(xla_mode: XlaMode, device: str, run_dir: Path, dump: str = "text") -> dict[str, str]:
    """The environment a worker must have before it imports TensorFlow."""
    env = dict(os.environ)
    for key in ("TF_XLA_FLAGS", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES", "TF_CPP_VMODULE"):
        env.pop(key, None)
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # hide every GPU
    elif device.startswith("gpu:"):
        env["CUDA_VISIBLE_DEVICES"] = device.split(":")[1]
    if xla_mode.facts.tf_xla_flags:
        env["TF_XLA_FLAGS"] = xla_mode.facts.tf_xla_flags
    if xla_mode is not XlaMode.OFF:
        # The compiled HLO modules are the evidence that XLA did compile.
        flags = xla_flags(run_dir, dump)
        if flags:
            env["XLA_FLAGS"] = flags
        # One log line per compiled cluster with its compile time ("Compiled NAME 1 times,
        # compile time: N us"): the per-module compile time of "what XLA did".
        env["TF_CPP_VMODULE"] = "device_compilation_profiler=1"
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"  # keep "Compiled cluster using XLA" in the log
    # Keras writes ~/.keras/keras.json on import; keep it in our own cache folder instead.
    env.setdefault("KERAS_HOME", str(paths.cache_dir() / "keras"))
    # TensorFlow's autograph leaves generated source files in the temporary folder; give the
    # worker one of its own, which the runner removes when the worker has ended.
    for key in ("TMPDIR", "TEMP", "TMP"):
        env[key] = str(run_dir / "tmp")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def worker_command(spec_path: Path) -> list[str]:
    return [sys.executable, "-m", "xlagui.core.worker", str(spec_path)]


def _reader(stream: IO[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - chars))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


# What TensorFlow, the C++ runtime and Python print when an allocation fails.
OOM_MARKERS = (
    "bad_alloc",
    "ResourceExhausted",
    "OOM when allocating",
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
)


def died_event(returncode: int, log_path: Path, config: RunConfig | None = None) -> ErrorEvent:
    """An error event for a worker that ended without saying why.

    A worker that dies of out-of-memory (a C++ `bad_alloc`, the kernel's OOM killer) cannot send
    its own error event, so the parent, which knows the run's `config`, names what to change.
    """
    tail = log_tail(log_path)
    sizes = (
        f" with batch size {config.batch_size} and image size {config.image_size}"
        if config is not None
        else ""
    )
    if any(marker in tail for marker in OOM_MARKERS):
        return ErrorEvent(
            error_type="OutOfMemory",
            message="the worker ran out of memory",
            hint=f"The images, the batch and the model did not fit in memory{sizes}: try a "
            "smaller batch size or image size (memory grows with batch × image size²).",
            details=tail,
        )
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        message = f"the worker process was killed ({name}) before it finished"
        hint = (
            "If nobody killed it on purpose, the system probably ran out of memory and the "
            f"kernel stopped it{sizes}: try a smaller batch size or image size."
        )
    else:
        message = f"the worker process exited with code {returncode} without a result"
        hint = "See the run's log for what happened."
    return ErrorEvent(error_type="WorkerDied", message=message, hint=hint, details=tail)


def run_worker(
    spec: RunSpec,
    state: TaskState,
    on_event: Callable[[Event], None] | None = None,
    *,
    cancel_grace: float = CANCEL_GRACE_SECONDS,
    terminate_grace: float = TERMINATE_GRACE_SECONDS,
    command: Sequence[str] | None = None,
) -> RunResult:
    """Run one worker to its end and return what it said. Never raises for a worker failure:
    a crash becomes an `error` event, a forced stop a `cancelled` event."""
    run_dir = spec.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    spec_path = run_dir / "spec.json"
    spec_path.write_text(spec.to_json(), encoding="utf-8")
    log_path = run_dir / "worker.log"
    (run_dir / "tmp").mkdir(exist_ok=True)
    result = RunResult(spec=spec, status="error")
    events_file = (run_dir / "events.jsonl").open("w", encoding="utf-8")
    t0 = time.perf_counter()

    def deliver(event: Event) -> None:
        result.events.append(event)
        events_file.write(event.to_json() + "\n")
        events_file.flush()
        if on_event is not None:
            on_event(event)

    with log_path.open("wb") as log, events_file:
        proc = subprocess.Popen(
            list(command) if command else worker_command(spec_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=worker_env(spec.xla_mode, spec.config.device, run_dir, spec.xla_dump),
            text=True,
            encoding="utf-8",
            # Its own process group: a Ctrl+C in the terminal reaches the CLI, which cancels
            # the worker properly, instead of killing the worker mid-write.
            start_new_session=(os.name == "posix"),
        )
        assert proc.stdout is not None and proc.stdin is not None
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True)
        reader.start()
        cancel_sent_at: float | None = None
        terminated_at: float | None = None
        forced = False
        terminal: Event | None = None
        try:
            while True:
                if state.is_interruption_requested() and cancel_sent_at is None:
                    cancel_sent_at = time.monotonic()
                    with contextlib.suppress(OSError):
                        proc.stdin.write("cancel\n")
                        proc.stdin.flush()
                now = time.monotonic()
                if cancel_sent_at is not None and proc.poll() is None:
                    if terminated_at is None and now - cancel_sent_at >= cancel_grace:
                        forced = True
                        terminated_at = now
                        proc.terminate()
                    elif terminated_at is not None and now - terminated_at >= terminate_grace:
                        proc.kill()
                try:
                    line = lines.get(timeout=0.05)
                except queue.Empty:
                    continue
                if line is None:
                    break
                try:
                    event = parse_event(line)
                    if isinstance(event, StartedEvent):
                        check_protocol(event)
                except ProtocolMismatch as exc:
                    # A worker from another release: refused, as the measuring workers are.
                    terminal = ErrorEvent(
                        error_type=type(exc).__name__,
                        message=str(exc),
                        hint="The worker and the app do not speak the same protocol.",
                    )
                    terminal.t = round(time.perf_counter() - t0, 6)
                    deliver(terminal)
                    proc.terminate()
                    break
                except ProtocolError:
                    continue  # not ours (a library printing to stdout); the log has the rest
                if isinstance(event, (FinishedEvent, CancelledEvent, ErrorEvent)):
                    terminal = event
                deliver(event)
        finally:
            # Whatever happened here (even an exception in a watcher), the worker goes too.
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=5 if terminal is not None else terminate_grace + 0.5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=1)
            with contextlib.suppress(OSError):
                proc.stdout.close()
            shutil.rmtree(run_dir / "tmp", ignore_errors=True)
        result.returncode = proc.returncode
        if terminal is None:
            if cancel_sent_at is not None:
                terminal = CancelledEvent(
                    epochs_done=sum(1 for e in result.events if e.type == "epoch"),
                    forced=forced,
                    reason="cancelled by the user; the worker did not stop by itself and was "
                    "terminated"
                    if forced
                    else "cancelled by the user",
                )
            else:
                terminal = died_event(proc.returncode, log_path, spec.config)
            terminal.t = round(time.perf_counter() - t0, 6)
            deliver(terminal)
    result.status = terminal.type
    return result


def probe_devices(timeout: float = 120.0) -> list[dict[str, str]]:
    """Ask a throwaway worker which devices TensorFlow sees (the GUI never imports it)."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "xlagui.core.worker", "--probe"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        )
        for line in out.stdout.splitlines():
            if line.startswith("{"):
                return list(json.loads(line).get("devices", []))
    except (subprocess.TimeoutExpired, OSError, json.JSONDecodeError):
        pass
    return [{"id": "cpu", "name": "CPU", "kind": "CPU"}]
