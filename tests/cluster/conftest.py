"""The shard tests need the cluster extra; without it they are skipped, saying so."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "pyarrow", reason="the shard tests need pyarrow: pip install 'meaningbench[cluster]'"
)
