"""Verdicts of the wording snapshot (`bench/snapshot_words.py`) beyond its corpus: the
recommendation, arms table and bars of random sets of arms (seeded), and a grid of comparisons
that crosses every kind of speed-up, break-even, accuracy verdict and total for the verdict
sentences."""

from __future__ import annotations

import itertools
import math
import random

from _snapshot_common import Texts, attempt, plain

from xlagui.core.analysis.accuracy import AccuracyKind, AccuracyVerdict
from xlagui.core.analysis.pairs import ArmResult, InterleavedSummary
from xlagui.core.analysis.stats import (
    BREAK_EVEN_KINDS,
    NO_SPEED,
    NOT_COMPARED,
    SPEED_MEASURED,
    BreakEven,
    Comparison,
    Interval,
)
from xlagui.core.protocol.problems import Problem, ProblemKind

XLA_SIDES = ("jit", "autocluster")
OTHERS = ("bf16", "fp16", "jit+bf16", "jit+fp16", "autocluster+bf16")
# Problems are data: the first a kind `present/problems.py` words, the second kept in words
# (as an older comparison keeps them). Said: "asked for the mixed_bfloat16 policy but float32
# was in effect", "XLA did not compile: no HLO module in the run's dump".
PROBLEMS = (Problem(ProblemKind.WRONG_POLICY, asked="mixed_bfloat16", found="float32"),
            Problem(ProblemKind.IN_WORDS, words="XLA did not compile: no HLO module in the "
                    "run's dump"))
FAILED = Problem(ProblemKind.IN_WORDS, words="the XLA run failed: out of memory")


def _verdict(rng: random.Random) -> AccuracyVerdict | None:
    """An accuracy verdict of a random kind, with the figures that kind is said with (as
    `core/analysis/accuracy.py` makes them)."""
    kind = rng.choice([None, *AccuracyKind])
    base = round(rng.uniform(0.6, 0.95), 3)
    images = rng.choice([100, 400])
    if kind in (AccuracyKind.SAME, AccuracyKind.WORSE, AccuracyKind.BETTER):
        noise = round(rng.uniform(0.01, 0.06), 3)
        diff = {AccuracyKind.SAME: round(rng.uniform(-noise, noise) * 0.9, 3),
                AccuracyKind.WORSE: -round(noise * rng.uniform(1.2, 3), 3),
                AccuracyKind.BETTER: round(noise * rng.uniform(1.2, 3), 3)}[kind]
        seeds = rng.choice([2, 3])
        training = rng.random() < 0.5
        return AccuracyVerdict(kind, arm=round(base + diff, 3), baseline=base, images=images,
                               seeds=seeds, difference=diff, noise=noise,
                               epochs=3 if training else None, steps=None if training else 40,
                               arm_runs=seeds)
    arm = round(rng.uniform(0.5, 0.95), 3)
    return {
        None: None,
        AccuracyKind.ONE_SEED: AccuracyVerdict(kind, arm, base, images=images, seeds=1,
                                               epochs=3, arm_runs=1,
                                               p_value=rng.choice([None, 0.03, 0.4])),
        AccuracyKind.TOO_EARLY: AccuracyVerdict(kind, arm, base, images=images, steps=40,
                                                arm_runs=1),
        AccuracyKind.AT_CHANCE: AccuracyVerdict(kind, arm, 0.51, images=images, epochs=2,
                                                chance=0.5),
        AccuracyKind.NONFINITE: AccuracyVerdict(kind, arm=0.5, nonfinite=rng.randint(1, 4)),
        AccuracyKind.UNEQUAL_STEPS: AccuracyVerdict(kind, arm, base, steps=34),
        AccuracyKind.NO_DATA: AccuracyVerdict(kind),
    }[kind]


def random_arm(rng: random.Random, name: str, variant: str) -> ArmResult:
    """An arm with a random speed, interval, validity and accuracy verdict."""
    ratio = round(math.exp(rng.uniform(-1.3, 1.3)), 4)
    width = rng.choice((0.01, 0.04, 0.1, 0.3))
    plain_interval = rng.random() > 0.1  # else only the adjusted one is missing
    valid = rng.random() > 0.15
    accuracy = _verdict(rng)
    return ArmResult(
        arm=name, variant=variant, ratio=ratio,
        low=round(ratio * math.exp(-width), 4), high=round(ratio * math.exp(width), 4),
        pairs=rng.randint(2, 90), half_width=width,
        adjusted_low=round(ratio * math.exp(-1.25 * width), 4) if plain_interval else None,
        adjusted_high=round(ratio * math.exp(1.25 * width), 4) if plain_interval else None,
        first_step_seconds=round(rng.uniform(0.5, 9), 2), steady_step_seconds=0.2 * ratio,
        compile_seconds=rng.choice((None, 0.4, 3.5)), valid=valid,
        problems=[] if valid else [rng.choice(PROBLEMS)],
        note=rng.choice(("", "bfloat16 runs natively on GPUs from compute capability 8.0 "
                             "(Ampere) on")),
        accuracy=accuracy, accuracy_ok=accuracy.ok if accuracy is not None else None,
        accuracy_kind=accuracy.kind.value if accuracy is not None else "",
        nonfinite_losses=accuracy.nonfinite if accuracy is not None else 0,
    )


def arm_set(rng: random.Random) -> list[ArmResult]:
    """The XLA side, then up to three other arms."""
    others = rng.sample(OTHERS, rng.randint(0, 3))
    return [random_arm(rng, rng.choice(XLA_SIDES), "xla"),
            *(random_arm(rng, name, name) for name in others)]


def words_of_arms(arms: list[ArmResult]) -> Texts:
    from xlagui.core.analysis.ranking import recommendation
    from xlagui.present import format as fmt
    from xlagui.present.verdicts import adjusted_interval, recommendation_sentence

    rec = recommendation(arms)
    head = arms[0]
    c = Comparison(speedup=Interval(1 / head.ratio, None, None, "m") if head.ratio else None,
                   interleaved=InterleavedSummary(ratio=head.ratio, low=head.low,
                                                  high=head.high, pairs=head.pairs,
                                                  stopped_by="budget", arms=arms),
                   recommendation=rec, recommended_arm=rec.arm if rec else None,
                   verdict_kind=SPEED_MEASURED)
    return {"recommendation": recommendation_sentence(rec),
            "interval": adjusted_interval(rec) if rec is not None and rec.low is not None
            else None,
            "table": plain(fmt.arm_table(c)), "bars": [b.caption for b in fmt.arm_bars(c)]}


def random_arm_sets(count: int = 3000, seed: int = 28) -> Texts:
    rng = random.Random(seed)
    return [attempt(words_of_arms, arm_set(rng)) for _ in range(count)]


SPEEDUPS = {
    "none": None, "faster": Interval(2.0, 1.8, 2.2, "interleaved pairs"),
    "slower": Interval(10 / 21, 0.45, 0.5, "interleaved pairs"),
    "tie": Interval(1.05, 0.9, 1.2, "interleaved pairs"),
    "single": Interval(1.25, None, None, "a single measurement"),
}
BREAK_EVENS = {"none": None, **{k: BreakEven(k, 7 if k in ("caught_up", "extrapolated")
                                             else None, 3) for k in BREAK_EVEN_KINDS}}
COMPILES = (None, 0.0, 6.0, 27.0)
TOTALS = (None, 1.4, 0.7, 1.0)


def verdict_words(c: Comparison) -> Texts:
    from xlagui.present import format as fmt
    from xlagui.present.verdicts import short_verdict, speed_sentence, verdict_sentence

    return [verdict_sentence(c), short_verdict(c), speed_sentence(c),
            plain(fmt.comparison_rows(c))]


def verdict_grid() -> Texts:
    """Verdict sentences, short verdicts and rows over the kinds they are said from."""
    out: dict[str, Texts] = {}
    trained = {"baseline": 1, "xla": 1}
    for (s, speed), (b, be), comp, total in itertools.product(
            SPEEDUPS.items(), BREAK_EVENS.items(), COMPILES, TOTALS):
        c = Comparison(speedup=speed, runs_compared=dict(trained), break_even=be,
                       extra_compile_seconds=comp, total_time_ratio=total,
                       verdict_kind=SPEED_MEASURED if speed else NO_SPEED)
        out[f"{s}, break-even {b}, compile {comp}, total {total}"] = attempt(verdict_words, c)
    rng = random.Random(7)
    for (s, speed), valid in itertools.product(SPEEDUPS.items(), (True, False)):
        for n in range(12):
            verdict = _verdict(rng)
            c = Comparison(speedup=speed, runs_compared=dict(trained), accuracy=verdict,
                           accuracy_kind=verdict.kind.value if verdict else "",
                           accuracy_differs=bool(verdict and verdict.differs), valid=valid,
                           problems=[] if valid else list(PROBLEMS),
                           verdict_kind=SPEED_MEASURED if speed else NO_SPEED)
            out[f"{s}, valid {valid}, accuracy {n}"] = attempt(verdict_words, c)
    for runs, problems in itertools.product(({}, {"baseline": 1}, {"xla": 2}),
                                            ([], [FAILED])):
        c = Comparison(runs_compared=runs, problems=problems, verdict_kind=NOT_COMPARED)
        named = [p.words for p in problems]  # the key as it was when problems were words
        out[f"not compared, runs {runs}, problems {named}"] = attempt(verdict_words, c)
    return out
