"""What the CSV's summary rows say of their figures, in words: each note is a code with its
facts (`xlagui.core.results.export.Said`), worded here (`note_words`) and handed to the core as
`ComparisonRequest.csv_notes`, so that the file the core writes after every round says them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Facts = Mapping[str, Any]


def _disturbed(f: Facts) -> str:
    busy = f.get("busy_percent")
    return f"of {f['rounds']} rounds" + (f", above {busy:g}%" if busy is not None else "")


# Each note by its code.
NOTES: dict[str, Callable[[Facts], str]] = {
    "ratio.median": lambda _: "XLA step time / baseline (median)",
    "outliers.kept": lambda _: "flagged by modified Z-score, kept",
    "half_width": lambda _: "relative, of the 95% interval",
    "setup": lambda _: "the workers' start to the last warm-up's end",
    "rounds_budget": lambda f: f"the {float(f['budget']):.0f} s budget less a slow set-up's "
    "excess",
    "compile.first_step": lambda _: "first step beyond the steady steps",
    "not_measurable": lambda _: "not measurable",
    "other_share": lambda f: f"of {f['cores']} cores, over every timed block",
    "disturbed": _disturbed,
    "busiest": lambda f: ", ".join(f"{name} (pid {pid}) {share:.2f}"
                                   for name, pid, share in f.get("programs", [])),
    "total_time_ratio": lambda _: "XLA total wall time / baseline",
    "memory_ratio": lambda _: "XLA peak RSS / baseline",
    "device_memory_ratio": lambda _: "XLA peak device memory / baseline",
    "flops.counted": lambda f: f"counted from the layer shapes, batch {f['batch']}, "
    f"{f['image_size']} px",
    "bytes.estimated": lambda _: "estimated from the layer shapes",
    "intensity": lambda _: "FLOP per byte, estimated",
    "peak.probe": lambda f: f"{f['dtype']} matmul probe",
    "bandwidth.probe": lambda _: "element-wise probe",
    "ceiling": lambda f: "largest layers alone: " + ", ".join(f.get("layers", [])),
    "percent_of_peak": lambda f: f"fraction of the measured {f['dtype']} matmul peak",
    "percent_of_ceiling": lambda _: "fraction of the layer ceiling",
}


def note_words(code: str, facts: Facts) -> str:
    """The note of `code` with `facts`; a code this version has no words for, as it is."""
    words = NOTES.get(code)
    try:
        return words(facts) if words else code
    except (KeyError, TypeError, ValueError):
        return code
