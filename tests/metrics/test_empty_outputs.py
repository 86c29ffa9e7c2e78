"""An empty output is a system output: imported, flagged, and scored by every metric as its
reference library scores it, or stored as "not defined" with the reason — never a silent 0.

The file mimics a system that deleted some sentences (EASSE's UNTS output on the TurkCorpus
test set has three empty lines)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sacrebleu
from nltk.translate.meteor_score import meteor_score
from rouge_score.rouge_scorer import RougeScorer

from meaningbench.cli import main
from meaningbench.metrics.lexical.meteor import MeteorMetric
from meaningbench.metrics.lexical.sari import corpus_sari
from meaningbench.metrics.lexical.text import wordpunct_tokens

ROWS = [
    ("The old bridge over the river was closed for repairs.", "The bridge was closed.",
     "The old bridge was shut for repairs."),
    ("Heavy rain fell across the whole region overnight.", "",
     "It rained hard everywhere at night."),
    ("The committee postponed its decision until next week.", "The decision was delayed.",
     "The committee put off its decision."),
    ("Volcanic eruptions can cool the climate for years.", "   ",
     "Eruptions can cool the climate."),
]  # fmt: skip


def _tsv(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    lines = ["source\toutput\treference\tsystem"] + [f"{s}\t{o}\t{r}\tunts" for s, o, r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "s.mbstudy"
    assert main(["import", str(path), str(_tsv(tmp_path / "unts.tsv", ROWS))]) == 0
    out = capsys.readouterr().out
    assert "empty outputs:        2" in out
    return path


def _scores(path: Path, metric_prefix: str) -> dict[str, tuple[float | None, dict]]:
    conn = sqlite3.connect(path)
    try:
        got = conn.execute(
            "SELECT i.source, s.value, s.details, s.error FROM score s "
            "JOIN item i ON i.id = s.item_id JOIN metric_run m ON m.id = s.run_id "
            "WHERE m.label = ?",
            (metric_prefix,),
        ).fetchall()
    finally:
        conn.close()
    assert all(err is None for *_, err in got)
    return {src: (value, json.loads(details) if details else {}) for src, value, details, _ in got}


def test_empty_outputs_are_imported_flagged_and_kept(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(study)
    outputs = [o for (o,) in conn.execute("SELECT output FROM item ORDER BY id")]
    conn.close()
    assert outputs == ["The bridge was closed.", "", "The decision was delayed.", ""]
    assert main(["info", str(study)]) == 0
    assert "unts.tsv: 2 empty outputs" in capsys.readouterr().out
    assert main(["info", str(study), "--json"]) == 0
    (dataset,) = json.loads(capsys.readouterr().out)["datasets"]
    assert dataset["meta"]["imports"][0]["empty_outputs"] == 2


def test_an_empty_source_is_still_an_error_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _tsv(tmp_path / "bad.tsv", [*ROWS[:2], ("", "Something.", "Ref.")])
    path = tmp_path / "bad.mbstudy"
    assert main(["import", str(path), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "row 4" in err and "'source'" in err and "empty" in err
    assert not path.exists()


def test_every_lexical_metric_scores_them_as_its_library(study: Path) -> None:
    metrics = "bleu,chrf,ter,rouge1,rougel,meteor,sari,fkgl,fkbleu"
    assert main(["score", str(study), "--metrics", f"{metrics}", "--reference-mode",
                 "references", "--json"]) == 0  # fmt: skip
    refs = {s: r for s, _, r in ROWS}
    outputs = {s: o.strip() for s, o, _ in ROWS}
    rouge = RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    assert MeteorMetric().availability().ok  # puts WordNet where NLTK looks
    from nltk.corpus import wordnet

    by_metric = {
        "bleu": lambda s: sacrebleu.sentence_bleu(outputs[s], [refs[s]]).score,
        "chrf": lambda s: sacrebleu.sentence_chrf(outputs[s], [refs[s]]).score,
        "rouge1": lambda s: 100 * rouge.score(refs[s], outputs[s])["rouge1"].fmeasure,
        "rougel": lambda s: 100 * rouge.score(refs[s], outputs[s])["rougeL"].fmeasure,
        "meteor": lambda s: (
            100
            * meteor_score(
                [list(wordpunct_tokens(refs[s]))],
                list(wordpunct_tokens(outputs[s])),
                wordnet=wordnet,
            )
        ),
    }
    for name, oracle in by_metric.items():
        got = _scores(study, f"{name}[refs=references]")
        assert len(got) == len(ROWS)
        for source, (value, _) in got.items():
            assert value == pytest.approx(oracle(source), abs=1e-9), (name, source)
    conn = sqlite3.connect(study)
    ter = conn.execute(
        "SELECT i.source, s.raw FROM score s JOIN item i ON i.id = s.item_id "
        "JOIN metric_run m ON m.id = s.run_id WHERE m.metric = 'ter'"
    ).fetchall()
    conn.close()
    assert len(ter) == len(ROWS)
    for source, raw in ter:
        assert raw == pytest.approx(sacrebleu.sentence_ter(outputs[source], [refs[source]]).score)
    empties = [s for s, o, _ in ROWS if not o.strip()]
    for name in ("fkgl", "fkbleu[refs=references]"):
        got = _scores(study, name)
        for source in empties:
            value, details = got[source]
            assert value is None
            assert details["not_computed"].startswith("not defined:")
            assert "output has none" in details["not_computed"]
        assert all(got[s][0] is not None for s in got if s not in empties)


def test_corpus_sari_counts_the_empty_lines(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["corpus", str(study), "--metrics", "sari", "--reference-mode", "references",
                 "--json"])  # fmt: skip
    assert code == 0
    got = json.loads(capsys.readouterr().out)["systems"]["unts"]["sari[refs=references]"]
    sources = [s for s, _, _ in ROWS]
    outputs = [o.strip() for _, o, _ in ROWS]
    references = [[r] for *_, r in ROWS]
    assert got == pytest.approx(corpus_sari(sources, outputs, references).sari, abs=1e-9)
    kept = [k for k, o in enumerate(outputs) if o]
    without = corpus_sari(
        [sources[k] for k in kept], [outputs[k] for k in kept], [references[k] for k in kept]
    ).sari
    assert abs(got - without) > 1.0  # dropping the empty lines would change the figure
