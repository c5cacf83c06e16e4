"""What a speed-up was measured on, in words, from what the core keeps as data: the same
words the core wrote before it kept them as data (a comparison saved then keeps its own)."""

from __future__ import annotations

from tests.core.analysis.test_stats import record
from xlagui.core.analysis.pairs import InterleavedSummary
from xlagui.core.analysis.stats import Comparison, Interval, compare_runs, interleaved_speedup
from xlagui.present.intervals import block_words, interval_method


def _interleaved(low: float | None = 0.45, high: float | None = 0.55, pairs: int = 12,
                 baseline_block_steps: int = 0) -> InterleavedSummary:
    return InterleavedSummary(ratio=0.5, low=low, high=high, pairs=pairs, block_steps=4,
                              baseline_block_steps=baseline_block_steps)


def test_the_blocks_in_words() -> None:
    assert block_words(_interleaved()) == "4-step blocks"
    assert block_words(_interleaved(baseline_block_steps=4)) == "4-step blocks"
    assert block_words(_interleaved(baseline_block_steps=2)) == (
        "blocks of 2 (baseline) and 4 steps"
    )


def test_an_interleaved_speedup_says_its_pairs_and_blocks() -> None:
    i = _interleaved()
    c = Comparison(speedup=interleaved_speedup(i), interleaved=i)
    assert c.speedup is not None
    assert interval_method(c, c.speedup) == "from 12 interleaved pairs of 4-step blocks, 95% CI"
    few = _interleaved(low=None, high=None, pairs=3)
    c = Comparison(speedup=interleaved_speedup(few), interleaved=few)
    assert c.speedup is not None
    assert interval_method(c, c.speedup) == (
        "from 3 interleaved pairs of 4-step blocks (too few pairs for an interval)"
    )


def test_an_epoch_speedup_says_its_repeats_or_its_epochs() -> None:
    repeated = compare_runs([
        record("baseline", (3, 2, 2), repeat=1), record("xla", (5, 1, 1), repeat=1),
        record("baseline", (3, 2.2, 2.2), repeat=2), record("xla", (5, 1.1, 1.1), repeat=2),
    ])
    assert repeated.speedup is not None
    assert interval_method(repeated, repeated.speedup) == "95% CI across 2 repeats"
    epochs = compare_runs([record("baseline", (3, 2, 2.2, 1.8)), record("xla", (9, 1, 1.1, 0.9))])
    assert epochs.speedup is not None
    assert interval_method(epochs, epochs.speedup) == "95% CI across epochs after the first"
    one = compare_runs([record("baseline", (3, 2)), record("xla", (9, 1))])
    assert one.speedup is not None and one.speedup.low is None
    assert interval_method(one, one.speedup) == (
        "95% CI across epochs after the first (too few values for an interval)"
    )


def test_a_comparison_saved_in_words_keeps_them() -> None:
    saved = Comparison.from_dict({"speedup": {"value": 2.0, "low": 1.8, "high": 2.2,
                                              "method": "95% CI across 3 repeats"}})
    assert saved.speedup is not None
    assert interval_method(saved, saved.speedup) == "95% CI across 3 repeats"
    assert interval_method(Comparison(), Interval(2.0, 1.8, 2.2, "as it was")) == "as it was"


def test_one_pair_is_said_in_the_singular() -> None:
    """"1 pair", never "1 pairs": every sentence that counts the measurement's pairs."""
    from xlagui.core.analysis.pairs import InterleavedSummary
    from xlagui.core.analysis.stats import Comparison
    from xlagui.core.protocol.identity import StopReason
    from xlagui.present.format import measured_on, measurement_end
    from xlagui.present.intervals import pairs_noun

    assert (pairs_noun(1), pairs_noun(0), pairs_noun(2)) == ("pair", "pairs", "pairs")
    for stopped_by in ("", StopReason.TARGET, StopReason.BUDGET, StopReason.STOPPED,
                       StopReason.ERROR):
        one = InterleavedSummary(ratio=2.0, pairs=1, outliers=1, stopped_by=stopped_by,
                                 block_steps=1, baseline_block_steps=1)
        c = Comparison(interleaved=one)
        said = measurement_end(c) + " " + measured_on(c)
        assert "1 pair" in said and "1 pairs" not in said, said
        assert "1 outlier pair flagged" in measurement_end(c)
        two = InterleavedSummary(ratio=2.0, pairs=2, stopped_by=stopped_by, block_steps=1,
                                 baseline_block_steps=1)
        assert "2 pairs" in measurement_end(Comparison(interleaved=two))
