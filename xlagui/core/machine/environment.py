"""This computer's environment block of a comparison (`ComparisonReport.environment`); a host's
is `HostInfo.environment()`."""

from __future__ import annotations

import os
import platform
from typing import Any

from xlagui import __version__
from xlagui.core.machine.cpu import cpu_name


def host_environment() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_name(),  # what names the machine to a person (History), with the count
        "cpu_count": os.cpu_count(),
        "xlagui": __version__,
    }
