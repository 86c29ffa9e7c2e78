"""What every benchmark records about the machine it ran on, beside its figures."""

from __future__ import annotations

import os
import platform
from typing import Any


def describe_machine(**extra: Any) -> dict[str, Any]:
    """Platform, cores, Python and the load at the moment: timings mean little without it."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    info.update(extra)
    return info
