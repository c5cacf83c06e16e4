"""The Sweep tab's fields as axes: comma lists parsed, bad values refused with their reason,
and the texts that give a plan's axes back (a reopened sweep fills the form with them)."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.config import ConfigError
from xlagui.core.sweep import fields
from xlagui.core.sweep.plan import Axis


def test_each_field_gives_its_axis() -> None:
    assert fields.parse("batch_size", " 16, 128 ") == [Axis("batch_size", ("16", "128"))]
    assert fields.parse("image_size", "64,150") == [Axis("image_size", ("64", "150"))]
    assert fields.parse(fields.MODEL_FIELD, "cnn, mixer") == [Axis("model", ("cnn", "mixer"))]
    assert fields.parse(fields.ARMS_FIELD, "JIT, bf16; bf16") == [
        Axis("arms", ("jit,bf16", "bf16"))]
    assert fields.parse("batch_size", "  ") == []


def test_runtime_settings_are_lever_axes() -> None:
    axes = fields.parse(fields.LEVERS, "xla=jit,off")
    assert axes == [Axis("lever:xla", ("jit", "off"))]


@pytest.mark.parametrize(("kind", "text", "said"), [
    ("batch_size", "16, lots", "'lots' is not a whole number"),
    ("batch_size", "0", "'0' is not a positive whole number"),
    ("batch_size", "16, 16", "names a value twice"),
    (fields.MODEL_FIELD, "cnn, nosuchmodel", "'nosuchmodel'"),
    (fields.ARMS_FIELD, "jit; warp", "unknown arm part 'warp'"),
    (fields.LEVERS, "threads", "'threads' is not name=values"),
    (fields.LEVERS, "speed=fast", "no runtime setting is called 'speed'"),
])
def test_bad_input_is_refused_with_its_reason(kind: str, text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said.replace("(", r"\(")):
        fields.parse(kind, text)


def test_the_texts_give_the_axes_back() -> None:
    texts = {"batch_size": "16, 128", fields.ARMS_FIELD: "jit,bf16; bf16",
             fields.LEVERS: "xla=jit,off"}
    axes = [a for kind, text in texts.items() for a in fields.parse(kind, text)]
    assert fields.texts(axes) == texts
