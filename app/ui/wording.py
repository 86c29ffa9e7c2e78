"""Words the screens build from numbers: the engine's own rule (`meaningbench.core.wording`),
so that a screen and the command line say a count alike."""

from __future__ import annotations

from meaningbench.core.wording import counted

__all__ = ["counted"]
