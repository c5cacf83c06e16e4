"""The machine before and while measuring, in words (`xlagui.present.machine_load`)."""

from __future__ import annotations

from xlagui.core.protocol.interference import Interference, Preflight, ProcessShare
from xlagui.present.machine_load import busy_question, preflight_words

SPINNER = ProcessShare(name="python", pid=5261, share=0.5)


def look(other: float, *, waited: float = 0.0, limit: float | None = None) -> Preflight:
    busy = other > 0.1
    return Preflight(look=Interference(seconds=1.0, cores=2, other_share=other,
                                       disturbed=busy, busiest=[SPINNER] if busy else []),
                     waited_seconds=waited, wait_limit_seconds=limit)


def test_a_busy_machine_before_measuring_names_who_and_what_to_do() -> None:
    said = preflight_words(look(0.5))
    assert said.startswith("The machine is busy before measuring: other programs use 50% of "
                           "the 2 cores (python (pid 5261) 50%).")
    assert said.endswith("To measure on a quiet machine, close them, or wait for one "
                         "(--wait-quiet SECONDS).")


def test_the_windows_busy_question_says_who_in_one_sentence_each() -> None:
    asked = busy_question(look(0.5))
    assert asked.startswith("The machine is busy before measuring: other programs use 50% of the "
                            "2 cores (python (pid 5261) 50%).\n\nMeasured now, rounds")
    assert ".." not in asked  # it once ended "of the 2 cores.."


def test_waiting_and_then_measuring_anyway_or_quiet_are_each_said() -> None:
    assert "Waiting for it to go quiet (12 of 60 s)" in preflight_words(
        look(0.5, waited=12, limit=60), final=False)
    assert preflight_words(look(0.5, waited=60.4, limit=60)).startswith(
        "The machine is still busy after waiting 60 s")
    assert preflight_words(look(0.004)) == (
        "The machine is quiet before measuring: other programs use under 1% of the 2 cores.")
    assert preflight_words(look(0.02, waited=31, limit=60)) == (
        "The machine is quiet before measuring after waiting 31 s: other programs use 2% of "
        "the 2 cores.")
