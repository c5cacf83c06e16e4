"""The parent side of the model check (`xlagui.core.model.check`): build the chosen model once
in a short child process before any measuring, on the machine the comparison runs on (its
transport), and return its `ModelEvent`, or raise `ModelRefused` with the child's message (file
and line)."""

from __future__ import annotations

import dataclasses

from xlagui.core.measure.children import child_folder, run_child
from xlagui.core.measure.jobs import CheckJob
from xlagui.core.measure.transports.base import Transport
from xlagui.core.measure.transports.local import LOCAL
from xlagui.core.model.check import ModelCheckSpec, ModelRefused
from xlagui.core.protocol.events import PROTOCOL_VERSION, ErrorEvent, Event, ModelEvent
from xlagui.core.protocol.levers import TF_BACKEND
from xlagui.core.protocol.task import TaskState

CHECK_TIMEOUT_SECONDS = 600.0


def check_model(spec: ModelCheckSpec, timeout: float = CHECK_TIMEOUT_SECONDS, *,
                transport: Transport = LOCAL) -> ModelEvent:
    """Build `spec.model` once in a child process (on the CPU) and return what it reports.
    Raises `ModelRefused` with the child's message when the model cannot be trained."""
    return check_models([spec], timeout, transport=transport)[0]


def check_models(
    specs: list[ModelCheckSpec],
    timeout: float = CHECK_TIMEOUT_SECONDS,
    state: TaskState | None = None,
    *,
    transport: Transport = LOCAL,
    backend: str = TF_BACKEND,
) -> list[ModelEvent]:
    """`check_model` for several models in one child process (TensorFlow loads once).

    With `state`, each answer is also reported as it arrives, as `state.set_partial((index,
    event))` (the window shows a model's parameters and layers from a first spec without
    FLOPs while a second one still counts them), and a request to stop ends the child and
    raises `Cancelled` (the window checks a model while the user may still change it)."""
    spec = specs[0]
    answers: list[ModelEvent] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ModelEvent) and len(answers) < len(specs):
            answers.append(_answer(event, specs[len(answers)]))
            if state is not None:
                state.set_partial((len(answers) - 1, answers[-1]))

    with child_folder("xlagui-check-") as folder:
        ran = run_child(CheckJob(folder, specs=tuple(specs), backend=backend), transport,
                        timeout=timeout,
                        state=state, on_event=on_event)
    if ran.timed_out:
        raise ModelRefused(
            f"building {spec.model.label} took over {timeout:.0f} s; try a smaller image size"
        )
    for event in ran.events:
        if isinstance(event, ErrorEvent) and event is not ran.died:
            raise ModelRefused(event.message + (f" ({event.hint})" if event.hint else ""),
                               event)
    if len(answers) == len(specs):
        return answers
    tail = ran.tail.strip().splitlines()[-5:]
    raise ModelRefused(
        f"the model check of {spec.model.label} ended without an answer (exit status "
        f"{ran.returncode}): {' / '.join(tail) or 'no output'}"
    )


def _answer(event: ModelEvent, spec: ModelCheckSpec) -> ModelEvent:
    """The child's answer to `spec`, refused when it speaks another protocol."""
    if event.protocol != PROTOCOL_VERSION:
        raise ModelRefused(
            f"the model check speaks protocol {event.protocol}, this app "
            f"{PROTOCOL_VERSION}: reinstall xlagui"
        )
    if spec.model.file:
        # Checked on a host, the file was the host's copy: the model is the user's.
        event.model = dataclasses.replace(event.model, file=spec.model.file)
    return event
