"""A comparison's report in words: its title, the runs table, and the dataset, the machine and
the settings as (what, value) rows. The CLI, the window, the PNG and the Markdown share them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import EpochEvent
from xlagui.core.protocol.identity import Role, RunStatus, Split
from xlagui.present import levers as lever_words
from xlagui.present.format import evidence, mode_words, percent, seconds, size_bytes
from xlagui.present.intervals import pairs_noun

if TYPE_CHECKING:
    from xlagui.core.results.history import HistoryItem
    from xlagui.core.results.report import ComparisonReport


def comparison_title(report: ComparisonReport) -> str:
    """The comparison's title: "XLA vs baseline on pets", or with its other arms "XLA, bf16
    and jit+bf16 vs baseline on pets", and the model when it is not the article's CNN."""
    name = report.dataset.get("name") or report.dataset.get("root", "")
    others = [r.variant for r in report.measure_runs[2:] if r.role is not Role.CHECK]
    return arms_title(others, str(name)) + model_words(report.config)


def arms_title(others: Sequence[str], dataset: str) -> str:
    """The arms compared and the dataset: "XLA vs baseline on pets", "XLA, bf16 and jit+bf16
    vs baseline on pets" (`others`: the arms besides the XLA side)."""
    names = ["XLA", *others]
    arms = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
    return f"{arms} vs baseline on {dataset}"


def model_words(config: RunConfig) -> str:
    """The model in a title: "" for the article's CNN (every title before models could be
    chosen), " with mixer" or " with net.keras" otherwise."""
    return "" if config.model.is_article_cnn else f" with {config.model.label}"


def history_title(item: HistoryItem) -> str:
    """A saved comparison's title in the History list (from what the list read of it): the
    same words as `comparison_title`, every arm named."""
    model = f" with {item.model_label}" if item.model_label else ""
    return arms_title(item.other_arms, item.dataset_name) + model


# The runs table, the same in the terminal and the PNG: (heading, aligned left).
RUN_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("Run", True),
    ("Status", True),
    ("XLA in effect", False),
    ("First epoch", False),
    ("Steady epoch", False),
    ("Total", False),
    ("Peak RSS", False),
    ("Val. acc.", False),
    ("XLA evidence", True),
)


def run_name(variant: str, xla_mode: str, arm_name: str, repeat: int) -> str:
    """A run in one short label: "Baseline #1", "XLA jit_compile #2", "bf16 #1"."""
    if variant == Role.BASELINE:
        side = "Baseline"
    elif variant == Role.CHECK:
        side = "A/A twin (baseline)"
    elif variant == Role.XLA:
        side = lever_words.mode_words(XlaMode(xla_mode)).short
    else:
        side = arm_name
    return f"{side} #{repeat}"


def run_rows(report: ComparisonReport) -> list[tuple[str, ...]]:
    """One row per training run, in `RUN_COLUMNS` order."""
    rows: list[tuple[str, ...]] = []
    for r in report.runs:
        s = r.summary
        started = r.started
        rows.append((
            run_name(r.variant, r.xla_mode, r.arm.name, r.repeat),
            str(r.status),
            "—" if started is None else ("yes" if started.xla_in_effect else "no"),
            seconds(s.first_epoch_seconds if s is not None else None),
            seconds(s.steady_epoch_seconds if s is not None else None),
            seconds(s.total_seconds if s is not None else None),
            size_bytes(s.peak_rss_bytes if s is not None else None),
            percent(s.final_val_accuracy if s is not None else None),
            evidence(s) if s is not None else "—",
        ))
    return rows


def dataset_words(report: ComparisonReport) -> list[tuple[str, str]]:
    """The dataset, as (what, value) rows."""
    d = report.dataset
    counts = d.get("counts") or {}
    train = sum((counts.get(Split.TRAIN) or {}).values())
    test = sum((counts.get(Split.TEST) or {}).values())
    classes = d.get("class_names") or []
    return [
        ("Name", str(d.get("name", "?"))),
        ("Folder", str(d.get("root", "?"))),
        ("Classes", f"{len(classes)}: {', '.join(classes)}"),
        ("Images", f"{train:,} training, {test:,} test ({d.get('layout', '?')} layout)"),
        ("Fingerprint", str(d.get("fingerprint", ""))[:16]),
    ]


# What a CPU's model name carries that tells no machine apart: trademarks, the word "CPU",
# the base clock ("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz" → "Intel Xeon Platinum 8480+").
_CPU_NOISE = re.compile(r"\((?:R|TM|tm|r)\)|\bCPU\b|@\s*[\d.]+\s*[GM]Hz|\b\d+-Core Processor\b")


def cpu_words(cpu: str) -> str:
    """A CPU's model name as a person reads it: trademarks, "CPU" and the clock left out."""
    return " ".join(_CPU_NOISE.sub(" ", cpu).split())


def environment_words(report: ComparisonReport) -> list[tuple[str, str]]:
    """The machine, the software and the settings, as (what, value) rows."""
    e = report.environment
    c = report.config
    return [
        ("Device", device_words(report)),
        ("Software", f"TensorFlow {e.get('tensorflow', '?')}, Keras {e.get('keras', '?')}, "
                     f"Python {e.get('python', '?')}"),
        ("Machine", machine_words(e)),
        ("Settings", settings_words(report)),
        ("XLA side", mode_words(Role.XLA, c.xla.value)),
    ]


def machine_words(environment: dict[str, object]) -> str:
    """The machine as History names it, by its CPU ("AMD EPYC, 2 CPUs, Linux-6.18…"), the
    computer's name after it; its name first only where the record has no CPU."""
    e = environment
    cpu = cpu_words(str(e.get("cpu") or ""))
    name = str(e.get("hostname") or "?")
    rest = f"{e.get('platform', '?')}, {e.get('cpu_count', '?')} CPUs"
    return f"{cpu}, {rest} (computer: {name})" if cpu else f"{name}, {rest}"


def device_words(report: ComparisonReport) -> str:
    """The device the comparison ran on: "Intel Xeon (CPU)"."""
    e = report.environment
    return f"{e.get('device_name') or '?'} ({e.get('device_kind') or report.config.device})"


def settings_words(report: ComparisonReport) -> str:
    """The settings in one line: "3 epochs, batch 32, …"; a speed-only comparison trains no
    epoch, so its line says its budget and the pairs it measured instead."""
    c = report.config
    common = (f"batch {c.batch_size}, {c.image_size} px, augmentation "
              f"{'on' if c.augment else 'off'}, seed {c.seed}")
    if c.quick:
        i = report.comparison.interleaved if report.comparison is not None else None
        pairs = f", {i.pairs} {pairs_noun(i.pairs)}" if i is not None else ""
        return f"speed only: {c.budget_seconds} s budget{pairs}, {common}"
    return (f"{c.epochs} epoch{'s' if c.epochs != 1 else ''}, {common}, {c.repeats} "
            f"repeat{'s' if c.repeats != 1 else ''}")


# A training run's statuses that say the comparison was cut short before it ended.
CUT_SHORT = frozenset({RunStatus.CANCELLED, RunStatus.INTERRUPTED, RunStatus.NOT_RUN})


def stopped_words(report: ComparisonReport) -> str:
    """What a comparison whose training was cut short (Stop, or xlagui closed) can still
    claim, from its runs' statuses: "" when every training run asked for ended on its own."""
    cut = [r for r in report.runs if r.status in CUT_SHORT]
    if not cut:
        return ""
    planned = report.config.epochs * len(report.runs)
    done = sum(1 for r in report.runs for e in r.events if isinstance(e, EpochEvent))
    closed = any(r.status != RunStatus.CANCELLED for r in cut)
    how = "cut short when xlagui closed" if closed else "stopped"
    measured = bool(report.measure_runs) and all(
        r.status == RunStatus.FINISHED for r in report.measure_runs)
    stands = "the speed figures stand" if measured else "the figures are from what ran"
    return (f"Training {how} after {done} of {planned} epoch{'s' if planned != 1 else ''}: "
            f"{stands}, the accuracy verdict is not earned.")
