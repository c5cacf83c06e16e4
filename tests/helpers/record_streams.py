"""Record the event streams that the tests replay, from real worker runs.

    python tests/helpers/record_streams.py

(from the repository root; it trains on the CPU for about a minute). It writes
tests/helpers/recorded/baseline.jsonl (XLA off) and tests/helpers/recorded/jit.jsonl
(`jit_compile=True`): each is the runner's `events.jsonl` of one real run, every line exactly as
the worker sent it. The runs train the article's CNN at 48 px, batch 8, 3 epochs, seed 0, on a
tiny generated dataset (`tests/helpers/datasets.tiny_split_dataset`: 2 classes × 16 training
and 4 test images). Run it again whenever the worker's events or summary change; the real-worker
test `tests/core/worker/test_child.py` fails when the recording no longer has the worker's fields.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "recorded"
# xla_mode → file; the XLA side of the tests' comparisons is a jit run.
RECORDINGS = {"off": "baseline.jsonl", "jit": "jit.jsonl"}
CONFIG = {"epochs": 3, "batch_size": 8, "image_size": 48, "seed": 0, "device": "cpu"}


def record(out_dir: Path = RECORDED) -> list[Path]:
    """Run the real worker once per recording and copy its event stream to `out_dir`."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.helpers.datasets import tiny_split_dataset
    from xlagui.core.data.scan import scan_dataset
    from xlagui.core.measure.runner import run_worker, samples_from_scan
    from xlagui.core.protocol.config import RunConfig, XlaMode
    from xlagui.core.protocol.spec import RunSpec
    from xlagui.core.protocol.task import TaskState

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="xlagui-record-") as tmp:
        work = Path(tmp)
        names, train, val = samples_from_scan(scan_dataset(tiny_split_dataset(work / "data")))
        for mode, filename in RECORDINGS.items():
            xla_mode = XlaMode(mode)
            variant = "baseline" if xla_mode is XlaMode.OFF else "xla"
            spec = RunSpec(
                f"01-{variant}-r1",
                variant,
                xla_mode,
                RunConfig(**CONFIG),  # type: ignore[arg-type]
                names,
                train,
                val,
                work / f"run-{variant}",
            )
            result = run_worker(spec, TaskState())
            if result.status != "finished":
                raise SystemExit(f"the {mode} run did not finish: {result.error}")
            target = out_dir / filename
            shutil.copyfile(spec.run_dir / "events.jsonl", target)
            written.append(target)
            print(f"{target.relative_to(ROOT)}: {len(result.events)} events", flush=True)
    return written


if __name__ == "__main__":
    record()
