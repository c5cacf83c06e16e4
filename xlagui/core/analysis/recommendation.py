"""The recommendation among the arms, as data (`xlagui.core.analysis.ranking.recommendation`
decides it, `xlagui.present.verdicts.recommendation_sentence` says it): which arm, why, and the
faster arms passed over with why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlagui.core.analysis.accuracy import AccuracyVerdict
from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.problems import Problem


class RecommendationKind(StrEnum):
    """What the ranking of the arms concluded (`xlagui.core.analysis.ranking.recommendation`)."""

    RECOMMENDED = "recommended"  # the fastest clearly faster arm that learns as well
    TIED = "tied"  # several arms' adjusted intervals overlap: the simplest (or fastest) of them
    ACCURACY_UNKNOWN = "accuracy_unknown"  # the fastest, but whether it learns as well is unknown
    NONE_FASTER = "none_faster"  # no arm measured was clearly faster than the baseline
    NONE_RECOMMENDABLE = "none_recommendable"  # some were, but none of them can be recommended


@dataclass(frozen=True)
class PassedOver:
    """A clearly faster arm that was not recommended, and why: its problems when it did not
    engage as asked (`valid` false), else its accuracy verdict (worse, or a loss not finite)."""

    arm: str
    speedup: float  # baseline ÷ arm step time
    valid: bool = True
    problems: tuple[Problem, ...] = ()
    accuracy: AccuracyVerdict | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PassedOver:
        acc = d.get("accuracy")
        return cls(arm=d["arm"], speedup=d["speedup"], valid=d.get("valid", True),
                   problems=tuple(Problem.from_saved(p) for p in d.get("problems") or ()),
                   accuracy=AccuracyVerdict.from_dict(acc) if acc is not None else None)


@dataclass(frozen=True)
class Recommendation:
    """`comparison.recommendation`: the arm to recommend (None: none), why (`kind`), its
    speed-up with the interval it was ranked by (as speed-ups; Bonferroni-adjusted for
    `adjusted_for` arms, 0 when it is the plain 95% interval), the arms it tied with
    (`tied`, fastest first, the pick among them; `simpler`: it pulls fewer levers than the
    others, else it is the fastest estimate), and the faster arms passed over."""

    kind: RecommendationKind
    arm: str | None = None
    speedup: float | None = None
    low: float | None = None
    high: float | None = None
    adjusted_for: int = 0
    tied: tuple[str, ...] = ()
    simpler: bool = False
    accuracy: AccuracyVerdict | None = None  # the pick's, said when it is not known
    passed_over: tuple[PassedOver, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Recommendation:
        acc = d.get("accuracy")
        return cls(
            kind=RecommendationKind(d["kind"]),
            arm=d.get("arm"),
            speedup=d.get("speedup"),
            low=d.get("low"),
            high=d.get("high"),
            adjusted_for=int(d.get("adjusted_for", 0)),
            tied=tuple(d.get("tied") or ()),
            simpler=bool(d.get("simpler", False)),
            accuracy=AccuracyVerdict.from_dict(acc) if acc is not None else None,
            passed_over=tuple(PassedOver.from_dict(p) for p in d.get("passed_over") or ()),
        )
