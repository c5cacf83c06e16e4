"""A real worker whose arm gives an XLA flag the installed XLA does not know is refused at its
start with the flag's name (XLA itself would abort the process at its first compile). One
measuring worker at 48 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.arm_workers import measuring_worker
from xlagui.core.measure.worker_process import WorkerGone
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.task import TaskState
from xlagui.core.worker.flags import UnknownXlaFlag, check_flags

pytestmark = pytest.mark.tf


def test_a_worker_refuses_a_flag_xla_does_not_know(tmp_path: Path) -> None:
    worker, events = measuring_worker(tmp_path, "jit+xla_cpu_no_such_flag=1")
    worker.start()
    try:
        with pytest.raises(WorkerGone):
            worker.wait_for("started", TaskState())
    finally:
        worker.close()
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.kind for e in errors] == [Failure.UNKNOWN_XLA_FLAG], events
    assert errors[0].facts["flag"] == "--xla_cpu_no_such_flag=1"
    assert errors[0].facts["variable"] == "XLA_FLAGS"


def test_an_arm_on_jax_is_asked_of_jaxlibs_xla() -> None:
    """jaxlib 0.10.2's XLA takes `--xla_cpu_ftz`, TensorFlow 2.21's refuses it: the JAX arm with
    it starts, the TensorFlow arm with it is refused (a TensorFlow probe refused both)."""
    pytest.importorskip("jax")
    jax_arm, tf_arm = parse_arm("jax+xla_cpu_ftz=true"), parse_arm("jit+xla_cpu_ftz=true")
    check_flags(jax_arm, {**os.environ, **jax_arm.environment()})
    with pytest.raises(UnknownXlaFlag) as caught:
        check_flags(tf_arm, {**os.environ, **tf_arm.environment()})
    assert caught.value.flag == "--xla_cpu_ftz=true"
