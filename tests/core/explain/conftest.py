from __future__ import annotations

import pytest

from tests.helpers.recorded_profiles import recorded_text


@pytest.fixture(scope="session")
def cnn_op_names() -> dict[str, str]:
    """{instruction: op} of the recorded CNN's XLA train module."""
    from xlagui.core.explain.hlo_names import op_names

    return op_names(recorded_text("cnn48-xla.after.txt.gz"),
                    recorded_text("cnn48-xla.before.txt.gz"))
