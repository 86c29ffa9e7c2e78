"""The scoring job on real study files: cached and stale scores, runs, cancel and resume,
failures, unavailable metrics, registered models, the worker pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sacrebleu
from sqlalchemy import select, text

from meaningbench.analysis.score_columns import score_matrix
from meaningbench.db.models import MetricRun, RegisteredModel, Score
from meaningbench.db.study import Study
from meaningbench.errors import InputError
from meaningbench.jobs.metric_listing import list_metrics
from meaningbench.jobs.metric_specs import expand_specs
from meaningbench.jobs.score_exec import BROKEN_AFTER, FIRST_CHUNK
from meaningbench.jobs.score_store import load_items, registered_models
from meaningbench.jobs.scoring import MetricRunSummary, ScoreRequest, score_study
from meaningbench.metrics.base import input_hash
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric
from meaningbench.metrics.names import parse_spec, split_specs
from meaningbench.metrics.registry import metric_classes
from meaningbench.runtime import JobContext
from tests.jobs.conftest import fill

NEVER = {"pool": "never"}


def run(study: Study, metrics: list[str], options: dict[str, Any] | None = None, **kw: Any):
    request = ScoreRequest(study.path, metrics, {**NEVER, **(options or {})}, **kw)
    return score_study(request, JobContext(), **{k: v for k, v in kw.items() if k == "on_batch"})


def by_label(summaries: list[MetricRunSummary]) -> dict[str, MetricRunSummary]:
    """Summaries by metric name (each test runs one configuration of a metric)."""
    return {s.metric: s for s in summaries}


def item_rows(study: Study) -> list[tuple[int, str, str, str]]:
    with study.session() as s:
        return list(s.execute(text("SELECT id, source, output, refs FROM item ORDER BY id")))


def scores_of(study: Study, metric: str) -> dict[int, Score]:
    with study.session() as s:
        rows = s.execute(
            select(Score)
            .join(MetricRun, MetricRun.id == Score.run_id)
            .where(MetricRun.metric == metric)
        ).scalars()
        out: dict[int, Score] = {}
        for row in rows:
            assert row.item_id not in out, "one score row per (config, item)"
            out[row.item_id] = row
        return out


def runs(study: Study) -> list[MetricRun]:
    with study.session() as s:
        return list(s.execute(select(MetricRun).order_by(MetricRun.id)).scalars())


def test_scores_equal_the_metric_and_runs_are_recorded(study_with_items: Study) -> None:
    study = study_with_items
    summaries = run(study, ["bleu,sari", "fkgl"])
    assert [(s.metric, s.status, s.scored, s.cached, s.failed) for s in summaries] == [
        ("bleu", "done", 48, 0, 0),
        ("sari", "done", 48, 0, 0),
        ("fkgl", "done", 48, 0, 0),
    ]
    bleu = scores_of(study, "bleu")
    for item_id, source, output, _ in item_rows(study):
        row = bleu[item_id]
        assert row.value == pytest.approx(sacrebleu.sentence_bleu(output, [source]).score)
        assert row.input_hash == input_hash(source, output, (source,))
        assert row.error is None and row.details["bp"] >= 0
    recorded = {r.metric: r for r in runs(study)}
    r = recorded["bleu"]
    assert r.status == "done" and r.n_items == 48 and r.n_failed == 0
    assert r.config == BleuMetric().config and r.config_hash == BleuMetric().config_hash()
    assert r.label == "bleu[refs=source]" and r.device == "cpu" and "sacrebleu" in r.versions
    assert r.finished_at is not None and r.elapsed_s > 0
    assert recorded["fkgl"].versions["textstat"]


def test_second_run_only_reads_the_cache(study_with_items: Study) -> None:
    first = run(study_with_items, ["bleu", "rouge1"])
    again = run(study_with_items, ["bleu", "rouge1"])
    assert [(s.status, s.scored, s.cached) for s in again] == [("cached", 0, 48)] * 2
    assert [s.run_id for s in again] == [s.run_id for s in first]
    assert len(runs(study_with_items)) == 2


def test_an_edited_output_is_scored_again(study_with_items: Study) -> None:
    study = study_with_items
    run(study, ["bleu", "compression"])
    item_id = item_rows(study)[5][0]
    with study.session() as s:
        s.execute(
            text("UPDATE item SET output = 'Something else entirely.' WHERE id = :i"),
            {"i": item_id},
        )
    summaries = by_label(run(study, ["bleu", "compression"]))
    assert (summaries["bleu"].scored, summaries["bleu"].cached) == (1, 47)
    assert summaries["bleu"].run_id != runs(study)[0].id
    rows = scores_of(study, "bleu")
    assert len(rows) == 48
    source = item_rows(study)[5][1]
    assert rows[item_id].value == pytest.approx(
        sacrebleu.sentence_bleu("Something else entirely.", [source]).score
    )
    assert rows[item_id].run_id == summaries["bleu"].run_id
    last = runs(study)[-1]
    assert (last.n_items, last.status) == (1, "done")


def test_reference_mode_and_distinct_columns(study_with_items: Study) -> None:
    study = study_with_items
    summaries = run(study, ["bleu", "bleu[lowercase]"], {"reference_mode": "references"})
    assert [s.label for s in summaries] == [
        "bleu[refs=references]",
        "bleu[refs=references,lowercase=true]",
    ]
    import json

    with study.session() as s:
        frame = score_matrix(s)
    assert set(frame.columns) == {"bleu[refs=references]", "bleu[refs=references,lowercase=true]"}
    for item_id, _source, output, refs in item_rows(study):
        expected = sacrebleu.sentence_bleu(output, json.loads(refs)).score
        assert frame.loc[item_id, "bleu[refs=references]"] == pytest.approx(expected)


def test_cancel_keeps_committed_batches_and_a_rerun_resumes(new_study: Study) -> None:
    fill(new_study, 300)
    ctx = JobContext()
    seen: list[int] = []

    def on_batch(label: str, ids: list[int]) -> None:
        seen.extend(ids)
        ctx.cancel.cancel()  # the user presses Cancel during the first batch

    request = ScoreRequest(new_study.path, ["bleu", "sari"], dict(NEVER))
    summaries = score_study(request, ctx, on_batch=on_batch)
    assert [(s.metric, s.status, s.scored) for s in summaries] == [
        ("bleu", "cancelled", FIRST_CHUNK),
        ("sari", "cancelled", 0),
    ]
    assert summaries[1].run_id is None
    (cancelled,) = runs(new_study)
    assert (cancelled.status, cancelled.n_items) == ("cancelled", FIRST_CHUNK)
    assert set(scores_of(new_study, "bleu")) == set(seen)

    resumed = by_label(run(new_study, ["bleu", "sari"]))
    assert (resumed["bleu"].scored, resumed["bleu"].cached) == (300 - FIRST_CHUNK, FIRST_CHUNK)
    assert resumed["sari"].scored == 300
    assert len(scores_of(new_study, "bleu")) == 300


def test_a_metric_that_raises_on_one_item(new_study: Study, test_metrics: None) -> None:
    ids = fill(new_study, 60)
    bad = ids[37]
    with new_study.session() as s:
        s.execute(text("UPDATE item SET output = 'it goes BOOM here' WHERE id = :i"), {"i": bad})
    summaries = by_label(run(new_study, ["test_flaky", "bleu"]))
    flaky = summaries["test_flaky"]
    assert (flaky.status, flaky.scored, flaky.failed) == ("done", 59, 1)
    assert summaries["bleu"].status == "done"
    rows = scores_of(new_study, "test_flaky")
    assert rows[bad].value is None and rows[bad].error == "ValueError: cannot score BOOM"
    assert rows[ids[36]].value == float(len(item_rows(new_study)[36][2]))
    recorded = [r for r in runs(new_study) if r.metric == "test_flaky"][0]
    assert (recorded.n_items, recorded.n_failed) == (60, 1)
    # The failed item is tried again on the next run; the others are cached.
    again = by_label(run(new_study, ["test_flaky"]))["test_flaky"]
    assert (again.scored, again.failed, again.cached) == (0, 1, 59)


def test_a_broken_metric_stops_early_and_the_others_run(
    new_study: Study, test_metrics: None
) -> None:
    from tests.jobs.conftest import BrokenMetric

    fill(new_study, 200)
    summaries = by_label(run(new_study, ["test_broken", "compression"]))
    broken = summaries["test_broken"]
    assert broken.status == "failed" and broken.error == "RuntimeError: model missing"
    assert broken.scored == 0
    assert BrokenMetric.calls <= 1 + BROKEN_AFTER
    assert summaries["compression"].status == "done"
    assert [r.status for r in runs(new_study) if r.metric == "test_broken"] == ["failed"]


def test_an_unavailable_metric_says_why(study_with_items: Study, test_metrics: None) -> None:
    summaries = by_label(run(study_with_items, ["test_unavailable", "compression"]))
    gone = summaries["test_unavailable"]
    assert (gone.status, gone.run_id, gone.error) == (
        "unavailable",
        None,
        "needs a thing this machine lacks",
    )
    assert summaries["compression"].status == "done"


def test_batches_are_reported_and_subsets_scored(study_with_items: Study) -> None:
    ids = [row[0] for row in item_rows(study_with_items)]
    calls: list[tuple[str, list[int]]] = []
    request = ScoreRequest(study_with_items.path, ["sari"], dict(NEVER), item_ids=ids[:10])
    (summary,) = score_study(request, JobContext(), on_batch=lambda lb, i: calls.append((lb, i)))
    assert summary.scored == 10
    assert {label for label, _ in calls} == {"sari[refs=source]"}
    assert sorted(i for _, batch in calls for i in batch) == ids[:10]


def test_registered_models_run_under_their_name(
    study_with_items: Study, test_metrics: None, tmp_path: Path
) -> None:
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "value.txt").write_text("42")
    with study_with_items.session() as s:
        s.add(RegisteredModel(name="my-model", metric="test_model", path=str(model), card={}))
    (summary,) = run(study_with_items, ["test_model@my-model"])
    assert (summary.label, summary.status, summary.scored) == ("test_model@my-model", "done", 48)
    (recorded,) = runs(study_with_items)
    assert recorded.config["model"] == str(model) and recorded.label == "test_model@my-model"
    assert recorded.model_id == str(model)
    assert {s.value for s in scores_of(study_with_items, "test_model").values()} == {42.0}

    listed = {m.name: m for m in list_metrics(study_with_items.path)}
    assert listed["test_model@my-model"].available is True
    assert listed["test_model@my-model"].family == "trained"
    specs, is_all = expand_specs(["all"], registered_models(study_with_items))
    assert is_all
    # "all" is every metric but those that run only when named (an LLM judge).
    every = {n for n, c in metric_classes().items() if c.in_all}
    assert {s.text for s in specs} >= every | {"test_model@my-model"}
    with pytest.raises(InputError, match="no model named"):
        run(study_with_items, ["test_model@other"])


def test_specs_are_parsed_and_bad_ones_refused(study_with_items: Study) -> None:
    assert split_specs("bleu,sari[item_variant=easse,deletion=precision], meteor") == [
        "bleu",
        "sari[item_variant=easse,deletion=precision]",
        "meteor",
    ]
    spec = parse_spec("sari[item_variant=easse;lowercase=false]")
    assert spec.options == {"item_variant": "easse", "lowercase": False}
    assert parse_spec("bleu[lowercase]").options == {"lowercase": True}
    assert parse_spec("meaningbert@my-model").model == "my-model"
    for bad in (["no_such_metric"], ["bleu[colour=red]"], ["sari[item_variant=paper]"], ["bl eu"]):
        with pytest.raises(InputError):
            run(study_with_items, bad)


def test_list_metrics_describes_the_battery() -> None:
    listed = {m.name: m for m in list_metrics()}
    for name in ("bleu", "chrf", "ter", "rouge1", "rouge2", "rougel", "meteor", "sari",
                 "ibleu", "fkbleu", "fkgl", "compression", "edit_similarity"):  # fmt: skip
        entry = listed[name]
        assert set(entry.to_dict()) >= {
            "name", "label", "family", "needs_references", "needs_model", "available", "reason"
        }  # fmt: skip
        assert entry.available is True, entry.reason
    assert listed["fkgl"].family == "readability"
    assert listed["sari"].needs_references is True


def test_the_pool_gives_the_same_scores_as_this_process(tmp_path: Path, test_metrics: None) -> None:
    from meaningbench.db.study import create_study

    # test_flaky is not parallel-safe: it is scored here while the workers score the others.
    names = ["sari", "ter", "test_flaky", "rougel", "chrf", "fkbleu"]
    results = {}
    for mode, method in (("never", None), ("always", "fork"), ("always", "spawn")):
        study = create_study(tmp_path / f"{mode}-{method}.mbstudy")
        try:
            fill(study, 240, with_refs=True)
            options = {"pool": mode, "workers": 2, "reference_mode": "references"}
            if method:
                options["start_method"] = method
            summaries = score_study(ScoreRequest(study.path, names, options), JobContext())
            assert {s.status for s in summaries} == {"done"}, summaries
            results[method] = {
                name: {
                    i: (r.value, r.raw, r.details, r.input_hash)
                    for i, r in scores_of(study, name).items()
                }
                for name in names
            }
        finally:
            study.close()
    assert results["fork"] == results[None]
    assert results["spawn"] == results[None]
    assert len(results[None]["sari"]) == 240


def test_pairs_carry_resolved_references(study_with_items: Study) -> None:
    # What a metric receives: the item's references in `references` mode, else its source.
    from meaningbench.jobs.score_hashes import Hashes

    items = load_items(study_with_items)
    hashes = Hashes(items)
    refs, digests = hashes.get("references")
    assert refs[0] == items[0].references and len(refs[0]) == 2
    assert digests[0] == input_hash(items[0].source, items[0].output, items[0].references)
    refs, _ = hashes.get("source")
    assert refs[0] == (items[0].source,)
    refs, digests = hashes.get(None)
    assert refs[0] == () and digests[0] == input_hash(items[0].source, items[0].output)
