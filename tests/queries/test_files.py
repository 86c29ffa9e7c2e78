"""Opening and creating study files through the queries, as the window does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from meaningbench.errors import InputError
from meaningbench.ops.settings import set_setting
from meaningbench.queries.files import (
    StudyFileError,
    create_study,
    describe_fault,
    is_user_error,
    open_study,
    study_of,
)
from meaningbench.queries.study import study_name
from meaningbench.runtime import JobContext


def test_create_then_open_and_refuse_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "new.mbstudy"
    create_study(path).close()
    with open_study(path) as study:
        assert study.path == path
    with pytest.raises(StudyFileError, match="already exists"):
        create_study(path)


def test_a_file_that_is_not_a_study_is_the_users_problem(tmp_path: Path) -> None:
    path = tmp_path / "notes.mbstudy"
    path.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(StudyFileError) as caught:
        open_study(path)
    assert is_user_error(caught.value)
    assert is_user_error(InputError("bad", file="a.csv", row=2, column="x"))
    assert not is_user_error(ZeroDivisionError())
    assert describe_fault(ZeroDivisionError()) is None


def test_the_queries_package_loads_no_database_library_until_asked() -> None:
    # The window imports the queries at start; SQLAlchemy must wait for the first study.
    code = (
        "import sys\n"
        "import meaningbench.queries.files, meaningbench.queries.preload\n"
        "import meaningbench.queries.study\n"
        "assert 'sqlalchemy' not in sys.modules, 'loaded at import'\n"
        "meaningbench.queries.preload.import_study_modules()\n"
        "assert 'sqlalchemy' in sys.modules and 'pandas' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_queries_take_the_handle_and_nothing_else(tmp_path: Path) -> None:
    handle = create_study(tmp_path / "handled.mbstudy")
    try:
        assert study_name(handle) == "handled"
        set_setting(handle, "name", "Pilot")(JobContext())
        assert study_name(handle) == "Pilot"
        assert not handle.read_only and handle.path == tmp_path / "handled.mbstudy"
        # Something shaped like a handle is no open study: the queries refuse it.
        lookalike = SimpleNamespace(path=handle.path, read_only=False, read_only_reason="")
        with pytest.raises(TypeError, match="not an open study"):
            study_of(lookalike)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not an open study"):
            study_name(lookalike)  # type: ignore[arg-type]
    finally:
        handle.close()
