"""A study's language from the command line: chosen at import, shown by info, changed by
`language`, handed to the metrics by the scoring job and kept in each run's config."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.jobs.metric_listing import list_metrics

GERMAN = Path(__file__).resolve().parents[1] / "fixtures" / "long_german"


def _pairs_file(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["source", "output", "system"])
        writer.writerows(rows)
    return path


def _german(tmp_path: Path) -> Path:
    source = (GERMAN / "source.txt").read_text(encoding="utf-8")
    output = (GERMAN / "output.txt").read_text(encoding="utf-8")
    return _pairs_file(
        tmp_path / "de.csv",
        [(source, output, "simple"), ("Der Hund schläft im Garten.", "Der Hund schläft.", "short")],
    )


def _query(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _language(path: Path) -> str:
    return json.loads(_query(path, "SELECT value FROM study_setting WHERE key='language'")[0][0])


def test_import_sets_the_language_and_info_shows_it(tmp_path: Path, capsys) -> None:
    study = tmp_path / "de.mbstudy"
    assert main(["import", str(study), str(_german(tmp_path)), "--language", "DE"]) == 0
    assert "study language:       de (German)" in capsys.readouterr().out
    assert _language(study) == "de"
    assert main(["info", str(study)]) == 0
    assert "language: de (German)" in capsys.readouterr().out
    assert main(["info", str(study), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["language"] == "de"
    # Importing more without --language keeps it.
    more = _pairs_file(tmp_path / "more.csv", [("Ein Satz.", "Satz.", "x")])
    assert main(["import", str(study), str(more)]) == 0
    assert _language(study) == "de"


def test_a_new_study_is_english_by_default(tmp_path: Path, capsys) -> None:
    study = tmp_path / "en.mbstudy"
    data = _pairs_file(tmp_path / "en.csv", [("The cat sat.", "A cat sat.", "a")])
    assert main(["import", str(study), str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["language"] == "en"
    assert _language(study) == "en"


def test_a_bad_code_is_refused_before_anything_is_made(tmp_path: Path, capsys) -> None:
    study = tmp_path / "x.mbstudy"
    assert main(["import", str(study), str(_german(tmp_path)), "--language", "german"]) == 2
    assert "'german' is not an ISO 639-1 language code" in capsys.readouterr().err
    assert not study.exists()


def test_another_language_into_a_study_with_items_is_refused_whole(tmp_path: Path, capsys) -> None:
    study = tmp_path / "de.mbstudy"
    assert main(["import", str(study), str(_german(tmp_path)), "--language", "de"]) == 0
    before = _query(study, "SELECT COUNT(*) FROM item")
    french = _pairs_file(tmp_path / "fr.csv", [("Le chat dort.", "Le chat dort.", "x")])
    capsys.readouterr()
    assert main(["import", str(study), str(french), "--language", "fr"]) == 2
    err = capsys.readouterr().err
    assert "holds de (German) texts already" in err
    assert "meaningbench language STUDY fr" in err
    assert _query(study, "SELECT COUNT(*) FROM item") == before
    assert _language(study) == "de"


def test_the_language_command_shows_and_changes_it(tmp_path: Path, capsys) -> None:
    study = tmp_path / "de.mbstudy"
    assert main(["import", str(study), str(_german(tmp_path)), "--language", "de"]) == 0
    capsys.readouterr()
    assert main(["language", str(study)]) == 0
    assert capsys.readouterr().out.strip().endswith("de (German)")
    assert main(["language", str(study), "fr", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "study": str(study),
        "language": "fr",
        "previous": "de",
    }
    assert _language(study) == "fr"
    assert main(["language", str(study), "klingon"]) == 2
    assert _language(study) == "fr"


def test_scores_under_two_languages_never_mix(tmp_path: Path, capsys) -> None:
    from sacrebleu import sentence_bleu

    study = tmp_path / "de.mbstudy"
    assert main(["import", str(study), str(_german(tmp_path)), "--language", "de"]) == 0
    by_name = {m.name: m for m in list_metrics(study)}
    assert not by_name["meteor"].available
    assert "this study's language is de (German)" in by_name["meteor"].reason
    assert by_name["wstf"].available and not by_name["fkgl"].available
    # An unavailable metric asked for by name makes the exit status 1; the others run.
    assert main(["score", str(study), "--metrics", "bleu,rouge1,wstf,meteor", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "meteor[refs=source,language=de]" in out and "unavailable" in out
    runs = _query(study, "SELECT id, metric, label, config FROM metric_run ORDER BY id")
    configs = {metric: json.loads(config) for _, metric, _, config in runs}
    assert set(configs) == {"bleu", "rouge1", "wstf"}
    assert configs["bleu"]["language"] == "de" and configs["bleu"]["tokenize"] == "13a"
    assert configs["rouge1"]["use_stemmer"] is False
    items = _query(study, "SELECT id, source, output FROM item ORDER BY id")
    stored = dict(
        _query(
            study,
            "SELECT s.item_id, s.raw FROM score s JOIN metric_run r ON r.id = s.run_id "
            "WHERE r.metric = 'bleu'",
        )
    )
    for item_id, source, output in items:
        assert stored[item_id] == pytest.approx(sentence_bleu(output, [source]).score)
    # Back to English: the next score is a new run under another config; the German stays.
    assert main(["language", str(study), "en"]) == 0
    assert main(["score", str(study), "--metrics", "rouge1", "--quiet"]) == 0
    rouge = _query(study, "SELECT label, config_hash FROM metric_run WHERE metric='rouge1'")
    assert len(rouge) == 2 and rouge[0][1] != rouge[1][1]
    assert {label for label, _ in rouge} == {
        "rouge1[refs=source,language=de,use_stemmer=false]",
        "rouge1[refs=source]",
    }


def test_corpus_scores_use_the_study_language(tmp_path: Path, capsys) -> None:
    from sacrebleu import corpus_bleu

    rows = [("今天天气很好，我们去公园散步。", "今天天气好，我们去公园。", "a")]
    study = tmp_path / "zh.mbstudy"
    assert (
        main(
            ["import", str(study), str(_pairs_file(tmp_path / "zh.csv", rows)), "--language", "zh"]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["corpus", str(study), "--metrics", "bleu", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    value = next(iter(result["systems"]["a"].values()))
    expected = corpus_bleu([rows[0][1]], [[rows[0][0]]], tokenize="zh").score
    assert value == pytest.approx(expected)
    assert expected != pytest.approx(corpus_bleu([rows[0][1]], [[rows[0][0]]]).score)


def test_a_failed_import_leaves_the_language_as_it_was(tmp_path: Path, capsys) -> None:
    """The language is written in the import's own transaction: a bad row undoes it too."""
    from meaningbench.db.study import open_study

    study = tmp_path / "empty.mbstudy"
    open_study(study, create=True).close()
    bad = tmp_path / "bad.csv"
    bad.write_text("source,output,meaning\nDer Hund.,Hund.,80\nDie Katze.,Katze.,viel\n")
    assert main(["import", str(study), str(bad), "--language", "de"]) == 2
    assert "row 3, column 'meaning'" in capsys.readouterr().err
    assert _language(study) == "en"
    assert _query(study, "SELECT COUNT(*) FROM item") == [(0,)]
