"""The "why" of a comparison as its saved JSON has it (issue 29): where each step's time goes
(`explain`), every compile and recompile (`runs[*].compilations`) and whether the numbers stay
the same (`parity`), read into small frozen views for the words of `explain.py`, `compiles.py`
and `parity.py`, the window's "Why" tab, the PNG, the Markdown and `xlagui inspect`.

Every field is optional: a comparison saved before issue 29 reads as `WhyData()` (nothing to
say). An entry that does not have the shape of the JSON is left out, never guessed at.

The one seam to the core: `why_of(report, folder)`. Today it reads what the report writes
(`ComparisonReport.to_dict`), or, where that lacks the fields, the saved `comparison.json`.
Once the core keeps its own dataclasses (`ArmProfile`, `Difference`, `Parity`, the runs'
compilations), `why_of` can build these views from them: nothing else changes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlagui.core.protocol.arms import Arm

if TYPE_CHECKING:
    from xlagui.core.results.report import ComparisonReport

BASELINE = "baseline"
NOT_TRACED = "not traced"


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _floats(value: object) -> tuple[float, ...]:
    """A list of numbers; a missing or non-finite step is NaN (a gap in a plot)."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        return ()
    return tuple(v if (v := _float(x)) is not None else math.nan for x in value)


@dataclass(frozen=True)
class ProfileRow:
    """One row of an arm's attribution: a layer, a pass, an op kind, its thread-time per step."""

    layer: str
    pass_: str
    op_kind: str
    seconds_per_step: float
    lowered_to: str = ""  # optional: what XLA lowered it to ("base-dilated convolutions")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.layer, self.pass_, self.op_kind)

    @classmethod
    def read(cls, d: object) -> ProfileRow | None:
        if not isinstance(d, Mapping):
            return None
        seconds = _float(d.get("seconds_per_step"))
        if seconds is None or not isinstance(d.get("layer"), str):
            return None
        return cls(layer=d["layer"], pass_=_str(d.get("pass"), "other"),
                   op_kind=_str(d.get("op_kind"), "other"), seconds_per_step=seconds,
                   lowered_to=_str(d.get("lowered_to")))


@dataclass(frozen=True)
class ArmProfile:
    """Where one arm's step goes: its wall time per step, the share covered, the rows."""

    arm: str
    step_seconds: float | None
    coverage: float | None
    rows: tuple[ProfileRow, ...]

    @cached_property
    def _by_key(self) -> dict[tuple[str, str, str], float]:
        out: dict[tuple[str, str, str], float] = {}
        for r in self.rows:
            out[r.key] = out.get(r.key, 0.0) + r.seconds_per_step
        return out

    def seconds(self, key: tuple[str, str, str]) -> float:
        """The thread-time per step of a (layer, pass, op kind); 0 where the arm has none."""
        return self._by_key.get(key, 0.0)

    @property
    def thread_seconds(self) -> float:
        """The rows' thread-time per step, added across cores (may exceed the step)."""
        return sum(r.seconds_per_step for r in self.rows)

    @classmethod
    def read(cls, arm: str, d: object) -> ArmProfile | None:
        if not isinstance(d, Mapping):
            return None
        raw = d.get("rows")
        rows = tuple(r for x in (raw if isinstance(raw, list) else [])
                     if (r := ProfileRow.read(x)) is not None)
        return cls(arm=arm, step_seconds=_float(d.get("step_seconds")),
                   coverage=_float(d.get("coverage")), rows=rows)


@dataclass(frozen=True)
class Difference:
    """One of the top differences: a row of an arm against the same row of the baseline."""

    arm: str
    layer: str
    pass_: str
    op_kind: str
    baseline_seconds: float
    arm_seconds: float
    lowered_to: str = ""

    @property
    def change(self) -> float:
        return self.arm_seconds - self.baseline_seconds

    @classmethod
    def read(cls, d: object) -> Difference | None:
        if not isinstance(d, Mapping):
            return None
        base, arm = _float(d.get("baseline_seconds")), _float(d.get("arm_seconds"))
        if base is None or arm is None or not isinstance(d.get("arm"), str):
            return None
        return cls(arm=d["arm"], layer=_str(d.get("layer"), NOT_TRACED),
                   pass_=_str(d.get("pass"), "other"), op_kind=_str(d.get("op_kind"), "other"),
                   baseline_seconds=base, arm_seconds=arm, lowered_to=_str(d.get("lowered_to")))


@dataclass(frozen=True)
class Explain:
    """`explain`: the arms' profiles (the baseline's among them) and the top differences."""

    arms: dict[str, ArmProfile] = field(default_factory=dict)
    top_differences: tuple[Difference, ...] = ()

    @property
    def baseline(self) -> ArmProfile | None:
        return self.arms.get(BASELINE)

    def others(self) -> list[ArmProfile]:
        return [p for name, p in self.arms.items() if name != BASELINE]

    @classmethod
    def read(cls, d: object) -> Explain | None:
        if not isinstance(d, Mapping):
            return None
        arms_raw = d.get("arms")
        arms = {name: p for name, raw in (arms_raw.items() if isinstance(arms_raw, Mapping)
                                          else ())
                if isinstance(name, str) and (p := ArmProfile.read(name, raw)) is not None}
        raw = d.get("top_differences")
        diffs = tuple(x for r in (raw if isinstance(raw, list) else [])
                      if (x := Difference.read(r)) is not None)
        return cls(arms=arms, top_differences=diffs) if arms or diffs else None


@dataclass(frozen=True)
class CompileReason:
    """Why a function compiled: `first_call`, `new_shape`, `new_dtype` or `other`."""

    kind: str = "other"
    dimension: int | None = None
    was: int | None = None
    now: int | None = None
    partial_batch: bool = False

    @classmethod
    def read(cls, d: object) -> CompileReason:
        if not isinstance(d, Mapping):
            return cls()
        return cls(kind=_str(d.get("kind"), "other"), dimension=_int(d.get("dimension")),
                   was=_int(d.get("was")), now=_int(d.get("now")),
                   partial_batch=d.get("partial_batch") is True)


@dataclass(frozen=True)
class Compilation:
    """One compile of a run: the function (train, eval, predict), its input shapes, its cost."""

    function: str
    shapes: tuple[str, ...]
    seconds: float | None
    reason: CompileReason

    @classmethod
    def read(cls, d: object) -> Compilation | None:
        if not isinstance(d, Mapping) or not isinstance(d.get("function"), str):
            return None
        shapes = d.get("shapes")
        return cls(function=d["function"],
                   shapes=tuple(s for s in (shapes if isinstance(shapes, list) else [])
                                if isinstance(s, str)),
                   seconds=_float(d.get("seconds")), reason=CompileReason.read(d.get("reason")))


@dataclass(frozen=True)
class RunCompilations:
    """A run's compilations, with the run's id and arm (as `runs[*]` has them)."""

    run_id: str
    arm: str
    compilations: tuple[Compilation, ...]

    @property
    def seconds(self) -> float:
        return sum(c.seconds or 0.0 for c in self.compilations)


@dataclass(frozen=True)
class ParityView:
    """`parity.<arm>`: the kind (`same`, `precision_drift`, `diverges`) and its figures; the
    losses per step on both sides when the file carries them (`losses`, `baseline_losses`, and
    the nudged baseline's `reference_losses`), for the plot."""

    arm: str
    kind: str
    steps: int | None
    max_rel_loss_diff: float | None
    max_rel_output_diff: float | None
    losses: tuple[float, ...] = ()
    baseline_losses: tuple[float, ...] = ()
    reference_losses: tuple[float, ...] = ()

    @classmethod
    def read(cls, arm: str, d: object) -> ParityView | None:
        if not isinstance(d, Mapping) or not isinstance(d.get("kind"), str):
            return None
        return cls(arm=arm, kind=d["kind"], steps=_int(d.get("steps")),
                   max_rel_loss_diff=_float(d.get("max_rel_loss_diff")),
                   max_rel_output_diff=_float(d.get("max_rel_output_diff")),
                   losses=_floats(d.get("losses")),
                   baseline_losses=_floats(d.get("baseline_losses")),
                   reference_losses=_floats(d.get("reference_losses")))


def _run_arm(run: Mapping[str, Any]) -> str:
    """The run's arm by its canonical name ("baseline" for the baseline), from its levers."""
    levers = run.get("levers")
    if isinstance(levers, Mapping) and all(isinstance(v, str) for v in levers.values()):
        try:
            arm = Arm(**{str(k): v for k, v in levers.items()})
        except (TypeError, ValueError):  # an unknown lever or value (ConfigError)
            return _str(run.get("variant"), "?")
        return BASELINE if arm.is_baseline else arm.name
    return _str(run.get("variant"), "?")


def _run_compilations(runs: object) -> tuple[RunCompilations, ...]:
    out: list[RunCompilations] = []
    for run in runs if isinstance(runs, list) else []:
        if not isinstance(run, Mapping) or not isinstance(run.get("compilations"), list):
            continue
        items = tuple(c for x in run["compilations"] if (c := Compilation.read(x)) is not None)
        out.append(RunCompilations(run_id=_str(run.get("run_id"), "?"), arm=_run_arm(run),
                                   compilations=items))
    return tuple(out)


@dataclass(frozen=True)
class WhyData:
    """Everything the "why" shows, read from a comparison's JSON; empty for older files."""

    explain: Explain | None = None
    compilations: tuple[RunCompilations, ...] = ()
    parity: dict[str, ParityView] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.explain is None and not self.compilations and not self.parity

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WhyData:
        """From a whole `comparison.json` (its `explain`, `parity`, and the `compilations`
        of `runs`, `measure_runs` and `inspect_runs`)."""
        parity_raw = d.get("parity")
        parity = {arm: p for arm, raw in (parity_raw.items() if isinstance(parity_raw, Mapping)
                                          else ())
                  if isinstance(arm, str) and (p := ParityView.read(arm, raw)) is not None}
        runs = [r for key in ("measure_runs", "runs", "inspect_runs")
                for r in _list(d.get(key))]
        return cls(explain=Explain.read(d.get("explain")), compilations=_run_compilations(runs),
                   parity=parity)


def read_folder(folder: Path) -> WhyData:
    """From a comparison folder's `comparison.json`; `WhyData()` when there is none or it
    cannot be read (the rest of the app says why)."""
    try:
        data = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return WhyData()
    return WhyData.from_dict(data) if isinstance(data, Mapping) else WhyData()


def why_of(report: ComparisonReport, folder: Path | None = None) -> WhyData:
    """The "why" of a comparison: from what the report writes, else from its saved file."""
    why = WhyData.from_dict(report.to_dict())
    if why.empty and folder is not None:
        return read_folder(folder)
    return why
