"""Getting a comparison ready to run: the model check, and the machine its workers run on.

`on_machine` is the one place that sets a machine up and takes it down again: this computer
needs nothing; an SSH host is logged in to (its preflight run unless it is known), refused when
it lacks the device asked for, given the dataset (copied once into its cache, or found there)
and the model file, and its comparison folder and connection are removed and closed after the
last worker. The comparison is planned in between (its environment is the machine's), by the
function the workflow hands in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from xlagui.core.compare.request import ComparisonObserver, ComparisonRequest, Phase
from xlagui.core.measure.model_check import check_models
from xlagui.core.measure.remote.host import RemoteHost
from xlagui.core.measure.remote.ssh import RemoteError
from xlagui.core.measure.worker_process import LOCAL, Transport
from xlagui.core.model.check import ModelCheckSpec
from xlagui.core.protocol.config import ConfigError
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.protocol.events import ModelEvent
    from xlagui.core.results.report import ComparisonReport

# Plans the comparison for the machine's environment (None: this computer's).
Planner = Callable[["dict[str, Any] | None"], "ComparisonReport"]


def check_model(
    request: ComparisonRequest, observer: ComparisonObserver, state: TaskState
) -> ModelEvent | None:
    """The chosen model's check: the request's, or any model but the article's CNN built once
    in a worker process before anything is measured (`xlagui.core.model.check`). Raises
    `ModelRefused` (a `ConfigError`) with the file and line of a model that cannot be trained,
    `Cancelled` on a stop. None for the article's CNN (known from its shapes)."""
    config = request.config
    if request.model_check is not None or config.model.is_article_cnn:
        return request.model_check
    observer.on_phase(Phase.CHECKING_MODEL, None)
    spec = ModelCheckSpec(
        model=config.model,
        image_size=config.image_size,
        num_classes=len(request.scan.class_names),
        batch_size=config.batch_size,
        seed=config.seed,
    )
    check = check_models([spec], state=state)[0]
    observer.on_model_checked(check)
    return check


@contextlib.contextmanager
def on_machine(
    request: ComparisonRequest,
    observer: ComparisonObserver,
    state: TaskState,
    planned: Planner,
) -> Iterator[tuple[ComparisonReport, Transport]]:
    """The comparison planned (`planned(environment)`) and the transport its workers start
    through, for the machine of `request`; the machine is taken down when the block ends.

    Raises the `RemoteError` of a host that cannot take the comparison (after
    `observer.on_host_refused`), `ConfigError` when it lacks the device, and `Cancelled` on a
    stop during the dataset's copy."""
    target = request.target
    if target is None:
        yield planned(None), LOCAL
        return
    try:
        observer.on_phase(Phase.CONNECTING, None)
        if request.host_info is None:
            host = RemoteHost.connect(target)
        else:  # checked moments ago (the window's Machine group): no second preflight
            host = RemoteHost.reopen(target, request.host_info)
    except RemoteError as exc:
        observer.on_host_refused(target.host, exc)
        raise
    try:
        observer.on_host_ready(host.info)
        _refuse_missing_device(host, request.config.device)
        report = planned(host.environment())
        try:
            observer.on_phase(Phase.COPYING, report)
            transport = host.prepare(request.scan, report.config, request.out_dir, state,
                                     on_progress=observer.on_copy_progress)
        except RemoteError as exc:
            observer.on_host_refused(target.host, exc)
            raise
        observer.on_dataset_ready(transport.dataset)
        try:
            yield report, transport
        finally:
            transport.close()
    finally:
        host.close()


def _refuse_missing_device(host: RemoteHost, device: str) -> None:
    if not host.info.has_device(device):
        devices = ", ".join(d.id for d in host.info.devices)
        raise ConfigError(f"{host.target.host} has no device {device} "
                          f"(TensorFlow sees: {devices})")
