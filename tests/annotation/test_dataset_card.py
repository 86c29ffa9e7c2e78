"""The dataset card: a YAML header any YAML parser reads, names shown as written (never as
Markdown), and a chosen label set published beside the ratings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml

from meaningbench.cli import main

pq = pytest.importorskip(
    "pyarrow.parquet", reason="install pyarrow: pip install 'meaningbench[parquet]'"
)

RATERS = ["*bo*", "a|b", "<b>cy</b>", "[x](http://example.com)", "# dee", "e\\_f"]


def _header(card: str) -> dict[str, object]:
    assert card.startswith("---\n")
    head, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(head)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("card")
    lines = ["source,output,annotator,meaning"]
    for i in range(6):
        for j, who in enumerate(RATERS):
            cell = '"' + who.replace('"', '""') + '"'
            lines.append(f"Source {i}.,Output {i}.,{cell},{(i * 17 + j * 5) % 101}")
    data = folder / "rated.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = folder / "s.mbstudy"
    assert main(["import", str(path), str(data)]) == 0
    labels = folder / "labels.tsv"
    labels.write_text(
        "original\tsimplification\tlabel\n"
        + "".join(f"Source {i}.\tOutput {i}.\t{10 * i + 5}\n" for i in range(6)),
        encoding="utf-8",
    )
    assert main(["import", str(path), str(labels), "--dataset", "csmd"]) == 0
    return path


def test_the_header_is_yaml_and_names_are_text(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    out = tmp_path / "ds"
    title = 'Round 2: pilot #3 - "quoted" [draft]'
    assert main(["dataset", str(study), str(out), "--name", title, "--boot", "0"]) == 0
    capsys.readouterr()
    card = (out / "README.md").read_text(encoding="utf-8")
    header = _header(card)
    assert header["pretty_name"] == title
    assert header["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "ratings.parquet"}]}
    ]
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(card.split("\n---\n", 1)[1])
    assert "<em>" not in html and "<a href" not in html and "<b>" not in html
    # Each name shows as written, in the rater list and in its own table row.
    for who in RATERS:
        shown = who.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert f"<li>{shown}: 6 ratings</li>" in html, (who, html)
        assert f"<td>{shown}</td>" in html, (who, html)
    shown_title = title.replace('"', "&quot;")
    assert f"<h1>{shown_title}</h1>" in html


def test_labels_picks_a_label_set_for_the_dataset(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ds"
    (out).mkdir()
    (out / "labels.parquet").write_bytes(b"an earlier set")
    assert main(["dataset", str(study), str(out), "--boot", "0"]) == 0
    capsys.readouterr()
    # Without --labels no labels: the file of an earlier set does not stay beside the new card.
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "ratings.parquet"]

    assert main(["dataset", str(study), str(out), "--boot", "0", "--labels", "aggregate:csmd"]) == 0
    capsys.readouterr()
    rows = pq.read_table(out / "labels.parquet").to_pylist()
    con = sqlite3.connect(f"file:{study}?mode=ro", uri=True)
    try:
        expected = con.execute(
            "SELECT i.source, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id "
            "JOIN item i ON i.id = r.item_id WHERE a.name = 'aggregate:csmd' ORDER BY i.id"
        ).fetchall()
    finally:
        con.close()
    assert [(r["source"], r["value"]) for r in rows] == expected and len(expected) == 6
    assert {r["label_set"] for r in rows} == {"aggregate:csmd"}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "labels.parquet`: the 6 aggregate labels of the label set aggregate\\:csmd" in card
    assert _header(card)["configs"][1] == {
        "config_name": "labels",
        "data_files": [{"split": "train", "path": "labels.parquet"}],
    }

    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(["dataset", str(study), str(out), "--labels", "corrected"]) == 2
    assert (
        "no aggregate label set 'corrected'; label sets: aggregate:csmd" in capsys.readouterr().err
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
