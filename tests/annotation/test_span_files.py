"""Spans files are JSON Lines read by the one strict reader: texts holding line separators
round-trip, and what Python's json would choke on or silently accept is refused with the
file and line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.annotation.span_io import export_spans, import_spans
from meaningbench.cli import main
from meaningbench.db.models import Dataset
from meaningbench.db.study import create_study
from tests.annotation.factories import regular_item

# U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR, U+0085 NEXT LINE: text in JSON,
# line breaks to str.splitlines() and to JavaScript.
SOURCE = "The first line\u2028the second\u2029and\u0085a third."
OUTPUT = "Three\u2028lines\u0085here."


def _study(path: Path) -> Path:
    st = create_study(path)
    try:
        with st.session() as s:
            ds = Dataset(name="wiki")
            s.add(ds)
            s.flush()
            s.add(regular_item(ds.id, SOURCE, OUTPUT, "sys"))
            s.add(regular_item(ds.id, "A plain source.", "A plain output.", "sys"))
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 3, False
            save_settings(s, cfg)
        set_protocol(st, "esa")
    finally:
        st.close()
    return path


def _line(source: str, output: str, rater: str = "ann", **extra: object) -> dict[str, object]:
    record: dict[str, object] = {
        "dataset": "wiki",
        "system": "sys",
        "source": source,
        "output": output,
        "rater": rater,
        "dimension": "meaning",
        "score": 40.0,
        "spans": [],
    }
    record.update(extra)
    return record


def test_line_separators_in_texts_round_trip(tmp_path: Path) -> None:
    from meaningbench.db.study import open_study

    # As another tool writes it: the separators raw inside the strings (valid JSON).
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        json.dumps(_line(SOURCE, OUTPUT), ensure_ascii=False)
        + "\n"
        + json.dumps(_line("A plain source.", "A plain output."), ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    first = open_study(_study(tmp_path / "a.mbstudy"))
    try:
        assert import_spans(first, raw).ratings == 2
        assert export_spans(first, tmp_path / "out.jsonl") == 2
    finally:
        first.close()
    exported = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    # Escaped in the file: every reader, splitlines() included, sees two lines.
    assert not any(ch in exported for ch in "\u2028\u2029\u0085")
    assert len(exported.splitlines()) == 2
    assert json.loads(exported.splitlines()[0])["source"] == SOURCE

    second = open_study(_study(tmp_path / "b.mbstudy"))
    try:
        assert import_spans(second, tmp_path / "out.jsonl").ratings == 2
        assert export_spans(second, tmp_path / "again.jsonl") == 2
    finally:
        second.close()
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "out.jsonl").read_bytes()


GOOD = json.dumps(_line("A plain source.", "A plain output."), ensure_ascii=False)
DEEP = '{"dataset": "wiki", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
LONG_NUMBER = GOOD.replace('"score": 40.0', '"score": ' + "7" * 5000)
SURROGATE = GOOD.replace('"rater": "ann"', '"rater": "a\\ud800n"')
TWICE = GOOD.replace('"score": 40.0', '"score": 40.0, "score": 90.0')


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (DEEP, "brackets nested too deeply"),
        (LONG_NUMBER, "a number with more than 4,300 digits"),
        (SURROGATE, "half of a surrogate pair"),
        (TWICE, "the key 'score' appears twice in one object"),
    ],
    ids=["nested", "5000-digits", "lone-surrogate", "duplicate-key"],
)
def test_a_bad_line_is_a_message_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, message: str
) -> None:
    study = _study(tmp_path / "s.mbstudy")
    before = study.read_bytes()
    path = tmp_path / "bad.jsonl"
    path.write_text(GOOD + "\n" + bad + "\n", encoding="utf-8")
    assert main(["spans", "import", str(study), str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "bad.jsonl, line 2: " in err and message in err, err
    assert study.read_bytes() == before
