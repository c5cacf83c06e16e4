"""The scan's problems in words: every sentence the core can pick has its words here, and a
problem this version cannot word still says its kind and facts (a scan saved by a newer one)."""

from __future__ import annotations

import re
from pathlib import Path

from xlagui.core.data.scan.model import PROBLEM_KINDS, Problem
from xlagui.core.protocol.identity import Severity
from xlagui.present.scan_problems import SENTENCES, problem_text, problems_text

SCAN = Path(__file__).resolve().parents[2] / "xlagui" / "core" / "data" / "scan"


def test_every_sentence_the_scan_picks_has_its_words() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in SCAN.glob("*.py"))
    variants = set(re.findall(r'said="([a-z_.]+)"', source))
    kinds = set(re.findall(r'ctx\.problem\(\s*"([a-z_]+)"', source))
    assert variants and kinds <= set(PROBLEM_KINDS)
    assert variants <= set(SENTENCES), sorted(variants - set(SENTENCES))
    # A kind said without a variant is said by its own sentence.
    own = {k for k in kinds if not any(v.startswith(f"{k}.") for v in variants)}
    assert own <= set(SENTENCES), sorted(own - set(SENTENCES))


def test_a_problem_is_worded_from_its_facts() -> None:
    p = Problem("imbalance", Severity.WARNING, [], facts={
        "big": "many", "big_count": 13, "small": "few", "small_count": 4, "ratio": 3})
    assert problem_text(p) == ("Classes are strongly imbalanced: 'many' has 13 training images, "
                               "'few' only 4 (more than 3 times fewer); accuracy will favour "
                               "'many'")
    many = Problem("leakage", Severity.WARNING, [], facts={"files": [f"f{i}" for i in range(6)]})
    assert problem_text(many).endswith(": f0, f1, f2, f3 and 2 more")
    assert problems_text([p, many]) == f"{problem_text(p)}; {problem_text(many)}"


def test_a_sentence_this_version_lacks_says_the_kind_and_facts() -> None:
    newer = Problem("tiny_images", Severity.INFO, [], said="tiny_images.some", facts={"n": 3})
    assert problem_text(newer) == "tiny images: n=3"
    missing = Problem("empty_class", Severity.WARNING, [])  # its facts lost
    assert problem_text(missing) == "empty class"
    # A name that is not valid UTF-8 (a lone surrogate) is shown as U+FFFD.
    odd = Problem("not_an_image", Severity.WARNING, [], facts={"rel": "cats/\udcff.jpg"})
    assert problem_text(odd) == "cats/\ufffd.jpg is not an image"
