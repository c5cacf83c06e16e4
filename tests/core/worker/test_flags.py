"""A worker refuses an XLA flag the installed XLA does not know, from XLA's own words, before it
loads TensorFlow (no TensorFlow here: the probe is replaced by a child that says what XLA says)."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.arms import BASELINE, parse_arm
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.core.worker import flags
from xlagui.core.worker.errors import error_event
from xlagui.core.worker.flags import UnknownXlaFlag, check_flags, refused
from xlagui.present.errors import error_hint

XLA_SAYS = ("F0000 00:00:1 30883 parse_flags_from_env.cc:234] Unknown flags in XLA_FLAGS: "
            "--xla_cpu_bogus=1 --xla_other_bogus=2")


def test_xlas_refusal_is_read_with_every_flag_it_names() -> None:
    found = refused(f"I0000 chatter\n{XLA_SAYS}\n")
    assert found is not None
    assert (found.flags, found.variable) == (("--xla_cpu_bogus=1", "--xla_other_bogus=2"),
                                             "XLA_FLAGS")
    one = refused("F0000 x.cc:1] Unknown flag in TF_XLA_FLAGS: --tf_xla_bogus=1")
    assert one is not None and (one.flag, one.variable) == ("--tf_xla_bogus=1", "TF_XLA_FLAGS")
    assert refused("F0000 something else died") is None


def test_only_an_arm_with_flags_is_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flags, "PROBE", "raise SystemExit(3)")  # any probe run would be seen
    check_flags(parse_arm("jit+t1"))
    check_flags(BASELINE)
    check_flags(parse_arm("jit+noxnnpack"))  # a failure that is not XLA's refusal is not one


def test_the_refusal_names_the_flag_in_the_error_event_and_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(flags, "PROBE", f"import sys; sys.stderr.write({XLA_SAYS!r}); "
                                        "raise SystemExit(1)")
    with pytest.raises(UnknownXlaFlag) as caught:
        check_flags(parse_arm("jit+xla_cpu_bogus=1"))
    try:
        raise caught.value
    except UnknownXlaFlag as exc:
        event = error_event(exc, RunConfig())
    assert isinstance(event, ErrorEvent) and event.kind == Failure.UNKNOWN_XLA_FLAG
    assert event.facts == {"flag": "--xla_cpu_bogus=1", "variable": "XLA_FLAGS"}
    assert "--xla_cpu_bogus=1" in event.message
    assert error_hint(event).startswith(
        "The installed XLA does not know the flag xla_cpu_bogus (XLA_FLAGS)")


def test_an_arm_on_jax_asks_jaxlibs_xla_not_tensorflows(monkeypatch: pytest.MonkeyPatch) -> None:
    refuses = f"import sys; sys.stderr.write({XLA_SAYS!r}); raise SystemExit(1)"
    monkeypatch.setattr(flags, "PROBE", refuses)  # TensorFlow's XLA refuses the flag
    monkeypatch.setattr(flags, "JAX_PROBE", "raise SystemExit(0)")  # jaxlib's takes it
    check_flags(parse_arm("jax+xla_cpu_bogus=1"))
    with pytest.raises(UnknownXlaFlag):
        check_flags(parse_arm("jit+xla_cpu_bogus=1"))
    monkeypatch.setattr(flags, "PROBE", "raise SystemExit(0)")  # and the other way round
    monkeypatch.setattr(flags, "JAX_PROBE", refuses)
    check_flags(parse_arm("jit+xla_cpu_bogus=1"))
    with pytest.raises(UnknownXlaFlag):
        check_flags(parse_arm("jax+xla_cpu_bogus=1"))
