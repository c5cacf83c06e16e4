"""Every arm against the baseline: ratios through the same rounds, validity, accuracy parity and
the ranking rule (a faster arm that learns worse is not recommended). The arms' workers are the
fake measuring worker (no TensorFlow)."""

from __future__ import annotations

import csv
import io
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.images import make_split_dataset
from xlagui.core.analysis.accuracy import AccuracyKind, AccuracyVerdict
from xlagui.core.analysis.pairs import (
    ArmResult,
    PassedOver,
    RatioEstimate,
    Recommendation,
    RecommendationKind,
)
from xlagui.core.analysis.ranking import ranked, recommendation
from xlagui.core.compare import new_report, run_measurement
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.measure.interleave import catch_up_steps, williams_orders
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import BlockEvent
from xlagui.core.protocol.problems import Problem, ProblemKind
from xlagui.core.protocol.task import TaskState
from xlagui.core.results.export import read_json, to_csv
from xlagui.core.results.report import ComparisonReport
from xlagui.present.format import arm_table, comparison_rows
from xlagui.present.problems import arm_problem
from xlagui.present.report import comparison_title

FAKE = Path(__file__).resolve().parents[2] / "helpers" / "fake_measure_worker.py"


@pytest.fixture
def scan(tmp_path: Path) -> DatasetScan:
    make_split_dataset(tmp_path / "data", {"african": 6, "asian": 6}, {"african": 2, "asian": 2})
    return scan_dataset(tmp_path / "data")


def measure_arms(
    scan: DatasetScan, out: Path, arms: tuple[str, ...], check: bool = False, **fake: Any
) -> ComparisonReport:
    config = RunConfig(
        batch_size=4,
        image_size=48,
        quick=True,
        budget_seconds=10,
        arms=arms,
        check=check,
        extra={"fake": {"step": 0.01, "val_count": 200, **fake}},
    )
    report = new_report(scan, config)
    run_measurement(
        report,
        scan,
        out,
        TaskState(),
        command_for=lambda spec: [sys.executable, str(FAKE), str(spec.run_dir / "spec.json")],
        clock=TickingClock(),
    )
    return report


class TickingClock:
    """The measurement's clock, 0.05 s further at every reading: its 10 s budget is
    a number of readings (rounds), not this machine's wall time, so a loaded machine measures
    the same pairs as an idle one."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.05
        return self.t


def rounds_log(out: Path, run_id: str) -> list[str]:
    """The commands a fake worker received, as JSON lines."""
    lines = (out / "runs" / run_id / "commands.log").read_text().splitlines()
    return [ln.split(" ", 1)[1] for ln in lines]


def rounds_of(out: Path, run_id: str) -> list[tuple[float, int]]:
    lines = (out / "runs" / run_id / "commands.log").read_text().splitlines()
    return [
        (float(stamp), json.loads(cmd)["seq"])
        for stamp, cmd in (ln.split(" ", 1) for ln in lines)
        if json.loads(cmd)["cmd"] == "block"
    ]


def test_rounds_go_to_the_arm_with_the_widest_interval(scan: DatasetScan, tmp_path: Path) -> None:
    # bf16's blocks scatter ±30%, XLA's ±1%: after the first 8 rounds of everyone, XLA's interval
    # is already within the ±3% target, so the rounds that follow are the baseline and bf16 only.
    out = tmp_path / "out"
    report = measure_arms(
        scan,
        out,
        ("bf16",),
        ratios={"xla": 2.0, "bf16": 0.5},
        jitters={"xla": 0.01, "bf16": 0.3},
    )
    c = report.comparison
    assert c is not None and c.interleaved is not None
    assert c.interleaved.stopped_by == "target"
    arms = {a.arm: a for a in c.interleaved.arms}
    rounds = {e.variant: [seq for _, seq in rounds_of(out, e.run_id)] for e in report.measure_runs}
    assert rounds["baseline"] == list(range(len(rounds["baseline"])))
    assert rounds["bf16"] == rounds["baseline"]  # the widest: in every round
    assert rounds["xla"] == list(range(8))  # only until every arm had its 8 pairs
    assert arms["jit"].pairs == 8 and arms["bf16"].pairs == len(rounds["baseline"]) > 30
    assert arms["bf16"].half_width is not None and arms["bf16"].half_width <= 0.03
    assert arms["jit"].ratio == pytest.approx(2.0, rel=0.02)
    assert arms["bf16"].ratio == pytest.approx(0.5, rel=0.05)  # log(1 ± 0.3) is skewed
    # The two-arm rounds run through their own design: baseline first, then bf16 first, …
    stamps = {
        e.variant: dict((seq, t) for t, seq in rounds_of(out, e.run_id))
        for e in report.measure_runs
    }
    firsts = [
        min(("baseline", "bf16"), key=lambda v: stamps[v][seq])
        for seq in range(8, len(rounds["baseline"]))
    ]
    assert firsts[:4] == ["baseline", "bf16", "baseline", "bf16"]
    # XLA sat out most rounds. Catching up with the baseline's steps (thousands of 0.02 s steps
    # here) would take longer than it is worth for a slower arm: its accuracy is not compared.
    finishes = {e.variant: json.loads(rounds_log(out, e.run_id)[-1]) for e in report.measure_runs}
    assert finishes["xla"] == finishes["bf16"] == {"cmd": "finish", "steps": 0, "seq": 0}
    assert arms["jit"].accuracy_ok is None and arms["jit"].accuracy_kind == "unequal_steps"
    jit = arms["jit"].accuracy
    assert jit is not None and jit.kind is AccuracyKind.UNEQUAL_STEPS and jit.ok is None
    # bf16 caught up: the same steps, but a quick check gives no verdict.
    assert arms["bf16"].accuracy_ok is None and arms["bf16"].accuracy_kind == "too_early"


def test_three_arms_rotate_and_each_gets_its_ratio(scan: DatasetScan, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = measure_arms(
        scan, out, ("bf16", "jit+bf16"), ratios={"xla": 2.4, "bf16": 0.5, "jit+bf16": 2.7}
    )
    assert [e.run_id for e in report.measure_runs] == [
        "m1-baseline",
        "m2-xla",
        "m3-bf16",
        "m4-jit+bf16",
    ]
    specs = [
        json.loads((out / "runs" / e.run_id / "spec.json").read_text()) for e in report.measure_runs
    ]
    assert [(s["xla_mode"], s["precision"]) for s in specs] == [
        ("off", "float32"),
        ("jit", "float32"),
        ("off", "mixed_bfloat16"),
        ("jit", "mixed_bfloat16"),
    ]
    # Who went when in each round: the Williams design's rows (every arm in every position and
    # after every other arm equally often), as the workers' own command logs record it.
    stamps = {
        e.run_id: dict((seq, t) for t, seq in rounds_of(out, e.run_id)) for e in report.measure_runs
    }
    ids = [e.run_id for e in report.measure_runs]
    for seq in range(len(stamps[ids[0]])):
        order = sorted(ids, key=lambda i: stamps[i][seq])
        assert order == [ids[i] for i in williams_orders(4)[seq % 4]]
    # One K for all, from the slowest arm (jit+bf16: 0.027 s a step, 37 steps to a second).
    ks = {
        e.variant: {b.steps for b in e.events if isinstance(b, BlockEvent)}
        for e in report.measure_runs
    }
    assert ks == {"baseline": {37}, "xla": {37}, "bf16": {37}, "jit+bf16": {37}}
    c = report.comparison
    assert c is not None and c.interleaved is not None
    assert c.interleaved.block_steps == 37
    arms = {a.arm: a for a in c.interleaved.arms}
    assert list(arms) == ["jit", "bf16", "jit+bf16"]
    assert arms["jit"].ratio == pytest.approx(2.4)
    assert arms["bf16"].ratio == pytest.approx(0.5)
    assert arms["jit+bf16"].ratio == pytest.approx(2.7)
    assert all(a.valid and a.pairs >= 8 for a in arms.values())
    assert c.recommended_arm == "bf16"
    # The recommendation is a field of its own, beside the question's verdict.
    rec = c.recommendation
    assert rec is not None and rec.kind is RecommendationKind.ACCURACY_UNKNOWN
    assert (rec.arm, rec.adjusted_for, rec.tied, rec.passed_over) == ("bf16", 3, (), ())
    assert rec.speedup == pytest.approx(2.0)
    assert rec.low is not None and rec.high is not None and rec.speedup is not None
    assert rec.low <= rec.speedup <= rec.high
    assert c.verdict_kind == "speed_measured"
    assert c.speedup is not None and c.speedup.value == pytest.approx(1 / 2.4)
    assert comparison_title(report).startswith("XLA, bf16 and jit+bf16 vs baseline on ")
    data = json.loads((out / "comparison.json").read_text())
    got = {a["arm"]: a for a in data["comparison"]["interleaved"]["arms"]}
    for key in ("arm", "ratio", "low", "high", "pairs", "valid", "accuracy_ok"):
        assert key in got["bf16"]
    assert got["bf16"]["accuracy_ok"] is None  # a quick check: not known
    rows = [r for r in csv.DictReader(io.StringIO(to_csv(report))) if r["row"] == "arm"]
    assert [(r["rank"], r["arm"]) for r in rows] == [("1", "bf16"), ("2", "jit"), ("3", "jit+bf16")]
    assert float(rows[0]["value"]) == pytest.approx(0.5)
    table = arm_table(c)
    assert table[0][1] == "bf16 ★" and "2.00× faster" in table[0][2]


def test_a_quick_check_gap_is_no_accuracy_verdict(scan: DatasetScan, tmp_path: Path) -> None:
    """A few dozen steps and one seed a side: 60% against 90% is no evidence that fp16 learns
    worse (early training's seed-to-seed spread is that wide), so no arm is called worse and
    the fastest valid one is recommended with its accuracy said to be unknown."""
    report = measure_arms(
        scan,
        tmp_path / "out",
        ("bf16", "fp16"),
        ratios={"xla": 2.0, "fp16": 0.4, "bf16": 0.6},
        accuracy={"baseline": 0.9, "xla": 0.9, "fp16": 0.6, "bf16": 0.88},
        val_count=200,
    )
    c = report.comparison
    assert c is not None and c.interleaved is not None
    arms = {a.arm: a for a in c.interleaved.arms}
    for a in arms.values():
        assert a.accuracy_ok is None and a.accuracy_kind == "too_early", a.arm
        assert a.accuracy is not None and a.accuracy.kind is AccuracyKind.TOO_EARLY
        assert a.accuracy.steps is not None and a.accuracy.steps > 0
    assert '"worse"' not in json.dumps(c.to_dict())
    assert c.recommended_arm == "fp16"
    rec = c.recommendation
    assert rec is not None and rec.kind is RecommendationKind.ACCURACY_UNKNOWN
    assert rec.accuracy == arms["fp16"].accuracy  # what is not known, said with it


def test_an_arm_that_did_not_engage_is_not_valid(scan: DatasetScan, tmp_path: Path) -> None:
    report = measure_arms(
        scan,
        tmp_path / "out",
        ("bf16",),
        ratios={"xla": 2.0, "bf16": 0.5},
        ignore_policy=["bf16"],
    )
    c = report.comparison
    assert c is not None and c.interleaved is not None
    bf16 = next(a for a in c.interleaved.arms if a.arm == "bf16")
    assert not bf16.valid
    assert bf16.problems[0] == Problem(ProblemKind.WRONG_POLICY, bf16.problems[0].run_id,
                                       asked="mixed_bfloat16", found="float32")
    assert "asked for the mixed_bfloat16 policy but float32 was in effect" in arm_problem(
        bf16.problems[0])
    assert c.recommended_arm is None
    rec = c.recommendation
    assert rec is not None and rec.kind is RecommendationKind.NONE_RECOMMENDABLE
    [passed] = rec.passed_over
    assert (passed.arm, passed.valid, passed.problems) == ("bf16", False, tuple(bf16.problems))
    assert passed.speedup == pytest.approx(2.0)
    assert "NOT VALID" in arm_table(c)[0][3]


def test_an_arm_whose_loss_went_nan_is_flagged(scan: DatasetScan, tmp_path: Path) -> None:
    report = measure_arms(scan, tmp_path / "out", ("fp16",), ratios={"fp16": 0.5}, nan=["fp16"])
    c = report.comparison
    assert c is not None and c.interleaved is not None
    fp16 = next(a for a in c.interleaved.arms if a.arm == "fp16")
    assert fp16.accuracy_ok is False and fp16.nonfinite_losses > 0
    assert c.recommended_arm != "fp16"


def test_an_arm_catches_up_when_it_is_faster_or_cheap_to() -> None:
    def blocks(n: int, seconds: float, steps: int = 2) -> list[BlockEvent]:
        return [BlockEvent(seq=i, steps=steps, seconds=seconds * steps) for i in range(n)]

    def est(ratio: float) -> RatioEstimate:
        return RatioEstimate(ratio, ratio * 0.95, ratio * 1.05, pairs=10, outliers=0)

    base = blocks(40, 0.9)
    # bf16 (faster) 10 rounds behind: always; jit (slower) 30 rounds of 2 × 2 s behind: 120 s,
    # too dear; jit 3 rounds behind: 12 s, within 15 s.
    assert catch_up_steps(
        [base, blocks(30, 0.4), blocks(10, 2.0), blocks(37, 2.0)],
        [est(0.45), est(2.2), est(2.2)],
    ) == [0, 20, 0, 6]
    assert catch_up_steps([base, blocks(40, 2.0)], [est(2.2)]) == [0, 0]


def test_the_ranking_rule() -> None:
    def arm(name: str, ratio: float, half: float = 0.05, **kw: Any) -> ArmResult:
        return ArmResult(
            arm=name,
            variant=name,
            ratio=ratio,
            low=ratio * (1 - half),
            high=ratio * (1 + half),
            pairs=20,
            **kw,
        )

    slower = arm("jit", 2.3, accuracy_ok=True)
    unclear = arm("autocluster", 0.98, accuracy_ok=True)  # interval includes 1
    early = AccuracyVerdict(AccuracyKind.TOO_EARLY, 0.6, 0.9, steps=40)
    fast_unknown = arm("bf16", 0.5, accuracy_ok=None, accuracy=early)
    assert [a.arm for a in ranked([slower, unclear, fast_unknown])] == [
        "bf16",
        "autocluster",
        "jit",
    ]
    rec = recommendation([slower, unclear, fast_unknown])
    assert rec is not None and rec.arm == "bf16"
    assert rec.kind is RecommendationKind.ACCURACY_UNKNOWN and rec.accuracy == early
    assert rec.speedup == pytest.approx(2.0) and rec.adjusted_for == 0  # plain intervals
    assert recommendation([slower, unclear]) == Recommendation(RecommendationKind.NONE_FASTER)
    not_fp16 = Problem(ProblemKind.WRONG_POLICY, "m4", asked="mixed_float16", found="float32")
    invalid = arm("fp16", 0.3, valid=False, problems=[not_fp16])
    rec = recommendation([invalid, fast_unknown])
    assert rec is not None and rec.arm == "bf16"
    [passed] = rec.passed_over
    assert passed == PassedOver("fp16", passed.speedup, False, (not_fp16,), accuracy=None)
    assert passed.speedup == pytest.approx(1 / 0.3)
    assert recommendation([]) is None
    assert recommendation([arm("jit", 2.0, accuracy_ok=True), arm("bf16", 0.5, accuracy_ok=True)]
                          ).kind is RecommendationKind.RECOMMENDED  # type: ignore[union-attr]


def _adjusted(name: str, ratio: float, adj: tuple[float, float], **kw: Any) -> ArmResult:
    return ArmResult(arm=name, variant=name, ratio=ratio, low=adj[0] * 1.01,
                     high=adj[1] * 0.99, adjusted_low=adj[0], adjusted_high=adj[1], pairs=30,
                     accuracy_ok=True, **kw)


def test_overlapping_adjusted_intervals_are_a_tie_and_the_simpler_arm_wins() -> None:
    combo = _adjusted("jit+bf16", 0.48, (0.44, 0.52))
    bf16 = _adjusted("bf16", 0.50, (0.46, 0.54))
    jit = _adjusted("jit", 2.2, (2.1, 2.3))
    rec = recommendation([jit, bf16, combo])
    assert rec is not None and rec.kind is RecommendationKind.TIED and rec.arm == "bf16"
    assert rec.tied == ("jit+bf16", "bf16") and rec.simpler and rec.adjusted_for == 3
    # The interval it was ranked by, on the speed-up scale: 1 / 0.54 to 1 / 0.46.
    assert rec.low == pytest.approx(1 / 0.54) and rec.high == pytest.approx(1 / 0.46)
    # Apart: the faster one wins, however many levers it pulls.
    far = _adjusted("jit+bf16", 0.30, (0.28, 0.32))
    rec = recommendation([jit, bf16, far])
    assert rec is not None and rec.arm == "jit+bf16"
    assert rec.kind is RecommendationKind.RECOMMENDED and rec.tied == ()


def test_an_arm_is_clearly_faster_only_by_its_adjusted_interval() -> None:
    # The plain 95% interval (0.91–0.99) lies below 1; adjusted for 3 arms (0.89–1.01) not.
    lucky = _adjusted("bf16", 0.95, (0.89, 1.01))
    assert lucky.clearly_faster and not lucky.clearly_faster_adjusted
    rec = recommendation([lucky, _adjusted("jit", 2.2, (2.1, 2.3))])
    assert rec is not None and rec.kind is RecommendationKind.NONE_FASTER and rec.arm is None


def test_measured_arms_carry_intervals_adjusted_for_their_number(
    scan: DatasetScan, tmp_path: Path
) -> None:
    report = measure_arms(scan, tmp_path / "out", ("bf16",), ratios={"xla": 2.0, "bf16": 0.5},
                          jitters={"xla": 0.05, "bf16": 0.05})
    c = report.comparison
    assert c is not None and c.interleaved is not None
    for a in c.interleaved.arms:
        assert a.adjusted_low is not None and a.adjusted_high is not None
        # 97.5% for two arms: wider than the plain 95% interval, around the same estimate.
        assert a.adjusted_low <= a.low and a.adjusted_high >= a.high  # type: ignore[operator]
        assert a.adjusted_high - a.adjusted_low > a.high - a.low  # type: ignore[operator]
        assert a.adjusted_low <= a.ratio <= a.adjusted_high  # type: ignore[operator]


def test_the_a_a_check_of_identical_workers_covers_one(scan: DatasetScan, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = measure_arms(scan, out, ("bf16",), check=True, ratios={"xla": 2.0, "bf16": 0.5},
                          jitters={"baseline": 0.05, "check": 0.05, "xla": 0.05, "bf16": 0.05})
    assert [e.run_id for e in report.measure_runs][-1] == "m4-check"
    spec = json.loads((out / "runs" / "m4-check" / "spec.json").read_text())
    assert (spec["xla_mode"], spec["precision"]) == ("off", "float32")  # the baseline's twin
    assert spec["config"]["seed"] == 1  # with the next seed: an accuracy A/A sample too
    c = report.comparison
    assert c is not None and c.interleaved is not None
    # Measured like an arm (every round of the first 8 at least), never ranked as one.
    assert [a.arm for a in c.interleaved.arms] == ["jit", "bf16"]
    k = c.interleaved.check
    assert k is not None and k.pairs >= 8 and k.covers_one
    assert k.ratio == pytest.approx(1.0, abs=0.05)
    assert k.accuracy_kind == "too_early" and k.val_accuracy is not None  # reported, not judged
    saved = json.loads((out / "comparison.json").read_text())["comparison"]["interleaved"]
    assert saved["check"]["covers_one"] is True and saved["check"]["pairs"] == k.pairs
    assert {"ratio", "low", "high", "pairs", "covers_one"} <= set(saved["check"])
    rows = dict(comparison_rows(c))
    assert "it covers 1.00, so no position or order effect was seen" in rows[
        "Instrument check (A/A)"]
    assert "--check" in report.reproduce_command()
    assert comparison_title(report).startswith("XLA and bf16 vs baseline on ")  # the twin is no arm
    # Reopened from its JSON: the same check.
    again = read_json(out / "comparison.json").comparison
    assert again is not None and again.interleaved is not None
    assert again.interleaved.check == k


def test_an_a_a_check_that_misses_one_says_so(scan: DatasetScan, tmp_path: Path) -> None:
    """A twin 6% slower (what a position effect would look like) is caught, through blocks
    that jitter (±2%, every worker): an interval that is a point would catch anything."""
    report = measure_arms(scan, tmp_path / "out", (), check=True,
                          ratios={"xla": 2.0, "check": 1.06},
                          jitters={"baseline": 0.02, "check": 0.02, "xla": 0.02})
    c = report.comparison
    assert c is not None and c.interleaved is not None and c.interleaved.check is not None
    assert not c.interleaved.check.covers_one
    assert "does NOT cover 1.00" in dict(comparison_rows(c))["Instrument check (A/A)"]
    k = c.interleaved.check
    assert k.low is not None and k.high is not None and k.high - k.low > 0.005  # not a point


@pytest.mark.parametrize(
    ("noise", "sd", "tails"), [("normal", 0.15, False), ("heavy tails", 0.25, True)]
)
def test_the_a_a_check_raises_false_alarms_at_its_level(noise: str, sd: float,
                                                        tails: bool) -> None:
    """The production A/A check (`ranking.instrument_check`) over 300 simulated measurements of
    an identical twin, with realistic jitter (and drift and stalls): its 95% interval misses 1
    about 5% of the time (15 of 300). Bounded on both sides: a check that never alarms (too
    wide) or alarms at will (too narrow) fails. Measured here: 24 (normal) and 19 (heavy
    tails) alarms; a twin 6% slower caught 81 and 50 times of 100."""
    from tests.helpers.simulated_workers import Scenario, simulate

    scenario = Scenario(f"jit and an A/A twin, {noise}", (2.2, 1.0), sd=sd, tails=tails,
                        drift=0.08, stall=0.4 if tails else 0.0)
    rng = random.Random(2)
    results = [simulate(scenario, rng, check=True) for _ in range(300)]
    assert all(r.check_covers_one is not None for r in results)
    alarms = sum(r.check_covers_one is False for r in results)
    assert 5 <= alarms <= 30, alarms
    # And the same check catches a twin 6% slower far more often than that.
    slower = Scenario("a twin 6% slower", (2.2, 1.06), sd=sd, tails=tails, drift=0.08)
    caught = sum(simulate(slower, rng, check=True).check_covers_one is False
                 for _ in range(100))
    assert caught >= 30, caught
