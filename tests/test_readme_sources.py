"""Every figure in the README has a source (issue 40): each number with a unit (×, %, s, ms, GB,
MB, minutes) the README states is in the BENCHMARKS.md section named beside it, written the
same way, where its machine, load, date and command are. Beside it means in the same paragraph
(`BENCHMARKS.md, "Section title"`) or, in a table whose header names BENCHMARKS.md, in the
same row ("Section title"); a title names every section whose heading starts with it.

Not figures: what is in code (`--budget 120`, a command), sizes written with × ("150×150"),
and the interval's level ("95% interval"). The README's first screen is checked too: the
question, the two commands, a picture and what you get, in its first 40 lines."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURE = re.compile(
    r"(?<![\w.×/–-])[±+−]?\d+(?:[.,]\d+)?(?:–\d+(?:[.,]\d+)?)?"
    r"(?:×(?!\d)|%|\s(?:s|ms|GB|MB|min|minutes)\b)")
LEVEL = re.compile(r"\b\d+% (?:interval|CI|confidence)")
PROSE_SOURCE = re.compile(r'BENCHMARKS\.md, "([^"]+)"')
ROW_SOURCE = re.compile(r'"([^"]+)"')


def without_code(text: str) -> str:
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)  # a picture's words are its caption
    return re.sub(r"\]\([^)]*\)", "]", text)


def blocks(readme: str) -> list[tuple[int, str, list[str]]]:
    """(first line, text, cited section titles) of every paragraph, list item and table row
    outside code blocks."""
    found: list[tuple[int, str, list[str]]] = []
    lines = re.sub(r"(?ms)^```.*?^```", lambda m: "\n" * m.group(0).count("\n"),
                   readme).splitlines()
    header = ""
    start, para = 0, []
    for number, line in enumerate([*lines, ""], 1):
        if line.startswith("|"):
            if not header:
                header = line
            elif not set(line) <= set("|-: "):
                cited = ROW_SOURCE.findall(line) if "BENCHMARKS.md" in header else []
                found.append((number, line, cited))
            continue
        header = ""
        if line.strip():
            start, para = (start or number), [*para, line]
            continue
        if para:
            text = "\n".join(para)
            found.append((start, text, PROSE_SOURCE.findall(text)))
        start, para = 0, []
    return found


def sections(benchmarks: str) -> dict[str, str]:
    parts = re.split(r"(?m)^(?=## )", benchmarks)
    return {part.splitlines()[0][3:].strip(): part for part in parts[1:]}


def figures(text: str) -> list[str]:
    plain = LEVEL.sub(" ", without_code(text))
    return [m.group(0) for m in FIGURE.finditer(plain)]


def unsourced(readme: str, benchmarks: str) -> list[str]:
    """"line: figure (why)" for every README figure not in the section named beside it."""
    held = sections(benchmarks)
    missing = []
    for number, text, cited in blocks(readme):
        cited = [" ".join(c.split()) for c in cited]  # a title may wrap over two lines
        named = [body for title, body in held.items() for c in cited if title.startswith(c)]
        for figure in figures(text):
            if not cited:
                missing.append(f"{number}: {figure} (no section named beside it)")
            elif not named:
                missing.append(f"{number}: {figure} (no section {cited} in BENCHMARKS.md)")
            elif not any(figure in body for body in named):
                missing.append(f"{number}: {figure} (not in {cited})")
    return missing


def read() -> tuple[str, str]:
    return ((ROOT / "README.md").read_text(encoding="utf-8"),
            (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"))


def test_every_figure_in_the_readme_is_in_the_section_named_beside_it() -> None:
    readme, benchmarks = read()
    assert len([f for _, text, _ in blocks(readme) for f in figures(text)]) >= 6
    assert unsourced(readme, benchmarks) == []


def test_a_changed_or_unsourced_figure_is_caught() -> None:
    readme, benchmarks = read()
    sourced = [(text, f) for _, text, cited in blocks(readme) if cited for f in figures(text)]
    for text, figure in sourced:  # each figure changed in its own copy of the README
        changed = figure.replace(re.findall(r"\d+", figure)[0], "987", 1)
        assert unsourced(readme.replace(text, text.replace(figure, changed, 1), 1),
                         benchmarks), figure
    said = "The answer came after 48 s (median), 12% faster.\n"
    assert unsourced(said, benchmarks) == ["1: 48 s (no section named beside it)",
                                           "1: 12% (no section named beside it)"]


def test_what_counts_as_a_figure() -> None:
    said = ("XLA 2.35× slower in 156 s and 40 ms, 6.4–6.7× and ±3.5%, 1.8 GB; images of "
            "150×150, 5×5 kernels, v2.21, `--budget 120 s`, its 95% interval")
    assert figures(said) == ["2.35×", "156 s", "40 ms", "6.4–6.7×", "±3.5%", "1.8 GB"]


def test_the_first_screen_says_what_it_answers_how_to_run_it_and_what_you_get() -> None:
    first = "\n".join(read()[0].splitlines()[:40])
    assert "Does XLA make my TensorFlow model train faster" in first
    assert "pip install . && xlagui compare --demo --quick" in first
    assert "pip install -e '.[test]' && python -m pytest" in first
    assert re.search(r"!\[[^\]]+\]\(docs/screenshots/\w[\w-]*\.png\)", first)
    assert all(name in first for name in ("comparison.json", "comparison.csv", "comparison.md"))
    assert "Exit status" in first
