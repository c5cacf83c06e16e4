"""A model file's problem in words: the core's kind and facts make the line the model panel,
the command line and a failed run show; an error of another kind is said as it travels."""

from __future__ import annotations

from pathlib import Path

from xlagui.core.model.check import ModelRefused
from xlagui.core.model.files import ModelFileError, ModelFileProblem
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.present.errors import error_hint
from xlagui.present.model_files import SENTENCES, error_text, model_file_text, refusal_text


def _event(exc: ModelFileError, message: str = "") -> ErrorEvent:
    return ErrorEvent(error_type="ModelFileError", message=message or str(exc),
                      kind=Failure.MODEL_FILE.value, facts=exc.event_facts)


def test_every_problem_has_its_words() -> None:
    assert set(SENTENCES) == set(ModelFileProblem)


def test_a_problem_is_said_with_its_file_line_and_fix() -> None:
    wrong = ModelFileError(ModelFileProblem.OUTPUT_UNITS, Path("/m/net.keras"), got=5,
                           shape="(None, 5)", classes=3, want=3, new_head=True)
    assert str(wrong) == "/m/net.keras: output_units"  # the core's own line: kind and place
    assert model_file_text(wrong.event_facts) == (
        "/m/net.keras: the model's output has 5 unit(s) ((None, 5)), but this dataset has 3 "
        "classes, which need 3 (softmax): pass --new-head to replace the last layer")
    raised = ModelFileError(ModelFileProblem.BUILD_RAISED, Path("/m/net.py"), 3,
                            error_type="ValueError", said="no model for 48 px")
    assert error_text(_event(raised)) == (
        "/m/net.py, line 3: build_model raised ValueError: no model for 48 px")
    assert error_hint(_event(raised)).startswith("Fix the model file")


def test_a_refusal_of_the_model_check_is_said_in_these_words() -> None:
    bad = ModelFileError(ModelFileProblem.SYNTAX, Path("/m/broken.py"), 2,
                         said="'(' was never closed")
    refused = ModelRefused(str(bad), _event(bad))
    assert refusal_text(refused) == "/m/broken.py, line 2: syntax error: '(' was never closed"
    assert refusal_text(ModelRefused("building net.py took over 60 s")) == (
        "building net.py took over 60 s")


def test_an_unknown_problem_or_another_error_is_said_as_it_travels() -> None:
    newer = ErrorEvent(message="/m/net.py: from_a_newer_version", kind=Failure.MODEL_FILE.value,
                       facts={"problem": "from_a_newer_version", "file": "/m/net.py"})
    assert error_text(newer) == "/m/net.py: from_a_newer_version"
    other = ErrorEvent(message="out of memory: OOM when allocating", kind="out_of_memory")
    assert error_text(other) == "out of memory: OOM when allocating"
