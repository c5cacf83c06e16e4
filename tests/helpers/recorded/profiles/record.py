"""Re-record the CPU profile fixtures of this folder (needs TensorFlow; about a minute):

    PYTHONPATH=$PWD python tests/helpers/recorded/profiles/record.py

The article's CNN at 48 px, batch 32, 5 warm steps, profiled in a real worker per side
(`tests/helpers/profiling.py`), on the drawn dataset of `tiny_split_dataset`: each side's reduced
trace (`cnn48-baseline.trace.json.gz`, `cnn48-xla.trace.json.gz`), the profile the worker
attributed (`…profile.json`), and the XLA side's train module, optimized and before
optimization (`cnn48-xla.after.txt.gz`, `cnn48-xla.before.txt.gz`). `make_gpu.py` writes the
hand-made GPU trace.
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from pathlib import Path

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.profiling import profile_arm
from xlagui.core.protocol.config import RunConfig

HERE = Path(__file__).resolve().parent
STEPS = 5


def _gzip(src: Path, dest: Path) -> None:
    with src.open("rb") as f, dest.open("wb") as raw, \
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="record_profiles_"))
    data = tiny_split_dataset(tmp / "d", train=32, test=2)
    config = RunConfig(batch_size=32, image_size=48, quick=True, seed=1)
    for variant in ("baseline", "xla"):
        out = tmp / variant
        prof = profile_arm(data, config, variant, out, STEPS)
        print(f"{variant}: step {prof.step_seconds:.4f} s, coverage {prof.coverage:.3f}")
        _gzip(out / "trace.json", HERE / f"cnn48-{variant}.trace.json.gz")
        shutil.copy(out / "profile.json", HERE / f"cnn48-{variant}.profile.json")
        if variant == "xla":
            dump = next(out.glob("runs/**/xla"))
            for kind, pattern in (("after", "*one_step*.cpu_after_optimizations.txt"),
                                  ("before", "*one_step*.before_optimizations.txt")):
                _gzip(next(dump.glob(pattern)), HERE / f"cnn48-xla.{kind}.txt.gz")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
