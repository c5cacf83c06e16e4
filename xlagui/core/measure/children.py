"""The short children, each a `ChildProcess` through the transport of the machine the
comparison runs on, answering in one event: the devices TensorFlow sees (`devices`), the
machine's limits (`machine_limits`, the peak probe behind `core/machine/peak.py`'s cache), the
comparison's summary for TensorBoard (`write_tensorboard_text`); the model check is
`model_check.py`. `run_child` runs one to its end.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from xlagui.core.machine import peak as limits_cache
from xlagui.core.machine.peak import MachineLimits
from xlagui.core.measure.ended import log_tail
from xlagui.core.measure.jobs import CHILD_MODULE, HERE, ChildJob, DevicesJob, PeakJob, TextJob
from xlagui.core.measure.transports.base import Transport
from xlagui.core.measure.transports.local import LOCAL
from xlagui.core.measure.worker_process import TERMINATE_GRACE_SECONDS, ChildProcess
from xlagui.core.protocol.events import DevicesEvent, Event, LimitsEvent, TextWrittenEvent
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.worker import tensorboard as tboard

DEVICES_TIMEOUT_SECONDS = 120.0
TEXT_TIMEOUT_SECONDS = 120.0
# What the window lists when the device probe cannot say: the CPU, which is always there.
CPU_ONLY = [DeviceInfo(id="cpu", name="CPU", kind="CPU")]

E = TypeVar("E", bound=Event)


class Ran:
    """A short child after its end: its events, its exit status, the end of its log, whether
    it ran out of time."""

    def __init__(self, child: ChildProcess, tail: str, timed_out: bool) -> None:
        self.events = child.events
        self.terminal = child.terminal
        self.died = child.died
        self.returncode = child.returncode
        self.tail = tail
        self.timed_out = timed_out

    def answer(self, kind: type[E]) -> E | None:
        """Its answer of type `kind`, if it gave one."""
        return next((e for e in self.events if isinstance(e, kind)), None)


@contextlib.contextmanager
def child_folder(prefix: str) -> Iterator[Path]:
    """A short child's own folder here (its log, its events), removed after."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def run_child(job: ChildJob, transport: Transport = LOCAL, *, timeout: float | None = None,
              state: TaskState | None = None,
              on_event: Callable[[Event], None] | None = None) -> Ran:
    """Run `job` to its end through `transport`, handing each event to `on_event` as it is
    read. A stop asked for by `state` ends it at once and raises `Cancelled`; past `timeout` it
    is ended and said `timed_out`."""
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    with ChildProcess(job, on_event, transport=transport,
                      terminate_grace=TERMINATE_GRACE_SECONDS) as child:
        child.start()
        while not child.ended:
            if state is not None and state.is_interruption_requested():
                child.stop()
                raise Cancelled()
            if deadline is not None and time.monotonic() > deadline:
                timed_out = True
                child.stop()
                break
            child.poll()
    return Ran(child, log_tail(job.log_path), timed_out)


def devices(transport: Transport = LOCAL, timeout: float = DEVICES_TIMEOUT_SECONDS
            ) -> list[DeviceInfo]:
    """The devices TensorFlow sees on the transport's machine; the CPU alone when the probe
    cannot say (the app never imports TensorFlow)."""
    with child_folder("xlagui-probe-") as folder:
        try:
            ran = run_child(DevicesJob(folder), transport, timeout=timeout)
        except OSError:
            return list(CPU_ONLY)
    answer = ran.answer(DevicesEvent)
    return list(answer.devices) if answer is not None and answer.devices else list(CPU_ONLY)


def peak_probe(device: str, image_size: int, batch_size: int, *, peak: bool = True,
               quick: bool = False, transport: Transport = LOCAL,
               timeout: float = 180.0, state: TaskState | None = None) -> LimitsEvent:
    """Run the peak probe through `transport` and return what it measured; a stop asked for
    by `state` ends it at once (`Cancelled`)."""
    with child_folder("xlagui-peak-") as folder:
        job = PeakJob(folder, device=device, image_size=image_size, batch_size=batch_size,
                      peak=peak, quick=quick)
        ran = run_child(job, transport, timeout=timeout, state=state)
    if ran.timed_out:
        # As `subprocess.run` said it, for the comparison's environment block.
        raise subprocess.TimeoutExpired(["-m", CHILD_MODULE, *job.request(HERE).words], timeout)
    answer = ran.answer(LimitsEvent)
    if answer is None:
        tail = (ran.tail.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the peak probe failed (exit {ran.returncode}): {tail}")
    return answer


def machine_limits(device: str, image_size: int, batch_size: int, *,
                   transport: Transport = LOCAL, path: Path | None = None,
                   quick: bool = False, state: TaskState | None = None, keep: bool = True
                   ) -> MachineLimits | None:
    """The limits of `device` on the transport's machine (`peak.ensure`: cached per machine,
    device and TensorFlow, else probed there, and cached unless `keep` is False); a stop during
    the probe raises `Cancelled`."""
    who = transport.identity()
    probe = functools.partial(peak_probe, transport=transport, quick=quick, state=state)
    return limits_cache.ensure(device, image_size, batch_size, probe=probe, path=path,
                               machine=who.machine, tf=who.tensorflow, keep=keep)


def write_tensorboard_text(out_dir: Path, text: str, *, transport: Transport = LOCAL,
                           timeout: float = TEXT_TIMEOUT_SECONDS,
                           state: TaskState | None = None) -> bool:
    """Write `text` as the comparison's summary (Markdown) next to the runs, on the machine
    that ran them (it comes home with them). False when it could not be written (the scalars
    are still there; nobody waits on this), or when `state` asked to stop first (the writer
    is ended at once: a stop never waits for an optional export)."""
    target = tboard.logdir(out_dir) / tboard.TEXT_RUN
    with child_folder("xlagui-text-") as folder:
        try:
            ran = run_child(TextJob(folder, target=target, text=text), transport,
                            timeout=timeout, state=state)
        except (OSError, UnicodeError, Cancelled):
            return False
    return ran.answer(TextWrittenEvent) is not None
