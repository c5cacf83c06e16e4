"""A profiler trace (TensorFlow's XSpace, `*.xplane.pb`) reduced to what attribution needs:
the kernel and thunk events with their thread and times, and the step windows.

Read with TensorFlow's own protobuf classes (`tensorflow.tsl.profiler.protobuf.xplane_pb2`),
imported inside `read_xspace`: it runs in the worker, which has TensorFlow loaded. What it keeps:

- on the host plane (`/host:CPU`), TensorFlow's kernels, named `op path:kernel type`
  (`…/conv2d_1/Relu:_MklNativeFusedConv2D`), and XLA:CPU's thunks, the events that carry an
  `hlo_op` stat (the instruction's name) and `hlo_module`. An asynchronous thunk (XLA:CPU runs
  its convolutions on Eigen's pool and returns at once) ends at its `end: NAME` event: its
  interval runs from its start to that event, the time its work was in flight;
- on each device plane (`/device:GPU:N`), every kernel event on a stream line, named by its
  `hlo_op` or `tf_op` stat where the trace was processed, else by its raw `annotation` stat
  (CUPTI's copy of the op's annotation stack, `outer::inner`, each `name#key=value,…#`: the
  innermost's `hlo_op`/`hlo_module` keys for XLA, else its name, `path:type` for TensorFlow),
  else by its own name (the kernel's);
- not the input pipeline's threads (`tf_data_…`): its augmentation runs beside the step and is
  the same on every arm; it is not the step's work;
- the step windows: the events named `step_name` (the profiling worker wraps each step in a
  `tf.profiler.experimental.Trace(step_name, step_num=i)`).

Times are nanoseconds from the trace's first kept event. The result is plain data and goes to
JSON (`to_dict`/`from_dict`) for recorded fixtures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xlagui.core.explain.ops import NO_NAMES, Names
from xlagui.core.protocol.identity import StrEnum

HOST_PLANE = "/host:CPU"
DEVICE_PLANE_PREFIX = "/device:GPU:"
STEP_NAME = "train"
END_PREFIX = "end: "
INPUT_PIPELINE_LINE = "tf_data"  # tf.data's threads: `tf_data_private_threadpool`, …


class EventSource(StrEnum):
    """What an event's name is: a TensorFlow op (`path:type`) or an XLA instruction."""

    TF_OP = "tf_op"
    HLO = "hlo"


@dataclass(frozen=True)
class TraceEvent:
    name: str  # `path:type` for a TensorFlow op, the instruction's name for an XLA thunk
    source: EventSource
    plane: str
    line: str  # the thread (host) or stream (device)
    start_ns: float
    duration_ns: float
    module: str = ""  # the XLA module of an instruction

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass(frozen=True)
class Trace:
    """The kept events (by start), the step windows and the model's own names."""

    events: tuple[TraceEvent, ...]
    steps: tuple[tuple[float, float], ...]  # (start, end) ns of each profiled step
    names: Names = field(default_factory=Names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "events": [asdict(e) for e in self.events],
            "steps": [list(s) for s in self.steps],
            "names": {"layers": sorted(self.names.layers), "models": sorted(self.names.models),
                      "optimizer": self.names.optimizer},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        n = d.get("names") or {}
        return cls(
            events=tuple(TraceEvent(**{**e, "source": EventSource(e["source"])})
                         for e in d["events"]),
            steps=tuple((float(a), float(b)) for a, b in d["steps"]),
            names=Names(frozenset(n.get("layers", ())), frozenset(n.get("models", ())),
                        str(n.get("optimizer", ""))),
        )


def is_tf_op_name(name: str) -> bool:
    """`path:KernelType`, as TensorFlow names a kernel's event (not `Executor::Run`, not
    `EagerLocalExecute: name`)."""
    path, sep, kernel = name.partition(":")
    return bool(sep and path and kernel) and ":" not in kernel and " " not in name


class _Plane:
    """One XPlane's events as (name, stats by name, line name, start ps, duration ps)."""

    def __init__(self, plane: Any) -> None:
        self.plane = plane
        self.stat_names = {k: v.name for k, v in plane.stat_metadata.items()}

    def stats(self, event: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        md = self.plane.event_metadata[event.metadata_id]
        for s in list(md.stats) + list(event.stats):
            kind = s.WhichOneof("value")
            value = getattr(s, kind) if kind else None
            if kind == "ref_value":
                value = self.stat_names.get(value, "")
            out[self.stat_names.get(s.metadata_id, "")] = value
        return out

    def events(self) -> Any:
        for line in self.plane.lines:
            if (line.display_name or line.name).startswith(INPUT_PIPELINE_LINE):
                continue
            base_ps = line.timestamp_ns * 1000
            for e in line.events:
                name = self.plane.event_metadata[e.metadata_id].name
                yield name, e, line.display_name or line.name, base_ps + e.offset_ps


Window = tuple[float, float]  # (start, end) ns


def _host_events(plane: _Plane, step_name: str) -> tuple[list[TraceEvent], list[Window]]:
    kept: list[TraceEvent] = []
    steps: list[tuple[float, float]] = []
    ends: dict[str, list[float]] = {}
    for name, e, line, start_ps in plane.events():
        start, dur = start_ps / 1000, e.duration_ps / 1000
        if name == step_name:
            steps.append((start, start + dur))
        elif name.startswith(END_PREFIX):
            ends.setdefault(name[len(END_PREFIX):], []).append(start + dur)
        elif is_tf_op_name(name):
            kept.append(TraceEvent(name, EventSource.TF_OP, plane.plane.name, line, start, dur))
        else:
            stats = plane.stats(e) if e.stats or plane.plane.event_metadata[e.metadata_id].stats \
                else {}
            if "hlo_op" in stats:
                kept.append(TraceEvent(str(stats["hlo_op"]) or name, EventSource.HLO,
                                       plane.plane.name, line, start, dur,
                                       str(stats.get("hlo_module", ""))))
    return _until_done(kept, ends), steps


def _until_done(events: list[TraceEvent], ends: dict[str, list[float]]) -> list[TraceEvent]:
    """Each XLA thunk extended to its `end: NAME` event (the first at or after its start):
    an asynchronous thunk's work runs on after its own event has closed."""
    out = []
    for ev in sorted(events, key=lambda e: e.start_ns):
        done = ends.get(ev.name) if ev.source == EventSource.HLO else None
        if done:
            done.sort()
            later = [t for t in done if t >= ev.start_ns]
            if later:
                done.remove(later[0])
                if later[0] > ev.end_ns:
                    ev = TraceEvent(ev.name, ev.source, ev.plane, ev.line, ev.start_ns,
                                    later[0] - ev.start_ns, ev.module)
        out.append(ev)
    return out


def parse_annotation(annotation: str) -> tuple[EventSource, str, str]:
    """(source, label, module) of a GPU kernel's annotation stack: its innermost annotation's
    `hlo_op` (with `hlo_module`, from any level) when XLA ran it, else its name."""
    keys: dict[str, str] = {}
    name = ""
    for part in annotation.split("::"):
        label, _, rest = part.partition("#")
        name = label.strip() or name
        for pair in rest.rstrip("#").split(","):
            key, eq, value = pair.partition("=")
            if eq:
                keys[key.strip()] = value.strip()
    if keys.get("hlo_op"):
        return EventSource.HLO, keys["hlo_op"], keys.get("hlo_module", "")
    return EventSource.TF_OP, keys.get("tf_op", name), ""


def _device_events(plane: _Plane) -> list[TraceEvent]:
    kept = []
    for name, e, line, start_ps in plane.events():
        stats = plane.stats(e)
        module = str(stats.get("hlo_module", ""))
        if stats.get("hlo_op"):
            source, label = EventSource.HLO, str(stats["hlo_op"])
        elif stats.get("tf_op"):
            source, label = EventSource.TF_OP, str(stats["tf_op"])
        elif stats.get("annotation"):
            source, label, module = parse_annotation(str(stats["annotation"]))
        else:
            source, label = EventSource.TF_OP, name
        kept.append(TraceEvent(label, source, plane.plane.name, line, start_ps / 1000,
                               e.duration_ps / 1000, module))
    return kept


def from_xspace(space: Any, step_name: str = STEP_NAME, names: Names = NO_NAMES) -> Trace:
    """The `Trace` of a parsed XSpace message."""
    events: list[TraceEvent] = []
    steps: list[tuple[float, float]] = []
    for p in space.planes:
        if p.name == HOST_PLANE:
            host, windows = _host_events(_Plane(p), step_name)
            events += host
            steps += windows
        elif p.name.startswith(DEVICE_PLANE_PREFIX):
            events += _device_events(_Plane(p))
    t0 = min([e.start_ns for e in events] + [s[0] for s in steps], default=0.0)
    return Trace(
        events=tuple(sorted(
            (TraceEvent(e.name, e.source, e.plane, e.line, e.start_ns - t0, e.duration_ns,
                        e.module) for e in events), key=lambda e: (e.start_ns, e.line))),
        steps=tuple(sorted((a - t0, b - t0) for a, b in steps)),
        names=names,
    )


def read_xspace(path: Path, step_name: str = STEP_NAME, names: Names = NO_NAMES) -> Trace:
    """The `Trace` of the profiler's `.xplane.pb` at `path`."""
    # lazy: TensorFlow's protobuf classes, in the worker (or a test that has TensorFlow)
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(path).read_bytes())
    return from_xspace(space, step_name, names)
