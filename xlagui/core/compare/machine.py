"""Getting a comparison ready to run: the machine its children run on, and the model check.

`on_machine` is the one place that sets a machine up and takes it down again, whatever reaches
it (`core/measure/transports/`: this computer, an SSH host): it connects (logging in and
running the preflight unless it is known; this computer needs neither), refuses a machine that
lacks the device asked for, checks the chosen model there, plans the comparison with the
machine's environment (by the function the workflow hands in), readies the dataset and the
model file there (`Transport.prepare`: copied once into an SSH host's cache, or found there),
and after the last child lets the machine go (`Transport.close`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from xlagui.core.compare.request import ComparisonObserver, ComparisonRequest, Phase
from xlagui.core.measure import transports
from xlagui.core.measure.model_check import check_models
from xlagui.core.measure.transports import MachineError, Transport
from xlagui.core.model.check import ModelCheckSpec, ModelRefused
from xlagui.core.protocol.arms import BACKEND_NAMES, parse_arm
from xlagui.core.protocol.config import ConfigError
from xlagui.core.protocol.levers import TF_BACKEND
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.protocol.events import ModelEvent
    from xlagui.core.results.report import ComparisonReport

# Plans the comparison for the machine's environment and the model's check.
Planner = Callable[["dict[str, Any]", "ModelEvent | None"], "ComparisonReport"]


def check_model(
    request: ComparisonRequest,
    observer: ComparisonObserver,
    state: TaskState,
    transport: Transport = transports.LOCAL,
) -> ModelEvent | None:
    """The chosen model's check: the request's, or any model but the article's CNN built once
    in a child of its own on the machine, before anything is measured
    (`xlagui.core.model.check`). Raises `ModelRefused` (a `ConfigError`) with the file and line
    of a model that cannot be trained, `Cancelled` on a stop. None for the article's CNN (known
    from its shapes)."""
    config = request.config
    spec = ModelCheckSpec(
        model=config.model,
        image_size=config.image_size,
        num_classes=len(request.scan.class_names),
        batch_size=config.batch_size,
        seed=config.seed,
    )
    if request.model_check is not None or config.model.is_article_cnn:
        check = request.model_check
    else:
        observer.on_phase(Phase.CHECKING_MODEL, None)
        check = check_models([spec], state=state, transport=transport)[0]
        observer.on_model_checked(check)
    _check_on_other_backends(request, dataclasses.replace(spec, count_flops=False), state,
                             transport)
    return check


def _check_on_other_backends(request: ComparisonRequest, spec: ModelCheckSpec,
                             state: TaskState, transport: Transport) -> None:
    """An arm on another Keras backend (JAX) trains a model file only if it is that backend's
    too: one training step of it there, in a child of its own, before anything is measured. A
    model that uses TensorFlow's own ops is refused by the arm's name (a ConfigError). The
    built-in models are Keras layers alone, and run on every backend."""
    config = request.config
    if not config.model.file:
        return
    arms = [(name, parse_arm(name).effective(config)) for name in config.arms]
    for backend in dict.fromkeys(a.backend for _n, a in arms if a.backend != TF_BACKEND):
        name = next(n for n, a in arms if a.backend == backend)
        try:
            check_models([spec], state=state, transport=transport, backend=backend)
        except ModelRefused as exc:
            raise ConfigError(f"the {name} arm cannot run this model on "
                              f"{BACKEND_NAMES.get(backend, backend)}: {exc} (a model for "
                              "another backend uses Keras layers and keras.ops alone)") from None


@contextlib.contextmanager
def on_machine(
    request: ComparisonRequest,
    observer: ComparisonObserver,
    state: TaskState,
    planned: Planner,
) -> Iterator[tuple[ComparisonReport, Transport]]:
    """The comparison planned (`planned(environment, model_check)`) and the transport its
    children start through, for the machine of `request`; the machine is let go when the block
    ends.

    Raises the `MachineError` of a machine that cannot take the comparison (after
    `observer.on_host_refused`), `ConfigError` when it lacks the device or the model cannot be
    trained, and `Cancelled` on a stop during the model check or the dataset's copy."""
    transport = _connect(request, observer, state)
    try:
        if transport.info is not None:
            observer.on_host_ready(transport.info)
            _refuse_missing_device(transport, request.config.device)
        check = check_model(request, observer, state, transport)
        report = planned(transport.environment(), check)
        remote = request.target is not None
        if remote:
            observer.on_phase(Phase.COPYING, report)
        try:
            dataset = transport.prepare(request.scan, report.config, request.out_dir, state,
                                        on_progress=observer.on_copy_progress)
        except MachineError as exc:
            observer.on_host_refused(transport.machine, exc)
            raise
        if remote:
            observer.on_dataset_ready(dataset)
        yield report, transport
    finally:
        transport.close()


def _connect(request: ComparisonRequest, observer: ComparisonObserver,
             state: TaskState) -> Transport:
    """The transport of the request's machine, connected (its preflight run unless the
    request knows it: the window's Machine group checked the host moments ago)."""
    target = request.target
    if target is None:
        return transports.LOCAL
    observer.on_phase(Phase.CONNECTING, None)
    try:
        return transports.connect(target, info=request.host_info, state=state)
    except MachineError as exc:
        observer.on_host_refused(target.host, exc)
        raise


def _refuse_missing_device(transport: Transport, device: str) -> None:
    info = transport.info
    if info is not None and not info.has_device(device):
        devices = ", ".join(d.id for d in info.devices)
        raise ConfigError(f"{transport.machine} has no device {device} "
                          f"(TensorFlow sees: {devices})")
