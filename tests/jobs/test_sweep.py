"""The sweep job on a tiny random encoder: ordinary runs that `score` finds, one forward pass
per text, reuse of stored runs, and what a sweep refuses."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from meaningbench.cli import main
from meaningbench.errors import InputError, UserError
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.jobs.sweep import run_sweep
from meaningbench.jobs.sweep_plan import SweepRequest, plan_sweep
from meaningbench.metrics.neural.support.cache import MEMORY
from meaningbench.metrics.neural.support.models import load_model
from meaningbench.queries.sweep import load_sweep_table
from meaningbench.runtime import JobContext
from tests.metrics.neural.sweep_helpers import ForwardCounter, write_corpus


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """CSMD dev (95 rated pairs, the copy shipped with the tests) as a study."""
    from tests.conftest import FIXTURE_DATASETS

    path = tmp_path_factory.mktemp("sweep") / "dev.mbstudy"
    assert main(["import", str(path), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    return path


@pytest.fixture
def study(template: Path, tmp_path: Path) -> Path:
    from meaningbench.db.study import copy_study

    MEMORY.clear()
    return copy_study(template, tmp_path / "study.mbstudy")


def _texts(path: Path) -> tuple[list[str], list[str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT source, output FROM item ORDER BY id").fetchall()
    conn.close()
    return [r[0] for r in rows], [r[1] for r in rows]


def _scores(path: Path) -> dict[tuple[str, str, int], float]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT r.metric, r.config_hash, s.item_id, s.raw FROM score s "
        "JOIN metric_run r ON r.id = s.run_id"
    ).fetchall()
    conn.close()
    return {(m, h, i): raw for m, h, i, raw in rows}


def test_each_configuration_is_the_run_a_separate_score_stores(
    study: Path, tmp_path: Path, tiny_encoder: str
) -> None:
    from meaningbench.db.study import copy_study

    separate = copy_study(study, tmp_path / "separate.mbstudy")
    request = SweepRequest(
        study, [tiny_encoder], "all", ["none", "sources"], [False], ["bertscore", "sbert_cosine"]
    )
    outcome = run_sweep(request, JobContext())
    assert len(outcome.configs) == 3 * 2 + 3
    assert [s.status for s in outcome.summaries] == ["done"] * 9
    # A `score` of each configuration's spec finds it cached: the same config hash.
    for config in outcome.configs:
        again = score_study(ScoreRequest(study, [config.spec]), JobContext())
        assert [s.status for s in again] == ["cached"], config.spec
    # Scored separately, one configuration at a time, with no cache to share: equal scores.
    MEMORY.clear()
    for config in outcome.configs:
        alone = score_study(
            ScoreRequest(separate, [config.spec], {"embedding_cache_mb": 0}), JobContext()
        )
        assert [s.status for s in alone] == ["done"]
    swept, apart = _scores(study), _scores(separate)
    assert swept.keys() == apart.keys() and len(swept) == 9 * 95
    assert max(abs(swept[k] - apart[k]) for k in swept) <= 1e-6


def test_every_text_is_encoded_once_per_metric_and_a_second_sweep_encodes_nothing(
    study: Path, tiny_encoder: str
) -> None:
    loaded = load_model(tiny_encoder)
    counter = ForwardCounter(loaded)
    sources, outputs = _texts(study)
    distinct = len(set(sources) | set(outputs))
    request = SweepRequest(
        study, [tiny_encoder], "0-3", ["none"], [False], ["bertscore", "sbert_cosine"]
    )
    try:
        outcome = run_sweep(request, JobContext())
        assert outcome.passes == {tiny_encoder: [[0, 1, 2, 3], [0, 1, 2, 3]]}
        # BERTScore and SBERT tokenise differently: one pass per text for each, not per layer.
        assert counter.sequences == 2 * distinct
        MEMORY.clear()
        again = run_sweep(request, JobContext())
        assert {s.status for s in again.summaries} == {"cached"}
        assert counter.sequences == 2 * distinct
    finally:
        counter.close()


def test_layers_that_do_not_fit_the_memory_cache_are_encoded_in_groups(
    study: Path, tiny_encoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from meaningbench.jobs import sweep

    monkeypatch.setattr(sweep, "MEMORY_SHARE", 10**6)  # room for about one layer at a time
    notices: list[str] = []
    outcome = run_sweep(
        SweepRequest(study, [tiny_encoder], "1-3"), JobContext(on_notice=notices.append)
    )
    assert outcome.passes[tiny_encoder] == [[1], [2], [3]]
    assert any("in 3 passes" in n for n in notices)
    assert [s.status for s in outcome.summaries] == ["done"] * 3


def test_the_table_marks_the_best_and_says_why_a_configuration_has_no_scores(
    study: Path, tiny_encoder: str
) -> None:
    from scipy import stats

    request = SweepRequest(study, [tiny_encoder], "2,3", ["none"], [True, False])
    outcome = run_sweep(request, JobContext())
    table = load_sweep_table(study, outcome, n_boot=200)
    rescaled = [r for r in table.rows if r.entry.variant.endswith("rescaled")]
    assert len(rescaled) == 2
    for row in rescaled:  # the tiny model has no baseline: said, not skipped
        assert "no rescaling baseline" in row.note and "meaningbench baseline" in row.note
        assert not row.best and row.n == 0
    raw = [r for r in table.rows if r.entry.variant.endswith("raw")]
    assert sum(r.best for r in raw) == 1 and sum(r.runner_up for r in raw) == 1
    best = max(raw, key=lambda r: r.pearson)
    assert best.best and table.comparison is not None
    # The meta-evaluation engine ranks the configurations: its first is the best, and
    # every scored configuration carries its significance cluster.
    assert table.ranking is not None and table.ranking.order[0] == best.entry.column
    assert table.ranking.test == "perm-both" and table.ranking.resamples == 200
    assert all(r.cluster is not None for r in raw) and best.cluster == 1
    assert table.to_json()["ranking"]["ranking"][0]["metric"] == best.entry.column
    # The coefficients are those of scipy on the stored values and the human scores.
    index = next(
        i for i, c in enumerate(outcome.configs)
        if c.layer == best.entry.layer and c.variant == best.entry.variant
    )  # fmt: skip
    conn = sqlite3.connect(study)
    human = dict(conn.execute("SELECT item_id, value FROM rating").fetchall())
    values = dict(
        conn.execute(
            "SELECT item_id, value FROM score WHERE run_id = ?", (outcome.summaries[index].run_id,)
        ).fetchall()
    )
    conn.close()
    ids = sorted(values)
    x = np.array([values[i] for i in ids])
    y = np.array([human[i] for i in ids])
    assert best.pearson == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-9)
    assert best.spearman == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-9)
    assert best.kendall == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-9)
    # CSMD labels are 0–100: on 0–1 both sides are divided by 100.
    assert best.rmse == pytest.approx(np.sqrt(np.mean((x / 100 - y / 100) ** 2)), abs=1e-9)
    assert best.mae == pytest.approx(np.mean(np.abs(x / 100 - y / 100)), abs=1e-9)


def test_idf_from_a_corpus_file_is_part_of_the_configuration(
    study: Path, tmp_path: Path, tiny_encoder: str
) -> None:
    corpus = write_corpus(tmp_path / "corpus.txt", ["a first document", "and a second one"])
    outcome = run_sweep(SweepRequest(study, [tiny_encoder], "3", [str(corpus)]), JobContext())
    assert [s.status for s in outcome.summaries] == ["done"]
    conn = sqlite3.connect(study)
    (config,) = conn.execute("SELECT config FROM metric_run").fetchone()
    conn.close()
    stored = json.loads(config)
    assert stored["idf"] is True and stored["idf_from"] == str(corpus.resolve())
    # Another corpus is another configuration.
    write_corpus(corpus, ["a changed corpus"])
    again = run_sweep(SweepRequest(study, [tiny_encoder], "3", [str(corpus)]), JobContext())
    assert [s.status for s in again.summaries] == ["done"]


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"layers": "2-5"}, UserError, r"layers: 4, 5 out of range of .*: it has layers 0–3"),
        ({"layers": "3-1"}, UserError, r"'3-1' runs backwards"),
        ({"layers": "top"}, UserError, r"'top' is not a layer number or range"),
        ({"metrics": ["bleu"]}, InputError, r"metrics: bleu; a sweep scores bertscore and"),
        ({"idf": ["corpus.txt"]}, UserError, r"idf: 'corpus.txt' is none, sources, .*no such"),
        ({"models": ["a,b"]}, UserError, r"cannot contain"),
        ({"models": ["/no/such/model"]}, UserError, r"does not exist"),
    ],
)
def test_bad_options_are_refused_with_a_message(
    study: Path, tiny_encoder: str, change: dict, error: type, message: str
) -> None:
    request = dataclasses.replace(SweepRequest(study, [tiny_encoder], "all"), **change)
    with pytest.raises(error, match=message):
        plan_sweep(request)


def test_idf_from_references_needs_references(study: Path, tiny_encoder: str) -> None:
    request = SweepRequest(study, [tiny_encoder], "1", ["references"])
    with pytest.raises(UserError, match="no item of the study has a human reference"):
        run_sweep(request, JobContext())


def test_the_command_prints_the_table_and_writes_csv_and_json(
    study: Path, tmp_path: Path, tiny_encoder: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    args = ["sweep", str(study), "--models", tiny_encoder, "--layers", "1-2", "--idf",
            "none,sources", "--boot", "100", "--quiet"]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "t.csv")]) == 0
    out = capsys.readouterr().out
    assert "best by pearson" in out and "Williams t" in out and "paired bootstrap" in out
    frame = pd.read_csv(tmp_path / "t.csv")
    assert len(frame) == 4 and frame["best"].sum() == 1
    assert set(frame["variant"]) == {"no idf, raw", "idf: sources, raw"}
    assert main([*args, "--out", str(tmp_path / "t.json")]) == 0
    data = json.loads((tmp_path / "t.json").read_text())
    assert len(data["rows"]) == 4 and data["best_vs_runner_up"]["n"] == 95
    assert main(["sweep", str(study), "--rescale", "maybe"]) == 2
    assert "rescale: 'maybe' is neither on nor off" in capsys.readouterr().err
    assert main(["sweep", str(study), "--out", str(tmp_path / "t.txt")]) == 2
    assert "write a .csv or a .json file" in capsys.readouterr().err


def test_a_cancelled_sweep_keeps_its_finished_runs_and_a_new_one_resumes(
    study: Path, tiny_encoder: str
) -> None:
    from meaningbench.runtime import Progress

    ctx = JobContext()

    def report(p: Progress) -> None:
        if "layer=2" in p.message:  # the second configuration is being scored
            ctx.cancel.cancel()

    ctx.report = report
    ctx.min_interval_s = 0.0
    request = SweepRequest(study, [tiny_encoder], "1-3")
    outcome = run_sweep(request, ctx)
    statuses = [s.status for s in outcome.summaries]
    assert statuses[0] == "done" and statuses[-1] == "cancelled"
    again = run_sweep(request, JobContext())
    assert [s.status for s in again.summaries][0] == "cached"
    assert {s.status for s in again.summaries} <= {"cached", "done"}
