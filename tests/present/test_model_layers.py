"""The checked model's layers as the window lists them: the count of those left out is said
here, from the check's figure (a check saved before said it in its last line)."""

from __future__ import annotations

from xlagui.core.protocol.events import ModelEvent
from xlagui.present.models import layer_lines


def test_the_layers_left_out_are_counted_in_a_last_line() -> None:
    check = ModelEvent(summary=["a (Dense) (8,) 72", "b (Dense) (2,) 18"], more_layers=3)
    assert layer_lines(check) == ["a (Dense) (8,) 72", "b (Dense) (2,) 18", "… 3 more layers"]
    assert layer_lines(ModelEvent(summary=["a (Dense) (8,) 72"])) == ["a (Dense) (8,) 72"]
    saved = ModelEvent(summary=["a (Dense) (8,) 72", "… 3 more layers"])  # before the count
    assert layer_lines(saved) == saved.summary
