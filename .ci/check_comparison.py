"""Check what a comparison left behind; exit 1 with the reasons if something is wrong.

    python .ci/check_comparison.py quick OUT   # the README's main command (--quick)
    python .ci/check_comparison.py train OUT   # a short training comparison: both runs
                                               # finished, TensorBoard scalars written

Used by the plain-install lane (.ci/plain_install.sh, with the clean virtual environment's
Python, so it imports only what a plain `pip install .` brings: the TensorBoard reader below is
a runtime dependency too) and by the bundle's smoke test (packaging/build.sh).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _runs(report: dict[str, object], key: str) -> list[tuple[str, str]]:
    runs = report.get(key) or []
    assert isinstance(runs, list)
    return [(str(r["run_id"]), str(r["status"])) for r in runs]


def check_quick(out: Path, report: dict[str, object]) -> list[str]:
    wrong = [f"measuring run {i} {s}" for i, s in _runs(report, "measure_runs") if s != "finished"]
    comparison = report.get("comparison") or {}
    assert isinstance(comparison, dict)
    interleaved = comparison.get("interleaved") or {}
    if not isinstance(interleaved, dict) or interleaved.get("ratio") is None:
        wrong.append("no interleaved XLA ratio")
    # "What XLA did" after a speed-only comparison: the XLA side's inspection compile dumped
    # the HLO; and the why: every side inspected, profiled, its parity judged.
    inspected = _runs(report, "inspect_runs")
    if not inspected:
        wrong.append("no inspection compile after the measurement")
    for run_id, status in inspected:
        modules = list((out / "runs" / run_id / "xla").glob("*.txt"))
        if status != "finished":
            wrong.append(f"inspection {run_id} {status}")
        elif run_id != "i-baseline" and not any("HloModule" in m.read_text(errors="replace")
                                                 for m in modules):
            wrong.append(f"inspection {run_id}: {len(modules)} HLO text files")
    explain = report.get("explain") or {}
    assert isinstance(explain, dict)
    if set(explain.get("arms") or {}) != {"baseline", "xla"}:
        wrong.append(f"the why profiled {sorted(explain.get('arms') or {})}, not both sides")
    parity = report.get("parity") or {}
    assert isinstance(parity, dict)
    if "xla" not in parity:
        wrong.append("no parity for the XLA side")
    return wrong


def check_train(out: Path, report: dict[str, object]) -> list[str]:
    from tensorboard.backend.event_processing import event_accumulator

    runs = _runs(report, "runs")
    wrong = [f"training run {i} {s}" for i, s in runs if s != "finished"]
    if len(runs) != 2:
        wrong.append(f"{len(runs)} training runs, expected a baseline and an XLA run")
    comparison = report.get("comparison") or {}
    assert isinstance(comparison, dict)
    wrong += [f"note: {n}" for n in comparison.get("notes") or []]
    for run_id, _ in runs:
        acc = event_accumulator.EventAccumulator(str(out / "tensorboard" / run_id))
        acc.Reload()
        tags = set(acc.Tags()["tensors"])
        if "epoch/loss" not in tags or not acc.Tensors("epoch/loss"):
            wrong.append(f"{run_id}: no TensorBoard scalars (tags: {sorted(tags)})")
    return wrong


def main(argv: list[str]) -> int:
    kind, out = argv[0], Path(argv[1])
    report = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    wrong = {"quick": check_quick, "train": check_train}[kind](out, report)
    for line in wrong:
        print(f"{out}: {line}", file=sys.stderr)
    if not wrong:
        print(f"{out}: every run finished" + (
            ", TensorBoard scalars written" if kind == "train" else ""))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
