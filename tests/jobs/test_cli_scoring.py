"""`meaningbench score`, `corpus` and `metrics`: exit codes and JSON shapes; corpus values
against sacrebleu's corpus BLEU and the corpus SARI formula."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from meaningbench.cli import main
from meaningbench.db.study import Study
from meaningbench.metrics.lexical.sari import corpus_sari
from tests.jobs.studydata import add_items

SUMMARY_KEYS = {
    "metric",
    "label",
    "run_id",
    "status",
    "scored",
    "cached",
    "failed",
    "elapsed_s",
    "error",
}


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_score_json_and_exit_codes(
    study_with_items: Study, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(study_with_items.path)
    code, data = cli_json(
        capsys,
        "score",
        path,
        "--metrics",
        "bleu,sari[deletion=precision]",
        "--json",
        "--workers",
        "1",
    )
    assert code == 0
    assert data["study"] == path
    assert [r["label"] for r in data["runs"]] == [
        "bleu[refs=source]",
        "sari[refs=source,deletion=precision]",
    ]
    for r in data["runs"]:
        assert set(r) == SUMMARY_KEYS
        assert (r["status"], r["scored"], r["failed"]) == ("done", 48, 0)
    code, data = cli_json(capsys, "score", path, "--metrics", "bleu", "--json")
    assert code == 0 and data["runs"][0]["status"] == "cached" and data["runs"][0]["cached"] == 48


def test_score_text_output(study_with_items: Study, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", str(study_with_items.path), "--metrics", "compression", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "compression" in out and "done" in out and "48" in out


def test_score_refuses_user_mistakes(
    study_with_items: Study, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(study_with_items.path), "--metrics", "blue"]) == 2
    assert "unknown metric 'blue'" in capsys.readouterr().err
    assert main(["score", str(study_with_items.path), "--metrics", "bleu[colour=red]"]) == 2
    assert "unknown option" in capsys.readouterr().err
    assert main(["score", str(tmp_path / "missing.mbstudy"), "--metrics", "bleu"]) == 2
    assert "no such study" in capsys.readouterr().err
    assert main(["score", str(study_with_items.path), "--batch-size", "0"]) == 2


def test_score_unavailable_metric_exits_1(
    study_with_items: Study, test_metrics: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = cli_json(
        capsys,
        "score",
        str(study_with_items.path),
        "--metrics",
        "test_unavailable,compression",
        "--json",
    )
    assert code == 1
    statuses = {r["metric"]: r["status"] for r in data["runs"]}
    assert statuses == {"test_unavailable": "unavailable", "compression": "done"}


def test_corpus_per_system(new_study: Study, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        ("The cat perched on the mat.", "The cat sat on the mat.", [], "A"),
        ("About 95 species are currently accepted.", "About 95 species are accepted.", [], "A"),
        ("The cat perched on the mat.", "Cat on mat.", [], "B"),
        ("About 95 species are currently accepted.", "About 95 you now get in.", [], "B"),
    ]
    add_items(new_study, rows)
    add_items(new_study, [("x y z.", "totally different", [], "A")], kind="control-unrelated")
    code, data = cli_json(
        capsys, "corpus", str(new_study.path), "--metrics", "sari,bleu,rouge1", "--json"
    )
    assert code == 0
    assert set(data["systems"]) == {"A", "B"}
    assert data["items"] == {"A": 2, "B": 2}  # the control item does not count
    for system in ("A", "B"):
        mine = [r for r in rows if r[3] == system]
        outputs, sources = [r[1] for r in mine], [r[0] for r in mine]
        got = data["systems"][system]
        got = {name.removesuffix("[refs=source]"): value for name, value in got.items()}
        assert set(got) == {"sari", "bleu", "rouge1"}
        assert got["bleu"] == pytest.approx(sacrebleu.corpus_bleu(outputs, [sources]).score)
        assert got["sari"] == pytest.approx(
            corpus_sari(sources, outputs, [[s] for s in sources]).sari
        )


def test_metrics_command(study_with_items: Study, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = cli_json(capsys, "metrics", "--json")
    assert code == 0
    listed = {m["name"]: m for m in data["metrics"]}
    assert listed["sari"]["available"] is True and listed["sari"]["family"] == "lexical"
    assert all(isinstance(m["reason"], str) for m in data["metrics"])
    assert main(["metrics"]) == 0
    text_out = capsys.readouterr().out
    assert "sari" in text_out and "available" in text_out
    assert main(["metrics", "--study", str(study_with_items.path.parent / "nope.mbstudy")]) == 2
