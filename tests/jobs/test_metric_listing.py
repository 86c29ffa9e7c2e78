"""What the battery offers, as typed values: installed metrics, broken plugins and the models
registered in a study, and the `meaningbench metrics --json` entry each one gives."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.jobs.metric_listing import MetricListing, broken, list_metrics
from meaningbench.metrics.registry import BrokenPlugin, metric_classes

# The keys of an installed metric's entry, in the order `--json` writes them.
INSTALLED_KEYS = [
    "name", "label", "family", "needs_references", "needs_model", "available", "status",
    "reason", "fix", "description", "options", "package", "origin", "backend", "in_all",
    "not_in_all_why",
]  # fmt: skip


@pytest.fixture
def study_with_models(tmp_path: Path) -> Path:
    """A study with three registered models: one ready, one whose folder is gone, and one
    for a metric that is not installed."""
    from meaningbench.db.study import create_study
    from meaningbench.training.register import register_model

    path = tmp_path / "models.mbstudy"
    model = tmp_path / "model"
    model.mkdir()
    study = create_study(path)
    with study.session(write=True) as s:
        register_model(s, name="cue", path=model, card={}, metric="sbert_cosine")
        register_model(s, name="gone", path=tmp_path / "missing", card={}, metric="sbert_cosine")
        register_model(s, name="odd", path=model, card={}, metric="nosuchmetric")
    study.close()
    return path


def test_every_installed_metric_is_listed_with_whether_all_runs_it() -> None:
    listed = {m.name: m for m in list_metrics()}
    classes = metric_classes()
    assert set(classes) <= set(listed)
    for name, cls in classes.items():
        m = listed[name]
        assert list(m.to_dict()) == INSTALLED_KEYS
        assert m.options == cls.defaults and m.family == cls.info.family
        assert m.runs_in_all is cls.in_all
        # Only a metric that "all" leaves out says why, and always says something.
        assert bool(m.not_in_all_why) is not cls.in_all
    assert any(not m.runs_in_all for m in listed.values())  # the LLM judge


def test_registered_models_are_listed_after_the_metrics_with_why_one_cannot_run(
    study_with_models: Path,
) -> None:
    listed = list_metrics(study_with_models)
    trained = [m for m in listed if m.family == "trained"]
    assert listed[-len(trained) :] == trained  # after every installed metric
    by_name = {m.name: m for m in trained}
    cue = by_name["sbert_cosine@cue"]
    assert cue.available and cue.needs_model and cue.package == "study"
    assert cue.origin == "a model registered in models.mbstudy"
    assert cue.options == {"model": str(study_with_models.parent / "model")}
    assert not by_name["sbert_cosine@gone"].available
    assert "the model folder" in by_name["sbert_cosine@gone"].reason
    assert by_name["nosuchmetric@odd"].reason == "the metric 'nosuchmetric' is not installed"
    # A model says nothing of "all": its entry has no such keys, and "all" does not leave it out.
    entry = cue.to_dict()
    assert "in_all" not in entry and "not_in_all_why" not in entry
    assert list(entry) == INSTALLED_KEYS[:-2]
    assert cue.runs_in_all


def test_a_broken_plugin_is_listed_as_unavailable_with_its_error() -> None:
    plugin = BrokenPlugin("lab_broken", "lab.broken:Metric", "lab-metrics", "ImportError: no")
    m = broken(plugin)
    assert not m.available and m.status == "unavailable" and m.family == "plugin"
    assert m.reason == "the plugin failed to load (lab.broken:Metric): ImportError: no"
    assert m.to_dict()["options"] == {} and "in_all" not in m.to_dict()


def test_a_listing_crosses_a_process_boundary_unchanged(study_with_models: Path) -> None:
    # The battery dialog's list is built in a child process and pickled back.
    listed = list_metrics(study_with_models)
    assert pickle.loads(pickle.dumps(listed)) == listed
    assert all(isinstance(m, MetricListing) for m in listed)


def test_the_commands_json_is_the_listings_entries(
    study_with_models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["metrics", "--study", str(study_with_models), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["metrics"]
    assert printed == [m.to_dict() for m in list_metrics(study_with_models)]
