"""The browser's attribute filter on a real study file, against the attributes the import
stored (read back by `item_attributes_frame`)."""

from __future__ import annotations

from pathlib import Path

from meaningbench.datasets.importer import import_file
from meaningbench.db.frames import item_attributes_frame, items_frame
from meaningbench.db.study import create_study, open_study
from meaningbench.queries.browser import (
    MAX_FILTER_VALUES,
    AttributeChoice,
    BrowserFilter,
    attribute_choices,
    connect_readonly,
    load_ids,
)
from tests.datasets.helpers import write


def _study(tmp_path: Path) -> Path:
    lines = ['source,output,system,rater,aspect,rating,sentence_type,"odd ""key"".x",serial']
    types = ["split", "paraphrase", "split", "deletion", "split", "paraphrase"]
    for n in range(MAX_FILTER_VALUES + 1):
        kind = types[n % len(types)]
        lines.append(f"Source {n}.,Output {n}.,sys{n % 2},r1,meaning,{n},{kind},v{n % 2},{n}")
    study = create_study(tmp_path / "s.mbstudy")
    import_file(study, write(tmp_path / "rows.csv", "\n".join(lines) + "\n"))
    study.close()
    return tmp_path / "s.mbstudy"


def test_choices_and_the_filter_select_the_stored_items(tmp_path: Path) -> None:
    path = _study(tmp_path)
    study = open_study(path)
    with study.session() as s:
        stored = item_attributes_frame(s)
        systems = items_frame(s).set_index("item_id")["system"]
    study.close()
    conn = connect_readonly(str(path))
    try:
        choices = attribute_choices(conn)
        # `serial` has a value per item (51 values): an identifier, not offered.
        assert {c.name for c in choices} == {"sentence_type", 'odd "key".x'}
        counts = stored["sentence_type"].value_counts()
        offered = [c for c in choices if c.name == "sentence_type"]
        assert offered == [
            AttributeChoice("sentence_type", v, int(n))
            for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        for value in counts.index:
            f = BrowserFilter(attribute=("sentence_type", value))
            expected = list(stored.index[stored["sentence_type"] == value])
            assert list(load_ids(conn, f)) == expected
        # Names with quotes and dots work (no JSON path is built from them).
        odd = list(load_ids(conn, BrowserFilter(attribute=('odd "key".x', "v1"))))
        assert odd == list(stored.index[stored['odd "key".x'] == "v1"])
        # Combined with another filter; a value no item has selects nothing.
        both = BrowserFilter(system="sys0", attribute=("sentence_type", "split"))
        split = stored.index[stored["sentence_type"] == "split"]
        assert list(load_ids(conn, both)) == [i for i in split if systems[i] == "sys0"]
        assert list(load_ids(conn, BrowserFilter(attribute=("sentence_type", "none")))) == []
    finally:
        conn.close()
