"""A wording snapshot's corpus made fresh by this code: each saved comparison of SRC loaded,
recomputed from its runs' events and saved into OUT as this code saves it.

    python bench/snapshot_resave.py OUT SRC [SRC ...]

The snapshot (`bench/snapshot_words.py`) reopens comparisons as they were saved, so a corpus
saved by an older version shows its verdicts, problems and notes as that version kept them
(sentences, before they were data). To compare how two versions word the comparisons they make
themselves, re-save the corpus with each (this script runs on old code too: it finds the CPU's
flags where either keeps them) and snapshot each version on its own copy:

    PYTHONPATH=OLD python OLD/bench/snapshot_resave.py /tmp/fresh-old /work/golden-corpus
    PYTHONPATH=NEW python bench/snapshot_resave.py /tmp/fresh-new /work/golden-corpus
    (each version's snapshot_words.py --corpus on its copy; then snapshot_diff.py)

The CPU's flags are empty, as the snapshot's window has them, so the arms' hardware notes do
not depend on the machine.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ["TZ"] = "UTC"
time.tzset()
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def no_cpu_flags() -> None:
    """The CPU's flags read as none, wherever this version keeps the reader."""
    try:
        from xlagui.core.machine import cpu as home
    except ImportError:  # before issue 28 they were read in core/protocol/arms.py
        from xlagui.core.protocol import arms as home  # type: ignore[no-redef]
    home.cpu_flags = lambda *_a, **_k: frozenset()


def resave(out: Path, sources: list[Path]) -> int:
    from xlagui.core.results import history

    no_cpu_flags()
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for src in sources:
        for folder in sorted(src.iterdir()):
            if not (folder / "comparison.json").is_file():
                continue
            report = history.load(folder)
            report.recompute()
            history.save(report, out / folder.name)
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    count = resave(Path(args[0]), [Path(a) for a in args[1:]])
    print(f"{count} comparisons saved in {args[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
