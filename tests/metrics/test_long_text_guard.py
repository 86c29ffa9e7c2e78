"""One very long item does not stall a battery: TER and ROUGE-L store it as "not computed
(too long …)" — no value, no error — and score the other items as their libraries do."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
import sacrebleu
from rouge_score.rouge_scorer import RougeScorer

from meaningbench.cli import main
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from meaningbench.metrics.base import Pair, stable_hash
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.metrics.registry import create_metric


def _long_text(words: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(3000)}" for _ in range(words))


SHORT = [
    ("The old bridge over the river was closed for repairs.", "The bridge was closed."),
    ("Heavy rain fell across the region overnight.", "It rained a lot at night."),
    ("The committee postponed its decision until next week.", "The decision was delayed."),
]


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    long_source = _long_text(1500, 1)
    long_output = " ".join(long_source.split()[::2])
    lines = ["source\toutput"] + [f"{s}\t{o}" for s, o in [*SHORT, (long_source, long_output)]]
    data = tmp_path / "pairs.tsv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    import_file(study, data)
    study.close()
    return path


def _scores(path: Path, label: str) -> dict[str, tuple]:
    conn = sqlite3.connect(path)
    try:
        got = conn.execute(
            "SELECT i.output, s.value, s.raw, s.error, s.details FROM score s "
            "JOIN item i ON i.id = s.item_id JOIN metric_run r ON r.id = s.run_id "
            "WHERE r.label = ?",
            (label,),
        ).fetchall()
    finally:
        conn.close()
    return {o: (v, raw, err, json.loads(d) if d else None) for o, v, raw, err, d in got}


@pytest.mark.parametrize(
    ("spec", "name", "limit"),
    [("ter", "TER", 1000), ("ter[max_words=8]", "TER", 8), ("rougel[max_words=8]", "ROUGE-L", 8)],
)
def test_a_long_item_is_not_computed_and_the_rest_is(
    study_path: Path, capsys: pytest.CaptureFixture[str], spec: str, name: str, limit: int
) -> None:
    code = main(["score", str(study_path), "--metrics", spec, "--workers", "1", "--json"])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert code == 0 and run["status"] == "done" and run["failed"] == 0
    scores = _scores(study_path, run["label"])
    assert len(scores) == 4
    skipped = 0
    for output, (value, raw, error, details) in scores.items():
        source = next((s for s, o in SHORT if o == output), None)
        # The long item's source has 1,500 words; a short item's longer text counts.
        words = 1500 if source is None else max(len(output.split()), len(source.split()))
        if words > limit:
            # Not computed: no value and no error, the reason kept with the score.
            assert (value, raw, error) == (None, None, None)
            reason = f"too long for {name}: {words:,} words (the limit is max_words={limit})"
            assert details == {"not_computed": reason}
            skipped += 1
        elif name == "TER":
            assert source is not None
            assert raw == pytest.approx(sacrebleu.sentence_ter(output, [source]).score)
        else:
            oracle = RougeScorer(["rougeL"], use_stemmer=True).score(source, output)["rougeL"]
            assert raw == pytest.approx(oracle.fmeasure)
    assert skipped == (1 if limit == 1000 else 2)
    # A second run does not try the long item again.
    main(["score", str(study_path), "--metrics", spec, "--workers", "1", "--json"])
    assert json.loads(capsys.readouterr().out)["runs"][0]["status"] == "cached"


def test_the_default_limit_keeps_existing_scores_cached() -> None:
    ter = create_metric("ter")
    before = {k: v for k, v in ter.config.items() if k != "max_words"}
    oracle = stable_hash({"metric": "ter", "impl": ter.implementation_version, "config": before})
    assert ter.config_hash() == oracle
    assert metric_canonical_name(ter) == "ter[refs=source]"
    other = create_metric("ter", max_words=5000)
    assert (
        other.config_hash() != oracle
        and metric_canonical_name(other) == "ter[refs=source,max_words=5000]"
    )


def test_corpus_ter_leaves_out_what_it_did_not_compute() -> None:
    ter = create_metric("ter", max_words=12)
    pairs = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(SHORT)]
    long = _long_text(40, 2)
    with_long = [*pairs, Pair(9, long, long[:50], (long,))]
    streams = [[s for s, _ in SHORT]]
    oracle = 100 - sacrebleu.corpus_ter([o for _, o in SHORT], streams).score
    assert ter.corpus_score(with_long) == pytest.approx(max(0.0, oracle))


@pytest.mark.parametrize("value", ["0", "-5", "many", "1.5"])
def test_a_bad_limit_is_a_message(
    study_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert main(["score", str(study_path), "--metrics", f"ter[max_words={value}]"]) == 2
    err = capsys.readouterr().err
    assert "max_words must be a whole number above 0" in err and "Traceback" not in err


def test_the_browser_says_not_computed_and_why(study_path: Path, qtbot, capsys) -> None:  # noqa: ANN001
    from meaningbench.ui.launch import start
    from tests.ui.conftest import open_in

    assert main(["score", str(study_path), "--metrics", "ter", "--workers", "1"]) == 0
    capsys.readouterr()
    window = start(None, open_initial=False)
    qtbot.addWidget(window)
    open_in(window, study_path, qtbot)
    page = window.page("browser")
    conn = sqlite3.connect(study_path)
    (long_id,) = conn.execute("SELECT id FROM item ORDER BY length(source) DESC").fetchone()
    conn.close()
    assert page.select_item(long_id)
    text = page.detail.view.toPlainText()
    assert "not computed" in text
    assert "too long for TER: 1,500 words (the limit is max_words=1000)" in text
