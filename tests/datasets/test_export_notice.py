"""Exports keep the table clean: no notice column; a notice file beside the table only when
cells were changed (and the import's removal of the added quotes keyed to it); the
ratings table carries each rating's flag and comment, and no rows for controls nobody
rated; --labels picks the label set as on correlate."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import QCMix, load_settings, save_settings
from meaningbench.cli import main
from meaningbench.datasets.exporters import export_study
from meaningbench.db.study import create_study, open_study
from tests.annotation.factories import add_items


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_plain_export_has_its_columns_only_and_no_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    data = _write(tmp_path / "d.csv", "source,output,annotator,meaning\nS1.,O1.,r1,80\n")
    assert main(["import", str(study), str(data)]) == 0
    out = tmp_path / "items.csv"
    assert main(["export", str(study), str(out)]) == 0
    err = capsys.readouterr().err
    assert "none changed" in err
    frame = pd.read_csv(out)
    assert [c for c in frame.columns if "meaningbench" in c or c.startswith("Unnamed")] == []
    assert list(frame.columns[-3:]) == ["meaning_human", "meaning_mean", "meaning_n"]
    assert not (tmp_path / "items.csv.notice.txt").exists()


def test_changed_cells_get_a_notice_and_import_restores_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = ["=SUM(A1)", "+1 more", "'@quoted already", "plain"]
    study = tmp_path / "s.mbstudy"
    rows = "".join(f'"{t}",Out {i}.,r1,{10 * i}\n' for i, t in enumerate(texts))
    data = _write(tmp_path / "d.csv", "source,output,annotator,meaning\n" + rows)
    assert main(["import", str(study), str(data)]) == 0
    capsys.readouterr()
    out = tmp_path / "ratings.csv"
    assert main(["export", str(study), str(out), "--ratings", "--json"]) == 0
    done = capsys.readouterr()
    report = json.loads(done.out)
    notice = tmp_path / "ratings.csv.notice.txt"
    assert report["notice"] == str(notice) and report["cells_quoted"] == 3
    assert "3 text cells" in done.err and "ratings.csv.notice.txt" in done.err
    assert "3 text cells" in notice.read_text(encoding="utf-8")
    with out.open(encoding="utf-8", newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0][-2:] == ["flagged", "comment"]  # the last header cells are columns
    assert sorted(r[table[0].index("source")] for r in table[1:]) == sorted(
        ["'=SUM(A1)", "'+1 more", "''@quoted already", "plain"]
    )
    # Round trip: the notice beside the file, the text as the study holds it.
    back = tmp_path / "b.mbstudy"
    assert main(["import", str(back), str(out)]) == 0
    con = sqlite3.connect(f"file:{back}?mode=ro", uri=True)
    try:
        assert sorted(s for (s,) in con.execute("SELECT source FROM item")) == sorted(texts)
    finally:
        con.close()

    # Written raw again: the stale notice goes (it would strip quotes that are text now).
    assert main(["export", str(study), str(out), "--ratings", "--raw-cells"]) == 0
    assert not notice.exists()


@pytest.fixture
def rated_study(tmp_path: Path) -> Path:
    path = tmp_path / "qc.mbstudy"
    st = create_study(path)
    try:
        add_items(st, 6, 2)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 5, True
            cfg.qc = QCMix(degraded=0, identical=10, repeat=0, unrelated=10, word_soup=0)
            save_settings(s, cfg)
        sess = AnnotationSession(st, "ann")
        for n in range(3):
            item = sess.next_item()
            assert item is not None
            if n == 0:
                sess.flag(item.item_id, "=odd: the output is cut")
            sess.submit(item.item_id, {"meaning": 40.0 + n})
    finally:
        st.close()
    return path


def test_ratings_carry_flag_and_comment_and_skip_unrated_controls(
    rated_study: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    st = open_study(rated_study)
    try:
        export_study(st, out, ratings=True)
    finally:
        st.close()
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    con = sqlite3.connect(f"file:{rated_study}?mode=ro", uri=True)
    try:
        flagged = con.execute(
            "SELECT r.item_id, r.comment FROM rating r WHERE r.flagged = 1"
        ).fetchall()
        regular = con.execute("SELECT COUNT(*) FROM item WHERE kind = 'regular'").fetchone()[0]
        controls = con.execute("SELECT COUNT(*) FROM item WHERE kind != 'regular'").fetchone()[0]
    finally:
        con.close()
    assert controls > 0 and len(flagged) == 1
    [line] = [x for x in lines if x["flagged"]]
    assert (line["item_id"], line["comment"]) == flagged[0]
    # Controls appear only with their ratings; every regular item appears, rated or not.
    assert all(x["annotator"] is not None for x in lines if x["kind"] != "regular")
    assert len({x["item_id"] for x in lines if x["kind"] == "regular"}) == regular


LABELS = "original\tsimplification\tlabel\nS one.\tO one.\t20\nS two.\tO two.\t60\n"
RAW = (
    "source,output,annotator,meaning\n"
    "S one.,O one.,r1,30\nS one.,O one.,r2,40\nS two.,O two.,r1,70\nS two.,O two.,r2,80\n"
)


def test_export_labels_picks_the_set_as_correlate_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    labels, raw = _write(tmp_path / "l.tsv", LABELS), _write(tmp_path / "raw.csv", RAW)
    assert main(["import", str(study), str(labels), "--dataset", "csmd"]) == 0
    assert main(["import", str(study), str(raw), "--dataset", "raw"]) == 0
    assert main(["audit", str(study), "--fix", "corrected"]) == 0  # the raw means: 35, 75
    capsys.readouterr()
    out = tmp_path / "items.csv"
    assert main(["export", str(study), str(out)]) == 0
    published = pd.read_csv(out)
    assert main(["export", str(study), str(out), "--labels", "corrected"]) == 0
    corrected = pd.read_csv(out)
    assert list(published["meaning_label"].dropna()) == [20, 60]
    assert list(corrected["meaning_label"].dropna()) == [35, 75]
    assert list(corrected["meaning_human"]) == [35, 75, 35, 75]

    out_r = tmp_path / "r.csv"
    assert main(["export", str(study), str(out_r), "--ratings", "--labels", "corrected"]) == 0
    kinds = pd.read_csv(out_r).groupby("annotator_kind")["annotator"].unique()
    assert list(kinds["aggregate"]) == ["corrected"]
    assert main(["export", str(study), str(out_r), "--ratings"]) == 0
    kinds = pd.read_csv(out_r).groupby("annotator_kind")["annotator"].unique()
    assert sorted(kinds["aggregate"]) == ["aggregate:csmd", "corrected"]
    capsys.readouterr()
    before = out_r.read_bytes()
    assert main(["export", str(study), str(out_r), "--labels", "nope"]) == 2
    assert "no aggregate label set 'nope'" in capsys.readouterr().err
    assert out_r.read_bytes() == before
