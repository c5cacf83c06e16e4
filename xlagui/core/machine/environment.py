"""This computer's environment block of a comparison (`ComparisonReport.environment`); a host's
is `HostInfo.environment()`."""

from __future__ import annotations

import os
import platform
from typing import Any

from xlagui import __version__


def host_environment() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "xlagui": __version__,
    }
