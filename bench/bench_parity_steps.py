"""What a parity step costs, by how its batch reaches Keras' train function: a new dataset a
step (what `core/worker/parity.py` did until this benchmark: each call's iterator held its
batch as a constant) against one iterator over all the steps' batches (what it does now where a
call runs one step). The same model, batches and train function; the per-step medians and
their ratio, interleaved in rounds so that the machine's drift hits both alike. The why at
150 px runs 100 such steps (the baseline's 20 and its three references' 60, the XLA side's 20).
Run: `python bench/bench_parity_steps.py [--image-size 150 --batch 64 --rounds 4] [--write]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import _common  # puts the repository on sys.path

from xlagui.core.model.build import build_compiled
from xlagui.core.protocol.config import ModelChoice


def _per_dataset(tf: Any, model: Any, xs: Any, ys: Any) -> float:
    start = time.perf_counter()
    for x, y in zip(xs, ys, strict=True):
        float(model.train_function(iter(tf.data.Dataset.from_tensors((x, y))))["loss"])
    return (time.perf_counter() - start) / len(xs)


def _one_iterator(tf: Any, model: Any, xs: Any, ys: Any) -> float:
    start = time.perf_counter()
    shared = iter(tf.data.Dataset.from_tensor_slices((xs, ys)))
    for _ in range(len(xs)):
        float(model.train_function(shared)["loss"])
    return (time.perf_counter() - start) / len(xs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    _common.add_image_size_and_batch(parser)
    parser.add_argument("--rounds", type=int, default=4, help="rounds of each way (4)")
    parser.add_argument("--steps", type=int, default=3, help="steps of a way in a round (3)")
    parser.add_argument("--tag", default="run1", help="the section's name in BENCHMARKS.md")
    _common.add_write(parser)
    args = parser.parse_args()

    import keras
    import numpy as np
    import tensorflow as tf

    load = _common.load_average()
    keras.utils.set_random_seed(0)
    model = build_compiled(ModelChoice(), args.image_size, 2, 0, False).model
    rng = np.random.default_rng(0)
    shape = (args.steps, args.batch, args.image_size, args.image_size, 3)
    xs = rng.random(shape, dtype="float32")
    ys = (rng.random((args.steps, args.batch)) < 0.5).astype("float32")
    model.make_train_function()
    _one_iterator(tf, model, xs, ys)  # compiles; both ways then run the traced function
    ways = {"a new dataset a step": _per_dataset, "one iterator": _one_iterator}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for r in range(args.rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))  # each way first as often
        for name in order:
            times[name].append(ways[name](tf, model, xs, ys))
            print(f"round {r + 1}: {name} {times[name][-1]:.3f} s a step", flush=True)
    old, new = (statistics.median(times[name]) for name in ways)
    lines = [
        f"`python bench/bench_parity_steps.py --image-size {args.image_size} --batch "
        f"{args.batch} --rounds {args.rounds} --tag {args.tag}`: the article's CNN, XLA off, "
        f"{args.steps} steps of each way a round, the ways alternating. Nothing else ran.",
        "",
        "| how a parity step's batch reaches the train function | step, median of rounds | "
        "rounds |",
        "|---|---|---|",
        *(f"| {name} | {statistics.median(times[name]):.3f} s | "
          f"{', '.join(f'{t:.3f}' for t in times[name])} |" for name in ways),
        "",
        f"A new dataset a step costs {old / new:.2f}× the step of one iterator; the why at "
        f"{args.image_size} px runs 100 parity steps, so about {100 * (old - new):.0f} s.",
    ]
    text = _common.section_text(lines, load)
    _common.publish(f"parity-steps-{args.image_size}-{args.tag}", "## What a parity step costs, "
                    f"by how its batch comes (issue 36), {args.image_size} px, {args.tag}\n\n"
                    + text, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
