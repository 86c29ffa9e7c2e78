"""The demo study through its op, on real files: built once, with its items and both demo
raters' ratings readable back; never built over a file already there."""

from __future__ import annotations

import json
from pathlib import Path

from meaningbench.ops.demo import DemoStudy, build_demo_job
from meaningbench.runtime import JobContext
from meaningbench.settings import studies_dir
from tests.ops.study_rows import rows

RATERS = "SELECT name, kind FROM annotator ORDER BY name"


def test_the_demo_study_is_built_with_its_items_and_ratings(tmp_path: Path) -> None:
    target = tmp_path / "nested" / "demo.mbstudy"
    wrote = build_demo_job(target)(JobContext())
    assert wrote.value == DemoStudy(target, built=True)
    assert not wrote.changes  # a new file: no study a screen shows has changed
    assert rows(target, "SELECT COUNT(*) FROM item") == [(60,)]
    assert rows(target, RATERS) == [("demo-rater-1", "named"), ("demo-rater-2", "named")]
    # Both raters rated every item on meaning, fluency and simplicity.
    assert rows(target, "SELECT COUNT(*) FROM rating") == [(60 * 2 * 3,)]
    ((name, meta),) = rows(target, "SELECT name, meta FROM dataset")
    assert name == "demo" and json.loads(meta)["illustrative"] is True
    assert sorted(p.name for p in target.parent.iterdir()) == ["demo.mbstudy"]  # no partials


def test_a_file_already_there_is_left_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "demo.mbstudy"
    build_demo_job(target)(JobContext())
    before = target.read_bytes()
    again = build_demo_job(target)(JobContext()).value
    assert again == DemoStudy(target, built=False)
    assert target.read_bytes() == before
    # Not even a file that is no study is replaced (the command then refuses to open it).
    other = tmp_path / "other.mbstudy"
    other.write_text("notes, not a study", encoding="utf-8")
    assert build_demo_job(other)(JobContext()).value == DemoStudy(other, built=False)
    assert other.read_text(encoding="utf-8") == "notes, not a study"


def test_by_default_it_lives_in_the_studies_folder() -> None:
    demo = build_demo_job()(JobContext()).value
    assert demo == DemoStudy(studies_dir() / "demo.mbstudy", built=True)
    assert rows(demo.path, "SELECT COUNT(*) FROM item") == [(60,)]
