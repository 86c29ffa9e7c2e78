from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.factories import Facts, populated_study


@pytest.fixture
def study_with_facts(tmp_path: Path) -> Iterator[tuple[object, Facts]]:
    """A real study file and what was written into it (the oracle of the queries)."""
    study, facts = populated_study(tmp_path / "facts.mbstudy")
    yield study, facts
    study.close()
