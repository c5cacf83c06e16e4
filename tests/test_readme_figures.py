"""Every figure in the README comes from BENCHMARKS.md (issue 31): each "N×", "N s" and "N ms"
the README states appears, written the same way, in BENCHMARKS.md, where its settings and its
command are. Sizes written with × ("150×150", "5×5") are not figures."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A number followed by ×, " s" or " ms"; not part of a size ("150×150"), a version or a word.
FIGURE = re.compile(r"(?<![\w.×/])(\d+(?:[.,]\d+)?)(×(?!\d)| s\b| ms\b)")


def figures(text: str) -> list[tuple[int, str]]:
    """(line number, figure) of every figure in `text`."""
    return [(number, m.group(0)) for number, line in enumerate(text.splitlines(), 1)
            for m in FIGURE.finditer(line)]


def unsourced(readme: str, benchmarks: str) -> list[tuple[int, str]]:
    """The README's figures that BENCHMARKS.md does not hold."""
    held = {figure for _, figure in figures(benchmarks)}
    return [(number, figure) for number, figure in figures(readme) if figure not in held]


def test_every_figure_in_the_readme_is_in_benchmarks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    benchmarks = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert len(figures(readme)) >= 10  # the README does state figures: the rule has work to do
    missing = unsourced(readme, benchmarks)
    assert missing == [], (
        "README figures not in BENCHMARKS.md (line, figure): "
        + ", ".join(f"{n}: {f}" for n, f in missing))


def test_a_changed_figure_is_caught() -> None:
    """Change any one of the README's figures and the check names it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    benchmarks = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    found = figures(readme)
    for number, figure in found[:: max(1, len(found) // 8)]:  # a spread of them
        lines = readme.splitlines()
        changed = figure.replace(figure.split("×")[0].split(" ")[0], "987.6", 1)
        lines[number - 1] = lines[number - 1].replace(figure, changed, 1)
        assert (number, changed) in unsourced("\n".join(lines), benchmarks), figure


def test_what_counts_as_a_figure() -> None:
    said = "XLA 2.35× slower in 156 s and 40 ms; images of 150×150, 5×5 kernels, v2.21, 3.10×"
    assert [f for _, f in figures(said)] == ["2.35×", "156 s", "40 ms", "3.10×"]
