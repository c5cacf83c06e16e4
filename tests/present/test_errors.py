"""A failed run's advice, worded from its kind and facts, word for word as the worker and the
supervisor once wrote it into the event; an event saved before kinds shows its own text."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.present.errors import HINTS, error_hint

SIZES = {"model": "the article's CNN", "batch_size": 32, "image_size": 600}
SAID = "the article's CNN, batch size 32 and image size 600"


@pytest.mark.parametrize(
    ("kind", "facts", "words"),
    [
        (Failure.DIED_OUT_OF_MEMORY, SIZES,
         f"The images, the batch and the model did not fit in memory with {SAID}: try a "
         "smaller batch size or image size (memory grows with batch × image size²)."),
        (Failure.KILLED, SIZES,
         "If nobody killed it on purpose, the system probably ran out of memory and the kernel "
         f"stopped it with {SAID}: try a smaller batch size or image size."),
        (Failure.EXITED, {}, "See the run's log for what happened."),
        (Failure.SEE_LOG, {}, "See the run's log for details."),
        (Failure.GPU_UNUSABLE, {},
         "The GPU could not be used. Check that a CUDA build of TensorFlow is installed "
         "(pip install 'tensorflow[and-cuda]') and that the driver works (nvidia-smi)."),
        (Failure.CONNECTION_LOST, {},
         "What was measured before is kept. Check the network and that the host is up, then "
         "run the comparison again."),
        (Failure.PROTOCOL_MISMATCH, {}, "The worker and the app do not speak the same protocol."),
    ],
)
def test_each_kind_has_its_words(kind: Failure, facts: dict[str, object], words: str) -> None:
    event = ErrorEvent(message="m", kind=kind.value, facts=facts)  # type: ignore[arg-type]
    assert error_hint(event) == words


def test_every_kind_is_worded() -> None:
    assert set(HINTS) == set(Failure)
    for kind in Failure:
        assert error_hint(ErrorEvent(kind=kind.value, facts=SIZES)).strip()  # type: ignore[arg-type]


def test_an_event_saved_before_kinds_shows_its_own_advice() -> None:
    old = ErrorEvent(message="killed", hint="memory")
    assert error_hint(old) == "memory"
    # A kind from a newer release this app does not know: what the event says, if anything.
    assert error_hint(ErrorEvent(kind="some_new_kind", hint="")) == ""


def test_kinds_and_facts_survive_the_stream() -> None:
    from xlagui.core.protocol.events import parse_event

    event = ErrorEvent(t=1.0, message="m", kind="killed", facts=SIZES)  # type: ignore[arg-type]
    back = parse_event(event.to_json())
    assert isinstance(back, ErrorEvent) and back.facts == SIZES and back.kind == "killed"
