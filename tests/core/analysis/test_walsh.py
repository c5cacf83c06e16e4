"""Walsh averages at chosen ranks, found without forming them, are the very floats sorting all
of them gives."""

from __future__ import annotations

import math
import random

import pytest

from xlagui.core.analysis import pairs, walsh


def values(kind: str, n: int, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    if kind == "spread":
        return [rng.gauss(-0.8, 0.1) for _ in range(n)]
    if kind == "few values":  # ties everywhere: rounds of identical block times
        return [math.log(rng.choice([0.5, 0.5, 0.6, 0.75])) for _ in range(n)]
    if kind == "all equal":
        return [math.log(0.45)] * n
    if kind == "stalls":  # a far tail of large values
        return [rng.gauss(0, 0.05) + (rng.random() < 0.1) * 5.0 for _ in range(n)]
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["spread", "few values", "all equal", "stalls"])
@pytest.mark.parametrize("n", [7, 150, 600])
def test_every_rank_asked_for_is_the_sorted_average_there(kind: str, n: int) -> None:
    xs = values(kind, n)
    sorted_all = pairs.walsh_averages(xs)
    m = len(sorted_all)
    assert m > walsh.FORM_AT_MOST or n < 100  # the larger sizes search, not form
    selector = walsh.WalshSelector(keep_all_up_to=0)  # searched for, never all kept
    for x in xs:
        selector.add(x)
    rng = random.Random(n)
    ranks = sorted({1, 2, m // 2, m // 2 + 1, m - 1, m, *(rng.randint(1, m) for _ in range(40))})
    for k in ranks:
        assert selector.at([k], "any")[0] == sorted_all[k - 1], k
    # Several at once, and the same target asked again from where it was bounded.
    got = selector.at([m // 3, m // 3 + 1, m // 3 + 5], "any")
    assert got == list(sorted_all[[m // 3 - 1, m // 3, m // 3 + 4]])
    with pytest.raises(ValueError, match="outside"):
        selector.at([m + 1], "any")


@pytest.mark.parametrize("keep_all_up_to", [0, walsh.KEEP_ALL_UP_TO])
def test_a_target_followed_round_by_round_stays_exact(keep_all_up_to: int) -> None:
    """As the running estimate uses it: one value more per round, the same targets each time,
    each starting from where it was bounded the round before (a burst of identical rounds and
    a jump in level move the targets far), and past the count up to which all are kept."""
    rng = random.Random(5)
    xs = [rng.gauss(0, 0.1) for _ in range(120)] + [0.02] * 40
    xs += [rng.gauss(0.4, 0.1) for _ in range(walsh.KEEP_ALL_UP_TO - 100)]
    selector = walsh.WalshSelector(keep_all_up_to=keep_all_up_to)
    checked = 0
    for n, x in enumerate(xs, start=1):
        selector.add(x)
        m = n * (n + 1) // 2
        targets = {"low": max(1, m // 10), "centre": m // 2 + 1, "high": m - m // 10}
        got = {target: selector.at([k], target)[0] for target, k in targets.items()}
        if (n % 13 and n < len(xs) - 2 and abs(n - walsh.KEEP_ALL_UP_TO) > 2
                and not 155 <= n <= 175):  # the end of the burst, the jump
            continue
        checked += 1
        sorted_all = pairs.walsh_averages(xs[:n])
        for target, k in targets.items():
            assert got[target] == sorted_all[k - 1], (n, target)
    assert checked > 70
