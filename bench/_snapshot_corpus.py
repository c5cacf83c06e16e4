"""The comparisons the wording snapshot (`bench/snapshot_words.py`) renders: made from the test
helpers (`tests/helpers/reports.py`, `streams.py`, `limits.py`, the recorded streams and the
HLO dump), with no TensorFlow, no process and no clock, so the same code makes the same
comparisons every time.

- a grid of generated comparisons: 8 sets of arms × 4 speed scenarios × with and without
  training runs × with and without an arm whose worker died, each at 3 of 5 lengths of
  measurement (1 to 30 rounds, no noise to ±30%);
- the same few comparisons changed the ways a comparison ends or differs (`VARIANTS`): a Stop
  or a close during the measurement or the training, errors, the A/A check, a remote host, the
  machine's limits, a chosen model, the inspection's "What XLA did", repeats, an accuracy that
  differs, one side only, no measurement, notes, the demo dataset with files left out, a file
  saved in old words;
- the real worker's recorded streams (protocol 6 and an old protocol-3 baseline), and the
  limits helper's comparisons.

Each is a `Case`: a name (the folder it is saved in), the report, and whether to save it in the
words of versions before verdicts were data.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.limits import known_limits, limits_report
from tests.helpers.reports import comparison_report, measure_entry
from tests.helpers.streams import RECORDED, recorded_events, run_events
from xlagui.core.machine.host import HostInfo
from xlagui.core.protocol.config import ModelChoice
from xlagui.core.protocol.events import (
    BlockEvent,
    CancelledEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    ModelEvent,
    RunSummary,
    StartedEvent,
    read_events,
)
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport
from xlagui.core.xla import hlo

CREATED = "2026-01-02T03:04:05+00:00"
DUMP = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "hlo_dump"

ARM_SETS: tuple[tuple[str, ...], ...] = (
    (), ("bf16",), ("fp16",), ("autocluster",), ("bf16", "fp16"), ("jit+bf16", "bf16"),
    ("autocluster", "bf16", "fp16", "jit+bf16"), ("jit+fp16",),
)
# Seconds per step: the baseline takes 0.2 s; what XLA and the other arms take.
SPEEDS: dict[str, Callable[[tuple[str, ...]], dict[str, float]]] = {
    "xla-faster": lambda arms: {},  # XLA 0.1 s, arms 0.16 s
    "arms-slow": lambda arms: {a: 0.4 for a in arms},
    "tied": lambda arms: {"xla": 0.2, **{a: 0.2 for a in arms}},
    "xla-slower": lambda arms: {"xla": 0.3, **{a: (0.09, 0.3)[i % 2] for i, a in
                                               enumerate(arms)}},
}
LENGTHS = ((1, 0.0), (3, 0.05), (8, 0.0), (12, 0.05), (30, 0.3))  # (rounds, jitter)


@dataclass
class Case:
    name: str
    report: ComparisonReport
    old_words: bool = False  # saved as versions before verdicts were data wrote it


def generated() -> Iterator[Case]:
    """The grid of generated comparisons."""
    n = 0
    for arms, speed, training in itertools.product(ARM_SETS, SPEEDS, (False, True)):
        for failed in ((), (arms[-1],)) if arms else ((),):
            for k in range(3):
                rounds, jitter = LENGTHS[(n + k) % len(LENGTHS)]
                report = comparison_report(arms=arms, steps=SPEEDS[speed](arms),
                                           training=training, failed=failed, rounds=rounds,
                                           jitter=jitter)
                name = "-".join([
                    "+".join(arms) or "xla", speed, "train" if training else "speed",
                    *(["failed"] if failed else []), f"r{rounds}", f"j{jitter:g}"])
                yield Case(name, report)
            n += 1


def _carriers() -> Iterator[tuple[str, ComparisonReport]]:
    """The comparisons each variant is applied to."""
    for arms, speed, training in itertools.product(
            ((), ("bf16",), ("bf16", "fp16")), ("xla-faster", "xla-slower"), (False, True)):
        report = comparison_report(arms=arms, steps=SPEEDS[speed](arms), training=training,
                                   rounds=12, jitter=0.05)
        yield "-".join(["+".join(arms) or "xla", speed, "train" if training else "speed"]), report


def _cut(events: list[Event], keep: Callable[[Event], bool], end: Event) -> list[Event]:
    """The events up to the first one `keep` refuses, then `end`."""
    out = list(itertools.takewhile(keep, events))
    end.t = out[-1].t + 0.5 if out else 0.5
    return [*out, end]


def stop_measuring(report: ComparisonReport, closing: bool) -> None:
    """Stop (or a close) after three rounds: the workers cancelled, no training run started."""
    for entry in report.measure_runs:
        if entry.status != "finished":
            continue
        entry.events = _cut(entry.events, lambda e: not (isinstance(e, BlockEvent) and e.seq >= 3)
                            and not isinstance(e, FinishedEvent), CancelledEvent())
        entry.status = "interrupted" if closing else "cancelled"
    assert report.measurement is not None
    report.measurement.stopped_by = "stopped"
    for entry in report.runs:
        entry.status, entry.events = ("not run" if closing else "cancelled"), []


def stop_training(report: ComparisonReport, closing: bool) -> None:
    """Stop (or a close) during the second training run, after its first epoch."""
    for i, entry in enumerate(report.runs):
        if i == 1:
            entry.events = _cut(entry.events, _before_epoch(2), CancelledEvent(epochs_done=1))
            entry.status = "interrupted" if closing else "cancelled"
        elif i > 1:
            entry.status, entry.events = ("not run" if closing else "cancelled"), []


def _before_epoch(epoch: int) -> Callable[[Event], bool]:
    """Keeps the events before epoch `epoch` (its batches and itself) and before the end."""
    def keep(e: Event) -> bool:
        return getattr(e, "epoch", 0) < epoch and not isinstance(e, FinishedEvent)
    return keep


def training_error(report: ComparisonReport, variant: str, oom: bool) -> None:
    """The training run of `variant` fails after its first epoch."""
    error = ErrorEvent(error_type="ResourceExhaustedError" if oom else "ValueError",
                       message="OOM when allocating tensor with shape[8,32,46,46]" if oom
                       else "could not broadcast input array",
                       hint="The run ran out of memory training the article's CNN with batch "
                       "size 8 and image size 48. Try a smaller batch size or image size."
                       if oom else "See the run's log for details.",
                       details="Traceback (most recent call last): …")
    for entry in report.runs:
        if entry.variant == variant:
            entry.events = _cut(entry.events, _before_epoch(2), error)
            entry.status = "error"


def measure_error(report: ComparisonReport) -> None:
    """The XLA side's measuring worker is killed after five rounds."""
    entry = report.measure_runs[1]
    died = ErrorEvent(error_type="WorkerDied",
                      message="the worker process was killed (SIGKILL) before it finished "
                      "(measuring worker of xla, XLA jit, batch size 8, image size 48)",
                      hint="If nobody killed it on purpose, the system probably ran out of "
                      "memory and the kernel stopped it with the article's CNN, batch size 8 "
                      "and image size 48: try a smaller batch size or image size.")
    entry.events = _cut(entry.events, lambda e: not (isinstance(e, BlockEvent) and e.seq >= 5)
                        and not isinstance(e, FinishedEvent), died)
    entry.status = "error"
    assert report.measurement is not None
    report.measurement.stopped_by = "error"
    report.measurement.error = died.message


def target_reached(report: ComparisonReport) -> None:
    assert report.measurement is not None
    report.measurement.stopped_by = "target"


HOST = HostInfo(host="gpu-box", hostname="node17", xlagui="0.1.0", protocol=6,
                python="3.11.7", platform="Linux-6.8-x86_64", cpu="AMD EPYC 9654",
                cpu_count=192, cache="/home/me/.cache/xlagui", free_disk_bytes=512 * 2**30,
                tensorflow="2.21.0",
                devices=(DeviceInfo("cpu", "CPU", "CPU"),
                         DeviceInfo("gpu:0", "NVIDIA H200", "GPU", 150_000_000_000)),
                python_command="~/venv/bin/python", seconds=3.2)


def remote(report: ComparisonReport) -> None:
    report.environment = {**HOST.environment(),
                          "machine_limits_error": "not probed: the comparison ran on gpu-box, "
                          "the probe runs on this computer"}


def with_limits(report: ComparisonReport) -> None:
    report.limits = known_limits(image_size=48, batch_size=8)


def with_model(report: ComparisonReport, choice: ModelChoice) -> None:
    model = dataclasses.replace(choice, params=2_257_984)
    report.config = report.config.replace(model=model)
    report.model_check = ModelEvent(
        protocol=6, model=model, image_size=48, outputs=1, layers=156,
        summary=["input_layer (InputLayer) (48, 48, 3) 0", "head (Dense) (1,) 1281"],
        compile_words="Adam + binary_crossentropy", batch_size=8, flops_per_step=3.1e9,
        flops_forward_per_sample=1.3e8, memory_bytes=700 * 2**20,
        memory_parts={"weights": 9 * 2**20, "activations": 600 * 2**20})


def with_inspection(report: ComparisonReport, failed: bool) -> None:
    did = hlo.read_dump(DUMP, DUMP / "worker.log")
    entries = []
    for r in report.measure_runs[1:]:
        if r.arm.xla.value == "off":
            continue
        events: list[Event] = [ErrorEvent(error_type="InternalError", message="XLA compilation "
                                          "failed", hint="XLA failed to compile this model.")] \
            if failed else [FinishedEvent(summary=RunSummary(mode="inspect", steps_done=2,
                                                              xla_did=did))]
        entries.append(RunEntry(f"i-{r.variant}", r.variant, 1, r.xla_mode,
                                "error" if failed else "finished", events, r.precision))
    report.inspect_runs = entries


def with_check(report: ComparisonReport, step: float) -> None:
    """The A/A check: a second baseline measured like an arm (`step` s a step)."""
    twin = measure_entry(len(report.measure_runs) + 1, "baseline", step, rounds=12, jitter=0.05)
    twin.run_id, twin.variant = f"m{len(report.measure_runs) + 1}-check", "check"
    twin.events = [dataclasses.replace(e, run_id=twin.run_id, variant="check")
                   if isinstance(e, StartedEvent) else e for e in twin.events]
    report.measure_runs.append(twin)
    report.config = report.config.replace(check=True)


def with_repeats(report: ComparisonReport, worse: bool) -> None:
    """A second seed of every training run; with `worse`, XLA learns less well."""
    more = []
    for entry in report.runs:
        again = copy.deepcopy(entry)
        again.run_id, again.repeat = entry.run_id.replace("-r1", "-r2"), 2
        more.append(again)
    report.runs.extend(more)
    report.config = report.config.replace(repeats=2)
    if worse:
        accuracy_differs(report)


def accuracy_differs(report: ComparisonReport) -> None:
    """XLA's training runs end at a lower validation accuracy."""
    for entry in report.runs:
        if entry.variant == "xla" and entry.status == "finished":
            fresh = run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5),
                               val_accuracy=(0.5, 0.55, 0.6), run_id=entry.run_id)
            entry.events = [dataclasses.replace(fresh[0], **_read_back(entry.events)),  # type: ignore[arg-type]
                            *fresh[1:]]


def _read_back(events: list[Event]) -> dict[str, object]:
    started = events[0]
    assert isinstance(started, StartedEvent)
    keys = ("precision", "policy", "compute_dtype", "variable_dtype", "output_dtype",
            "loss_scale")
    return {k: getattr(started, k) for k in keys}


def one_side(report: ComparisonReport) -> None:
    """Run XLA only was never pressed: the baseline ran, the XLA side is queued."""
    for entry in report.runs:
        if entry.variant != "baseline":
            entry.status, entry.events = "queued", []


def no_measurement(report: ComparisonReport) -> None:
    report.measure_runs, report.measurement = [], None


def with_notes(report: ComparisonReport) -> None:
    for entry in report.runs:
        last = entry.events[-1]
        if isinstance(last, FinishedEvent):
            last.summary = dataclasses.replace(
                last.summary, notes=("TensorBoard files not written: No space left on device",))


def demo_with_exclusions(report: ComparisonReport) -> None:
    report.dataset = {
        **report.dataset, "demo": True, "name": "demo elephants",
        "excluded": {"kinds": ["duplicate", "truncated"], "problems": 2, "reproducible": True,
                     "files": [{"path": "train/african/a1.jpg", "split": "train",
                                "label": "african", "problem": "duplicate"},
                               {"path": "test/asian/b9.jpg", "split": "test", "label": "asian",
                                "problem": "truncated"}]}}


VARIANTS: dict[str, Callable[[ComparisonReport], None]] = {
    "stop-measuring": lambda r: stop_measuring(r, closing=False),
    "closed-measuring": lambda r: stop_measuring(r, closing=True),
    "stop-training": lambda r: stop_training(r, closing=False),
    "closed-training": lambda r: stop_training(r, closing=True),
    "xla-oom": lambda r: training_error(r, "xla", oom=True),
    "baseline-error": lambda r: training_error(r, "baseline", oom=False),
    "measure-error": measure_error,
    "target": target_reached,
    "remote": remote,
    "limits": with_limits,
    "model-builtin": lambda r: with_model(r, ModelChoice("builtin", "mobilenetv2")),
    "model-keras": lambda r: with_model(r, ModelChoice(
        "keras", "my_model", "/models/my_model.keras", "ab" * 32, new_head=True)),
    "model-python": lambda r: with_model(r, ModelChoice(
        "python", "vit_tiny", "/models/vit_tiny.py", "cd" * 32)),
    "inspected": lambda r: with_inspection(r, failed=False),
    "inspect-failed": lambda r: with_inspection(r, failed=True),
    "check-covers": lambda r: with_check(r, 0.2),
    "check-off": lambda r: with_check(r, 0.23),
    "repeats": lambda r: with_repeats(r, worse=False),
    "repeats-worse": lambda r: with_repeats(r, worse=True),
    "accuracy-worse": accuracy_differs,
    "one-side": one_side,
    "no-measurement": no_measurement,
    "notes": with_notes,
    "demo-excluded": demo_with_exclusions,
}
# Variants about training runs are applied only to comparisons that have them.
NEEDS_TRAINING = frozenset({"stop-training", "closed-training", "xla-oom", "baseline-error",
                            "repeats", "repeats-worse", "accuracy-worse", "one-side",
                            "no-measurement", "notes"})


def variants() -> Iterator[Case]:
    for carrier, base in _carriers():
        training = bool(base.runs)
        for name, change in VARIANTS.items():
            if name in NEEDS_TRAINING and not training:
                continue
            report = copy.deepcopy(base)
            change(report)
            report.recompute()
            yield Case(f"{carrier}-{name}", report)
        yield Case(f"{carrier}-old-words", copy.deepcopy(base), old_words=True)


def recorded() -> Iterator[Case]:
    """The real worker's streams as training runs, and a protocol-3 baseline."""
    for arms in ((), ("bf16",)):
        report = comparison_report(arms=arms, training=True, rounds=8, jitter=0.05)
        report.runs[0].events = recorded_events("off")
        report.runs[1].events = recorded_events("jit")
        report.recompute()
        yield Case(f"recorded-{'+'.join(arms) or 'xla'}", report)
    report = comparison_report(training=True, rounds=8)
    with (RECORDED / "protocol3-baseline.jsonl").open(encoding="utf-8") as fh:
        report.runs[0].events = list(read_events(fh))
    report.runs[1].events = recorded_events("jit")
    report.recompute()
    yield Case("recorded-protocol3-baseline", report)


def limits_cases() -> Iterator[Case]:
    for training, base, xla in itertools.product((False, True), (0.2,), (0.4, 0.1, 0.02)):
        for limits in (known_limits(), None):
            report = limits_report(limits=limits, training=training, base_step=base,
                                   xla_step=xla)
            name = f"limits-{'train' if training else 'speed'}-xla{xla:g}-" + (
                "peak" if limits else "no-peak")
            yield Case(name, report)


def cases() -> list[Case]:
    """Every comparison of the corpus, named uniquely, created at the same instant."""
    out = [*generated(), *variants(), *recorded(), *limits_cases()]
    names = [c.name for c in out]
    assert len(set(names)) == len(names), "corpus names must be unique"
    for i, case in enumerate(out):
        case.name = f"{i:04d}-{case.name}"
        case.report.created = CREATED
    return out
