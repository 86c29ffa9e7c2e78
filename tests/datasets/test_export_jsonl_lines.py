"""A JSON Lines export holds one object per line for every reader: U+2028, U+2029 and
U+0085 in a text are written escaped, and import reads the text back as it was."""

from __future__ import annotations

import json
from pathlib import Path

from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from tests.datasets.helpers import rows, write_jsonl

TEXT = "One\u2028two\u2029three\u0085four."


def test_line_separators_are_escaped_and_read_back(tmp_path: Path) -> None:
    a = create_study(tmp_path / "a.mbstudy")
    b = create_study(tmp_path / "b.mbstudy")
    try:
        data = write_jsonl(
            tmp_path / "in.jsonl",
            [{"source": TEXT, "output": "Out.", "annotator": "r1", "meaning": 50}],
        )
        import_file(a, data)
        out = tmp_path / "r.jsonl"
        export_study(a, out, ratings=True)
        text = out.read_text(encoding="utf-8")
        assert not any(ch in text for ch in "\u2028\u2029\u0085")
        assert len(text.splitlines()) == 1 and json.loads(text)["source"] == TEXT
        import_file(b, out)
        assert rows(b, "SELECT source FROM item") == [(TEXT,)]
    finally:
        a.close()
        b.close()
