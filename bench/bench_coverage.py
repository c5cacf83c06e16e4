"""Coverage of the real stopping loop: does the final 95% interval hold the true ratio?

    python bench/bench_coverage.py [--runs 2000] [--write]

Runs `xlagui.core.measure.interleave.measure_interleaved` itself (its round allocation, Williams
orders, block sizing, estimates and stopping rule, which stops at the first look whose interval
is within ±3%) against simulated workers with a known true ratio, on a fake clock
(`tests/helpers/simulated_workers.py`: the noise measured here, with heavy tails, skew, drift
and stalls), for 1, 2 and 3 arms. Prints each scenario's coverage (per arm, the worst arm; all
arms at once with the plain and the Bonferroni-adjusted intervals), the median pairs,
half-width and measuring seconds, and how often the target stopped it; `--write` puts the table
in BENCHMARKS.md ("Coverage of the stopping loop").
"""

from __future__ import annotations

import argparse
import time

from _common import add_write, load_average, publish, section_text

from tests.helpers.simulated_workers import SCENARIOS, coverage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated measurements each")
    parser.add_argument("--seed", type=int, default=0)
    add_write(parser)
    args = parser.parse_args()
    load = load_average()
    lines = [
        "## Coverage of the stopping loop (issue 19), simulated",
        "",
        f"`python bench/bench_coverage.py --runs {args.runs}`: {args.runs} simulated "
        "measurements per scenario through the real loop (`measure_interleaved`: allocation, "
        "Williams orders, stop at the first look within ±3% after 8 pairs, or the budget of "
        "120 s + 60 s per further arm), fake clock, known true ratios. `sd`: one pair's log "
        "ratio sd; tails: t(3); skew: a log-normal shock; drift: ±8% swing and a random walk "
        "common to all workers; stalls: +0.4 s on one block in 20 at random.",
        "",
        "| scenario | worst arm's coverage | all arms (plain) | all arms (Bonferroni) | "
        "stopped by target | median pairs | median ± | median s | sim. time |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in SCENARIOS:
        t0 = time.perf_counter()
        c = coverage(s, args.runs, seed=args.seed)
        took = time.perf_counter() - t0
        lines.append(
            f"| {s.name} (sd {s.sd}) | {c['min_arm_coverage']:.1%} | {c['all_arms']:.1%} | "
            f"{c['all_arms_adjusted']:.1%} | {c['target_share']:.0%} | "
            f"{c['median_pairs']:.0f} | ±{c['median_half_width']:.1%} | "
            f"{c['median_seconds']:.0f} | {took:.0f} s |"
        )
        print(lines[-1], flush=True)
    publish("coverage", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
