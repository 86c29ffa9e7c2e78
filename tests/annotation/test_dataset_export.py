"""The published dataset: Parquet that pyarrow and Hugging Face datasets read, spans that
match the study's, and a card with the protocol, raters, QC and agreement."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from meaningbench.annotation.practice import PracticeSession, add_practice
from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import QCMix, load_settings, save_settings
from meaningbench.annotation.spans import make_span, words
from meaningbench.cli import main
from meaningbench.db.study import create_study
from tests.annotation.factories import add_items

pq = pytest.importorskip(
    "pyarrow.parquet", reason="install pyarrow: pip install 'meaningbench[parquet]'"
)


@pytest.fixture(scope="module")
def study_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ds") / "esa.mbstudy"
    st = create_study(path)
    try:
        add_items(st, 10, 2)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 4, True
            cfg.qc = QCMix(degraded=0, identical=10, repeat=0, unrelated=10, word_soup=0)
            cfg.guidelines = "Mark every meaning error.\n\nThen score."
            save_settings(s, cfg)
        set_protocol(st, "esa")
        add_practice(st, [("A practice source.", "A practice output.", 0.0, 50.0, "")])
        PracticeSession(st, "ann").answer(PracticeSession(st, "ann").pending()[0], 99.0)
        for name in ("ann", "bo", "cy"):
            rng = random.Random(name)
            sess = AnnotationSession(st, name)
            while (item := sess.next_item()) is not None:
                w = words(item.output)
                spans = [
                    make_span(
                        "output", item.output, w[1][0], w[1][1], rng.choice(["minor", "major"])
                    )
                ]
                sess.submit(item.item_id, {"meaning": float(rng.randint(0, 100))}, spans=spans)
    finally:
        st.close()
    return path


def test_the_dataset_folder_holds_parquet_spans_and_card(study_path, tmp_path, capsys) -> None:
    out = tmp_path / "ds"
    assert main(["dataset", str(study_path), str(out), "--boot", "200", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    conn = sqlite3.connect(study_path)
    try:
        expected = conn.execute(
            "SELECT COUNT(*) FROM rating r JOIN item i ON i.id = r.item_id "
            "WHERE r.state = 'current' AND i.kind = 'regular'"
        ).fetchone()[0]
        controls = conn.execute("SELECT COUNT(*) FROM item WHERE kind != 'regular'").fetchone()[0]
        ident = conn.execute(
            "SELECT AVG(r.value >= 95) FROM rating r JOIN item i ON i.id = r.item_id "
            "JOIN annotator a ON a.id = r.annotator_id "
            "WHERE a.name = 'ann' AND i.kind = 'control-identical' AND r.state = 'current'"
        ).fetchone()[0]
        spans_in_study = conn.execute(
            "SELECT COUNT(*) FROM rating_span s JOIN rating r ON r.id = s.rating_id "
            "JOIN item i ON i.id = r.item_id WHERE i.kind = 'regular'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert controls > 0 and report["ratings"] == expected == 60
    table = pq.read_table(out / "ratings.parquet")
    assert table.num_rows == expected
    rows = table.to_pylist()
    assert {r["rater"] for r in rows} == {"ann", "bo", "cy"}
    assert sum(len(r["spans"]) for r in rows) == spans_in_study
    for r in rows:
        for sp in r["spans"]:
            assert r["output"][sp["start"] : sp["end"]] == sp["text"]
    assert not any(r["source"] == "A practice source." for r in rows)
    assert len((out / "spans.jsonl").read_text(encoding="utf-8").splitlines()) == expected
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "- **esa**: error span annotation" in card
    assert "> Mark every meaning error." in card
    assert "- 3 named raters, 0 anonymous ratings" in card
    [ann_row] = [line for line in card.splitlines() if line.startswith("| ann |")]
    assert ann_row.split(" | ")[1] == f"{ident:.0%}"
    assert "Krippendorff's alpha (interval) |" in card and "95% CI" in card


def test_hugging_face_datasets_loads_the_parquet(study_path, tmp_path, capsys) -> None:
    datasets = pytest.importorskip("datasets", reason="install datasets: pip install datasets")
    out = tmp_path / "ds"
    assert main(["dataset", str(study_path), str(out), "--boot", "0"]) == 0
    capsys.readouterr()
    ds = datasets.load_dataset(
        "parquet",
        data_files=str(out / "ratings.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert ds.num_rows == 60
    assert set(ds.column_names) >= {"source", "output", "rater", "value", "spans"}
    assert ds[0]["spans"][0]["severity"] in ("minor", "major")
