from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from meaningbench.queries.browser import connect_readonly
from tests.ui.factories import Facts, populated_study


@pytest.fixture
def study_with_facts(tmp_path: Path) -> Iterator[tuple[object, Facts]]:
    """A real study file and what was written into it (the oracle of the queries)."""
    study, facts = populated_study(tmp_path / "facts.mbstudy")
    yield study, facts
    study.close()


@pytest.fixture
def conn(study_with_facts) -> Iterator[sqlite3.Connection]:
    """A read-only connection to that study, as the browser opens it."""
    study, _facts = study_with_facts
    connection = connect_readonly(str(study.path))
    yield connection
    connection.close()
