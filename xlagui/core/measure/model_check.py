"""The parent side of the model check (`xlagui.core.model.check`): build the chosen model once
in a short worker process before any measuring, and return its `ModelEvent`, or raise
`ModelRefused` with the worker's message (file and line)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from xlagui.core.measure.worker_process import worker_env
from xlagui.core.model.check import ModelCheckSpec, ModelRefused
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    ErrorEvent,
    ModelEvent,
    ProtocolError,
    parse_event,
)
from xlagui.core.protocol.task import Cancelled, TaskState

CHECK_TIMEOUT_SECONDS = 600.0
POLL_SECONDS = 0.2  # how often a running check looks at its TaskState


def check_model(spec: ModelCheckSpec, timeout: float = CHECK_TIMEOUT_SECONDS) -> ModelEvent:
    """Build `spec.model` once in a worker process (on the CPU) and return what it reports.
    Raises `ModelRefused` with the worker's message when the model cannot be trained."""
    return check_models([spec], timeout)[0]


def check_models(
    specs: list[ModelCheckSpec],
    timeout: float = CHECK_TIMEOUT_SECONDS,
    state: TaskState | None = None,
) -> list[ModelEvent]:
    """`check_model` for several models in one worker process (TensorFlow loads once).

    With `state`, a request to stop kills the worker and raises `Cancelled` (the window checks
    a model while the user may still change it)."""
    spec = specs[0]
    with tempfile.TemporaryDirectory(prefix="xlagui-check-") as tmp:
        folder = Path(tmp)
        (folder / "tmp").mkdir()
        paths = []
        for i, one in enumerate(specs):
            paths.append(folder / f"check-{i}.json")
            paths[-1].write_text(one.to_json(), encoding="utf-8")
        env = worker_env(XlaMode.OFF, "cpu", folder, dump="none")
        proc = subprocess.Popen(
            [sys.executable, "-m", "xlagui.core.worker.child", "--check-model", *map(str, paths)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=env,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                stdout, stderr = proc.communicate(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                stopping = state is not None and state.is_interruption_requested()
                if stopping or time.monotonic() > deadline:
                    proc.kill()
                    proc.communicate()
                    if stopping:
                        raise Cancelled() from None
                    raise ModelRefused(
                        f"building {spec.model.label} took over {timeout:.0f} s; try a smaller "
                        "image size"
                    ) from None
    events = []
    for line in stdout.splitlines():
        if line.strip():
            try:
                events.append(parse_event(line))
            except ProtocolError:
                continue
    answers: list[ModelEvent] = []
    for event in events:
        if isinstance(event, ModelEvent):
            if event.protocol != PROTOCOL_VERSION:
                raise ModelRefused(
                    f"the model check speaks protocol {event.protocol}, this app "
                    f"{PROTOCOL_VERSION}: reinstall xlagui"
                )
            answers.append(event)
        if isinstance(event, ErrorEvent):
            raise ModelRefused(event.message + (f" ({event.hint})" if event.hint else ""))
    if len(answers) == len(specs):
        return answers
    tail = stderr.strip().splitlines()[-5:]
    raise ModelRefused(
        f"the model check of {spec.model.label} ended without an answer (exit status "
        f"{proc.returncode}): {' / '.join(tail) or 'no output'}"
    )
