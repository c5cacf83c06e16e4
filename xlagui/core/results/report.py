"""A comparison's full record: config, dataset, environment, every run's events, the summary.

The same object feeds the CLI's table, the GUI, the history and the CSV/JSON/PNG exports, and it
round-trips through JSON so a saved comparison can be reopened and recomputed.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import shlex
from dataclasses import dataclass, field
from typing import Any

from xlagui import __version__
from xlagui.core.analysis.accuracy import chance_level
from xlagui.core.analysis.busy import MachineLoad, machine_load
from xlagui.core.analysis.compiles import extra_compiles
from xlagui.core.analysis.efficiency import compute as efficiency
from xlagui.core.analysis.pairs import InterleavedSummary
from xlagui.core.analysis.processes import Estimate, spread, widen, widen_arms
from xlagui.core.analysis.ranking import arm_results, instrument_check, recommendation
from xlagui.core.analysis.stats import Comparison, RunRecord, compare_runs, saved_in_words
from xlagui.core.analysis.summary import summarize
from xlagui.core.machine.peak import MachineLimits
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import ModelEvent, event_from_dict
from xlagui.core.protocol.identity import RunStatus
from xlagui.core.protocol.interference import Preflight
from xlagui.core.protocol.jsoncodec import decode, plain
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.settings import DEFAULTS
from xlagui.core.results.why import explain_of, parity_dicts, parity_of

FORMAT_VERSION = 1

@dataclass
class MeasurementRecord:
    """How the interleaved measurement ended; its figures are recomputed from the events."""

    stopped_by: str = ""  # a `StopReason`
    measuring_seconds: float = 0.0
    # From the workers' start to the last warm-up's end, and the rounds' budget: the setting's,
    # less what set-up took beyond its allowance (`interleave.rounds_budget`; 0: not known,
    # as in comparisons saved before it was recorded).
    setup_seconds: float = 0.0
    budget_seconds: float = 0.0
    block_steps: int = 0
    error: str = ""
    # The measuring runs' ids in the order they warmed up (random: `interleave.warm_up_order`);
    # empty in comparisons saved before the order was drawn (the baseline then went first).
    warm_up_order: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MeasurementRecord:
        return decode(cls, d, "measurement")


@dataclass
class ComparisonReport:
    config: RunConfig
    dataset: dict[str, Any]
    runs: list[RunEntry] = field(default_factory=list)
    # The interleaved speed measurement: one live worker per arm (baseline first).
    measure_runs: list[RunEntry] = field(default_factory=list)
    measurement: MeasurementRecord | None = None
    # One short compile per XLA arm with XLA's dump on, after the timed work ("What XLA did").
    inspect_runs: list[RunEntry] = field(default_factory=list)
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    )
    environment: dict[str, Any] = field(default_factory=dict)
    comparison: Comparison | None = None
    app_version: str = __version__
    # The machine's measured limits (`core/machine/peak.py`), for the %-of-peak figures; None when
    # not measured (the probe is off or failed: then only the achieved FLOP/s are shown).
    limits: MachineLimits | None = None
    # The model check's answer (`xlagui.core.model.check`): the chosen model built once before
    # anything was measured, with its FLOPs per step; None for the article's CNN (its work is
    # counted from the shapes) and in comparisons saved before models could be chosen.
    model_check: ModelEvent | None = None
    # The look at the machine before measuring (`workflow.preflight`); None: not looked at
    # (over SSH, with the preflight off, or saved before it).
    preflight: Preflight | None = None
    # Earlier measurements of the same settings on the same machine, newest first
    # (`history.earlier_estimates`, read once the measurement ended): each a fresh pair of
    # workers, against which `processes.spread` checks this one's interval.
    earlier: list[Estimate] = field(default_factory=list)

    def entry(self, run_id: str) -> RunEntry | None:
        """The run (training or measuring) with this id."""
        everything = [*self.measure_runs, *self.runs, *self.inspect_runs]
        return next((r for r in everything if r.run_id == run_id), None)

    def records(self, runs: list[RunEntry] | None = None) -> list[RunRecord]:
        out = []
        for r in self.runs if runs is None else runs:
            summary = r.summary
            if r.status == RunStatus.FINISHED and summary is not None:
                started = r.started
                out.append(
                    RunRecord(
                        run_id=r.run_id,
                        variant=r.variant,
                        repeat=r.repeat,
                        xla_mode=r.xla_mode,
                        summary=summary,
                        val_count=started.val_count if started else 0,
                    )
                )
        return out

    def interleaved(self) -> InterleavedSummary | None:
        """The measurement's figures, from the measuring workers' events."""
        if len(self.measure_runs) < 2:
            return None
        base, arm = self.measure_runs[0], self.measure_runs[1]
        m = self.measurement or MeasurementRecord()
        s = summarize(
            (base.xla_mode, base.events),
            (arm.xla_mode, arm.events),
            stopped_by=m.stopped_by,
            target=self.config.target_percent / 100,
            budget_seconds=float(self.config.budget_seconds),
            measuring_seconds=m.measuring_seconds,
            rounds_budget_seconds=m.budget_seconds or None,
            setup_seconds=m.setup_seconds or None,
        )
        if s.ratio is not None and s.low is not None and s.high is not None and self.earlier:
            s.processes = spread(Estimate(s.ratio, s.low, s.high), self.earlier)
            if s.processes is not None and s.processes.widened:
                s.low, s.high = widen(s.ratio, s.low, s.high, s.processes.tau)
        return s

    def machine_load(self, s: InterleavedSummary) -> MachineLoad:
        """What else used the machine over every measuring worker's blocks; busy when any
        estimate (an arm's, the A/A check's) had to count disturbed rounds."""
        busy = any(a.busy for a in s.arms) or (s.check is not None and s.check.busy) or (
            s.machine is not None and s.machine.busy)
        return machine_load([r.events for r in self.measure_runs], busy,
                            busy_percent=self.config.busy_percent)

    def recompute(self) -> Comparison:
        counts = self.dataset.get("counts")
        class_count = len(self.dataset.get("class_names") or []) or 2
        self.comparison = compare_runs(
            self.records(),
            self.interleaved(),
            self.records(self.measure_runs),
            chance=chance_level(counts, class_count),
        )
        c = self.comparison
        extra_compiles(c, self.measure_runs)  # every compile and recompile, when reported
        if c.interleaved is not None:
            c.interleaved.arms = arm_results(
                self.measure_runs, self.runs, counts=counts, class_count=class_count,
                parity=parity_of(self.inspect_runs),
            )
            widen_arms(c.interleaved.arms, c.interleaved.processes)
            c.interleaved.check = instrument_check(self.measure_runs)
            c.interleaved.machine = self.machine_load(c.interleaved)
            if len(c.interleaved.arms) > 1:
                c.recommendation = recommendation(c.interleaved.arms)
                c.recommended_arm = c.recommendation.arm if c.recommendation else None
        self.comparison.efficiency = efficiency(self, self.limits)
        first = next((r.started for r in [*self.measure_runs, *self.runs] if r.started), None)
        if first is not None:
            self.environment = {
                **self.environment,
                "device_name": first.device_name,
                "device_kind": first.device_kind,
                **first.versions,
            }
        return self.comparison

    def reproduce_command(self) -> str:
        c = self.config
        source = "--demo" if self.dataset.get("demo") else shlex.quote(str(self.dataset["root"]))
        parts = [
            "xlagui compare",
            source,
            f"--epochs {c.epochs}",
            f"--batch {c.batch_size}",
            f"--image-size {c.image_size}",
            f"--device {c.device}",
            f"--xla {c.xla.value}",
            f"--repeats {c.repeats}",
            f"--seed {c.seed}",
            f"--budget {c.budget_seconds}",
            f"--target {c.target_percent:g}",
        ]
        if c.busy_percent != DEFAULTS["busy_percent"]:
            parts.append(f"--busy-percent {c.busy_percent}")
        if c.arms:
            parts.append(f"--arms {','.join(c.arms)}")
        if not c.model.is_article_cnn:
            parts.append(f"--model {shlex.quote(c.model.argument)}")
            if c.model.new_head:
                parts.append("--new-head")
        if c.quick:
            parts.append("--quick")
        if c.check:
            parts.append("--check")
        if not c.augment:
            parts.append("--no-augment")
        if c.drop_remainder:
            parts.append("--drop-remainder")
        if not c.explain:
            parts.append("--no-explain")
        kinds = (self.dataset.get("excluded") or {}).get("kinds") or []
        if kinds:
            parts.append(f"--exclude-problems {','.join(kinds)}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "xlagui-comparison",
            "format_version": FORMAT_VERSION,
            "app_version": self.app_version,
            "created": self.created,
            "reproduce": self.reproduce_command(),
            "config": self.config.to_dict(),
            "dataset": self.dataset,
            "environment": self.environment,
            "comparison": self.comparison.to_dict() if self.comparison else None,
            "runs": [r.to_dict() for r in self.runs],
            "measure_runs": [r.to_dict() for r in self.measure_runs],
            "measurement": self.measurement.to_dict() if self.measurement else None,
            "inspect_runs": [r.to_dict() for r in self.inspect_runs],
            # The why, from the inspecting runs' events (read back from them, never from here).
            "explain": explain_of(self.inspect_runs),
            "parity": parity_dicts(self.inspect_runs),
            "machine_limits": self.limits.to_dict() if self.limits else None,
            "model_check": self.model_check.to_dict() if self.model_check else None,
            "preflight": plain(self.preflight) if self.preflight else None,
            "earlier": [e.to_dict() for e in self.earlier],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ComparisonReport:
        if d.get("format") != "xlagui-comparison":
            raise ValueError("not an xlagui comparison file")
        if int(d.get("format_version", 0)) > FORMAT_VERSION:
            raise ValueError(
                f"this comparison was written by a newer xlagui (format {d['format_version']})"
            )
        report = cls(
            config=RunConfig.from_dict(d["config"]),
            dataset=d.get("dataset", {}),
            runs=[RunEntry.from_dict(r) for r in d.get("runs", [])],
            created=d.get("created", ""),
            environment=d.get("environment", {}),
            app_version=d.get("app_version", ""),
            measure_runs=[RunEntry.from_dict(r) for r in d.get("measure_runs", [])],
            inspect_runs=[RunEntry.from_dict(r) for r in d.get("inspect_runs", [])],
        )
        if d.get("measurement") is not None:
            report.measurement = MeasurementRecord.from_dict(d["measurement"])
        if d.get("machine_limits") is not None:
            report.limits = MachineLimits.from_dict(d["machine_limits"])
        if d.get("comparison") is not None:
            report.comparison = Comparison.from_dict(d["comparison"])
        if d.get("preflight") is not None:
            report.preflight = decode(Preflight, d["preflight"], "preflight")
        report.earlier = [Estimate.from_dict(e) for e in d.get("earlier") or []]
        if d.get("model_check") is not None:
            check = event_from_dict(d["model_check"])
            if not isinstance(check, ModelEvent):
                raise ValueError(f"model_check is a {check.type} event, not a model event")
            report.model_check = check
        if d.get("comparison") is not None and saved_in_words(d["comparison"]):
            # Saved before verdicts were data: what it holds cannot be said again in words, so
            # everything is derived from the events once more.
            report.recompute()
        return report


