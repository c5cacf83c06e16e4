"""Finished comparisons, saved automatically in the user's data folder and listed for reopening.

Each comparison is one folder under `paths.history_dir()` holding its `comparison.json`; it is
written atomically after every run, so killing the app never loses a finished run, and once
more when the app closes during a run, with that run `interrupted` and its epochs kept.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlagui.core.analysis.processes import Estimate
from xlagui.core.analysis.stats import Comparison, saved_in_words
from xlagui.core.files import paths
from xlagui.core.protocol.arms import comparison_arms
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.identity import RunStatus
from xlagui.core.results import export
from xlagui.core.results.report import ComparisonReport


@dataclass
class HistoryItem:
    folder: Path
    created: str
    # What its title names (`xlagui.present.report.history_title` says it): the dataset, and
    # the model when it is not the article's CNN ("" then).
    dataset_name: str
    # The saved comparison, which `xlagui.present.verdicts.history_verdict` words; None for
    # one saved before verdicts were data, which keeps its sentence in `saved_verdict` instead.
    comparison: Comparison | None
    runs_finished: int
    runs_interrupted: int = 0  # training runs cut short by the app closing (epochs kept)
    machine: str = ""  # where it was measured (`machine_of`)
    device: str = ""  # the device it ran on there, in the worker's words ("cpu: Intel Xeon")
    # What must match for two comparisons to be set side by side (`same_settings`): the
    # dataset, the model and the settings that change a step's work; never the machine.
    settings_key: str = ""
    # The headline: XLA's speed-up on that machine with its interval (None: not measured).
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    # The steady step times measured there, as they are.
    baseline_step_seconds: float | None = None
    xla_step_seconds: float | None = None
    saved_verdict: str = ""
    model_label: str = ""
    # The arms measured besides the baseline and the XLA side, by name ("bf16", "jit+bf16"),
    # as `comparison_arms` makes them from the settings: what the title names.
    other_arms: tuple[str, ...] = ()
    quick: bool = False  # a speed-only comparison: interleaved pairs, no training runs
    pairs: int = 0  # the interleaved pairs of blocks measured (the headline's)
    # The machine as a person knows it: its CPU's model and logical CPUs ("" / None where the
    # record does not say), and the computer's own name.
    cpu: str = ""
    cpu_count: int | None = None
    hostname: str = ""
    tensorflow: str = ""  # the TensorFlow it ran with ("" where the record does not say)

    @property
    def json_path(self) -> Path:
        return self.folder / "comparison.json"


def machine_of(environment: dict[str, Any]) -> str:
    """Which machine a saved comparison was measured on: the SSH host it was reached by
    (`environment.host`), else the computer's own name (comparisons from before SSH hosts
    have only that)."""
    host = environment.get("host")
    if host:
        return str(host)
    return str(environment.get("hostname") or "unknown machine")


def settings_key(data: dict[str, Any]) -> str:
    """The dataset, the model and the step's settings of a saved comparison, as one string:
    equal for the same comparison made on two machines (the device is the machine's)."""
    config = data.get("config") or {}
    model = config.get("model") or {}
    return json.dumps(
        [
            (data.get("dataset") or {}).get("fingerprint"),
            [model.get("source", "builtin"), model.get("name", "cnn"), model.get("sha256", "")],
            config.get("image_size"),
            config.get("batch_size"),
            config.get("xla"),
            sorted(config.get("arms") or []),
            config.get("augment"),
        ]
    )


def new_folder(root: Path | None = None) -> Path:
    """A fresh, uniquely named folder for a comparison about to run."""
    root = root or paths.history_dir()
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = root / f"{stamp}-{secrets.token_hex(3)}"
    folder.mkdir(parents=True, exist_ok=False)
    return folder


def save(report: ComparisonReport, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return export.write_json(report, folder / "comparison.json")


def list_items(root: Path | None = None) -> list[HistoryItem]:
    """Newest first. Unreadable entries are skipped, never fatal."""
    root = root or paths.history_dir()
    items: list[HistoryItem] = []
    if not root.is_dir():
        return items
    for folder in root.iterdir():
        path = folder / "comparison.json"
        if not path.is_file():
            continue
        try:
            items.append(_item(folder, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, AttributeError):
            continue
    items.sort(key=lambda i: (i.created, i.folder.name), reverse=True)
    return items


def _item(folder: Path, data: dict[str, Any]) -> HistoryItem:
    """One saved comparison as the list shows it, from its `comparison.json`."""
    comp = data.get("comparison") or {}
    statuses = [r.get("status") for r in data.get("runs", [])]
    name = data.get("dataset", {}).get("name", "?")
    model = ""
    others: tuple[str, ...] = ()
    quick = False
    with contextlib.suppress(ValueError, TypeError):
        config = RunConfig.from_dict(data.get("config") or {})
        model = "" if config.model.is_article_cnn else config.model.label
        others = tuple(variant for variant, _arm in comparison_arms(config.xla, config.arms)[2:])
        quick = config.quick
    env = data.get("environment") or {}
    speedup = comp.get("speedup") or {}
    return HistoryItem(
        folder=folder,
        created=data.get("created", ""),
        dataset_name=str(name),
        model_label=model,
        comparison=_saved_comparison(comp),
        saved_verdict=str(comp["verdict"]) if saved_in_words(comp) else "",
        runs_finished=statuses.count(RunStatus.FINISHED),
        runs_interrupted=statuses.count(RunStatus.INTERRUPTED),
        machine=machine_of(env),
        device=device_of(data.get("config") or {}, env),
        tensorflow=str(env.get("tensorflow") or ""),
        settings_key=settings_key(data),
        speedup=_number(speedup.get("value")),
        speedup_low=_number(speedup.get("low")),
        speedup_high=_number(speedup.get("high")),
        baseline_step_seconds=_number(comp.get("baseline_steady_step_seconds")),
        xla_step_seconds=_number(comp.get("xla_steady_step_seconds")),
        other_arms=others,
        quick=quick,
        pairs=int(_number((comp.get("interleaved") or {}).get("pairs")) or 0),
        cpu=cpu_of(env),
        cpu_count=_count(env.get("cpu_count")),
        hostname=str(env.get("hostname") or env.get("host") or ""),
    )


def device_of(config: dict[str, Any], environment: dict[str, Any]) -> str:
    """The device a comparison ran on, in the worker's words: "cpu: AMD EPYC"."""
    device = str(config.get("device", ""))
    if environment.get("device_name"):
        device += f": {environment['device_name']}"
    return device


def cpu_of(environment: dict[str, Any]) -> str:
    """The CPU a saved comparison ran on: recorded as `cpu` (this computer since issue 31, an
    SSH host always), else the device's name when it trained on the CPU ("" where neither)."""
    if environment.get("cpu"):
        return str(environment["cpu"])
    if str(environment.get("device_kind") or "").lower() == "cpu":
        return str(environment.get("device_name") or "")
    return ""


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _saved_comparison(comp: dict[str, Any]) -> Comparison | None:
    """A listed comparison's typed record; None when it has none (saved before verdicts were
    data, or not compared) or it cannot be read (it is listed all the same)."""
    if not comp or saved_in_words(comp):
        return None
    try:
        return Comparison.from_dict(comp)
    except (KeyError, TypeError, ValueError):
        return None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def same_settings(items: list[HistoryItem], chosen: HistoryItem) -> list[HistoryItem]:
    """The comparisons of `chosen`'s dataset, model and settings, one per machine (its newest,
    `chosen` itself for its own machine), `chosen`'s machine first: the machines side by side.
    Only measured ones (with a speed-up) count. Each keeps its own ratio and interval; nothing
    is divided across machines."""
    if chosen.speedup is None:
        return [chosen]
    rows = [chosen]
    seen = {chosen.machine}
    for item in items:  # newest first
        if (item.settings_key == chosen.settings_key and item.machine not in seen
                and item.speedup is not None):
            rows.append(item)
            seen.add(item.machine)
    return rows


def earlier_estimates(report: ComparisonReport, root: Path | None = None,
                      own: Path | None = None) -> list[Estimate]:
    """The speed measurements in History of `report`'s dataset, model and settings, made on the
    same machine and device with the same TensorFlow, newest first: each a fresh pair of
    worker processes, with its interval over that pair alone. A comparison measured on a busy
    machine is left out (its spread is the neighbour's), and so is `own`, `report`'s folder
    (the window's comparison is saved in History as it runs)."""
    key = settings_key({"config": report.config.to_dict(), "dataset": report.dataset})
    env = report.environment
    machine, device = machine_of(env), device_of(report.config.to_dict(), env)
    out: list[Estimate] = []
    for item in list_items(root):
        i = item.comparison.interleaved if item.comparison is not None else None
        if (i is None or i.ratio is None or i.low is None or i.high is None
                or item.settings_key != key or item.machine != machine
                or item.device != device or item.tensorflow != env.get("tensorflow", "")
                or (own is not None and item.folder.resolve() == own.resolve())
                or (i.machine is not None and i.machine.busy)):
            continue
        p = i.processes
        low, high = (p.pair_low, p.pair_high) if p is not None else (i.low, i.high)
        out.append(Estimate(i.ratio, low, high, item.folder.name, item.created))
    return out


def load(item: HistoryItem | Path) -> ComparisonReport:
    path = item.json_path if isinstance(item, HistoryItem) else Path(item)
    if path.is_dir():
        path = path / "comparison.json"
    report = export.read_json(path)
    if any(r.events for r in [*report.measure_runs, *report.runs]):
        # Every figure from the runs' events, by the code that computes them live: the summary
        # saved beside them may come from another version, or from a moment before the end.
        report.recompute()
    return report
