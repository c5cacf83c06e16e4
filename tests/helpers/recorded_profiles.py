"""The recorded profile fixtures (`tests/helpers/recorded/profiles/`, see its `record.py`)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from xlagui.core.explain.trace import Trace

PROFILES = Path(__file__).resolve().parent / "recorded" / "profiles"


def recorded_text(name: str) -> str:
    return gzip.decompress((PROFILES / name).read_bytes()).decode("utf-8")


def recorded_trace(name: str) -> Trace:
    return Trace.from_dict(json.loads(recorded_text(name)))
