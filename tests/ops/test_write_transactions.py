"""Every op that writes takes the write lock when its transaction begins.

A deferred transaction that reads and then writes fails at once ("database is locked")
when another process committed in between, e.g. a score run (see
`meaningbench.db.study.Study.session`). The recorder listens to every engine of this process
on a real study file: a transaction that wrote (INSERT, UPDATE, DELETE) and did not begin
with `write=True` (BEGIN IMMEDIATE) is a fault, whichever op or engine function opened it.

Every public function of the ops modules is accounted for: a writing op is run here (RUN;
MODEL_RUN for those that need a tiny model, built from a config), an op that only reads is
run too and must write nothing (READS), and the rest are named with the reason (NOT_RUN for
ops this recorder cannot watch, NOT_OPS for the helpers beside the ops).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, select

import meaningbench.ops
from meaningbench.annotation.practice import add_practice
from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.annotation.side_by_side import ShownUnit
from meaningbench.db.engine import WRITE_OPTION
from meaningbench.db.models import Item
from meaningbench.db.study import Study, copy_study, open_study
from meaningbench.kits.making import make_kits
from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.ops import (
    campaign,
    disagreements,
    export,
    flag,
    judge,
    kits,
    labels,
    merge,
    practice,
    rate,
    scenes,
    score,
    settings,
    shards,
    skip,
    spans,
    sweep,
    train,
)
from meaningbench.queries.rating_cursor import ItemCursor, UnitCursor
from meaningbench.queries.study import NAME_KEY
from meaningbench.runtime import Job, JobContext
from tests.analysis.studybuild import add_items as add_pairs
from tests.analysis.studybuild import add_ratings, dataset_named
from tests.annotation.factories import regular_item
from tests.annotation.test_spans import PAIRS as SPAN_PAIRS
from tests.annotation.test_spans import _canonical_file
from tests.jobs.conftest import make_rows
from tests.jobs.studydata import add_items
from tests.metrics.neural.judge_models import tiny_judge
from tests.metrics.structural.test_ucca_import import DATA as UCCA
from tests.metrics.structural.test_ucca_import import STORM
from tests.training.conftest import tiny_encoder, tiny_request  # noqa: F401

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class Recorder:
    """The writing transactions on one study file, and those of them that began deferred.

    Other files (a kit being made, a copy being read) are no other process's to write.
    """

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.written = 0
        self.deferred: list[str] = []

    def begin(self, conn: Any) -> None:
        database = conn.engine.url.database  # None for an engine made from a connection
        conn.info["watched"] = database is not None and Path(database).resolve() == self.path
        conn.info["immediate"] = bool(conn.get_execution_options().get(WRITE_OPTION))
        conn.info["wrote"] = None

    def execute(self, conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if conn.info.get("wrote") is None and statement.lstrip().upper().startswith(WRITES):
            conn.info["wrote"] = statement

    def commit(self, conn: Any) -> None:
        wrote = conn.info.pop("wrote", None)
        if wrote is not None and conn.info.pop("watched", False):
            self.written += 1
            if not conn.info.pop("immediate", False):
                self.deferred.append(wrote)


@pytest.fixture
def recorder(study: Study) -> Iterator[Recorder]:
    rec = Recorder(study.path)
    hooks: list[tuple[str, Callable[..., None]]] = [
        ("begin", rec.begin),
        ("before_cursor_execute", rec.execute),
        ("commit", rec.commit),
    ]
    for name, fn in hooks:
        event.listen(Engine, name, fn)
    try:
        yield rec
    finally:
        for name, fn in hooks:
            event.remove(Engine, name, fn)


@pytest.fixture
def study(new_study: Study) -> Study:
    add_items(new_study, make_rows(24))  # two outputs of each source
    return new_study


def _first_item(study: Study) -> tuple[int, str, str]:
    with study.session() as s:
        row = s.execute(select(Item.id, Item.source_group, Item.source).limit(1)).one()
    return row[0], row[1], row[2]


def _guidelines() -> tuple[AnnotationSettings, dict[str, tuple[str, ...]]]:
    return AnnotationSettings(guidelines="Read twice."), {"guidelines": ("guidelines",)}


def _save_scenes(study: Study) -> Job:
    _, group, source = _first_item(study)
    words = tuple(source.split())
    return scenes.save_scenes(study, group, [SceneSpec(tokens=words, main_relation=(1,))])


def _queue(study: Study, rater: str) -> ItemCursor:
    return rate.open_rating(study, rater)(JobContext()).value


def _rate(queue: ItemCursor) -> Job:
    shown = queue.next()
    assert shown is not None
    values = {sc.name: 50.0 for sc in queue.scales}
    return rate.submit_rating(queue, shown.item_id, values, {}, shown.shown_at)


def _rate_and_undo(study: Study) -> Job:
    queue = _queue(study, "ann")
    submit, undo = _rate(queue), rate.undo_rating(queue)

    def run(ctx: JobContext) -> object:
        submit(ctx)
        return undo(ctx)

    return run


def _merge(study: Study) -> Job:
    """A merge of a copy of the study in which a rater has rated an item."""
    other = copy_study(study.path, study.path.parent / "other.mbstudy")
    with open_study(other) as copy:
        _rate(_queue(copy, "bob"))(JobContext())
    return merge.merge_job(study, other)


def _fix(study: Study) -> Job:
    """Published labels of two outputs, and the raw ratings of a file they came from."""
    pub = add_pairs(study, [("a b c", "a b", None), ("d e f", "d e", None)])
    add_ratings(study, "aggregate:pub", dict(zip(pub, [10.0, 50.0], strict=True)), kind="aggregate")
    raw = add_pairs(study, [("a b c", "a b", "s1"), ("d e f", "d e", "s1")], dataset="raw")
    for rater, values in (("r1", [80.0, 20.0]), ("r2", [60.0, 30.0])):
        add_ratings(study, rater, dict(zip(raw, values, strict=True)), origin="import:raw.csv")
    return labels.fix_job(study.path, "fixed", keep_unmatched=True, choose=True)


def _resolve(study: Study) -> Job:
    """Two raters far apart on one item, settled with an adjudicated score."""
    (item,) = add_pairs(study, [("a b c", "a b", "s1")], dataset="disagreed")
    add_ratings(study, "r1", {item: 10.0})
    add_ratings(study, "r2", {item: 90.0})
    return disagreements.resolve_job(study.path, item, "score", score=50.0)


def _open_sxs(study: Study) -> Job:
    """The side-by-side protocol set, and the opening of a rater's queue."""
    settings.store_settings(study, AnnotationSettings(protocol="sxs"), {"p": ("protocol",)})(
        JobContext()
    )
    return rate.open_side_by_side(study, "ann")


def _sxs_unit(study: Study) -> tuple[UnitCursor, ShownUnit]:
    """The side-by-side protocol set, and the first unit of a rater's queue."""
    queue = _open_sxs(study)(JobContext()).value
    unit = queue.next()
    assert unit is not None
    return queue, unit


def _sxs(study: Study) -> Job:
    sxs, unit = _sxs_unit(study)
    submit = rate.submit_unit(sxs, unit, {i: 50.0 for i in unit.item_ids}, {})
    undo = rate.undo_unit(sxs)

    def run(ctx: JobContext) -> object:
        submit(ctx)
        return undo(ctx)

    return run


def _sxs_skip(study: Study) -> Job:
    return skip.skip_unit(*_sxs_unit(study))


def _skip(study: Study) -> Job:
    queue = _queue(study, "ann")
    shown = queue.next()
    assert shown is not None
    return skip.skip_item(queue, shown.item_id)


def _flag_and_unflag(study: Study) -> Job:
    queue = _queue(study, "ann")
    item_id, _, _ = _first_item(study)
    flag_it, unflag_it = (
        flag.flag_item(queue, item_id, "cut off"),
        flag.unflag_item(queue, item_id),
    )

    def run(ctx: JobContext) -> object:
        flag_it(ctx)
        return unflag_it(ctx)

    return run


def _answer(study: Study) -> Job:
    add_practice(study, [("a b c", "a b", 40.0, 80.0, "b carries little")])
    block = practice.open_practice(study, "newcomer")(JobContext()).value
    (first,) = block.pending()
    return practice.answer_practice(block, first, 50.0)


def _import_ucca(study: Study) -> Job:
    """UCCA passages of the storm sentence, which the study holds."""
    add_pairs(study, [(STORM, "The storm passed.", "A")])
    return scenes.import_ucca_files(study, [UCCA / "storm.xml"])


def _import_ucca_report(study: Study) -> Job:
    add_pairs(study, [(STORM, "The storm passed.", "A")])
    return scenes.import_ucca_job(study, [UCCA / "storm.xml"])


def _propose(study: Study) -> Job:
    """Scenes proposed by a stand-in for the dependency parser (spaCy may be missing):
    one scene over each source, its second word the main relation."""
    add_pairs(study, [("The storm passed over the bay.", "The storm passed.", "A")])

    def whole(sources: Sequence[str]) -> list[list[SceneSpec]]:
        return [[SceneSpec(tokens=src.split(), main_relation=(1,))] for src in sources]

    return scenes.propose_scenes_job(study, propose=whole)


def _rated_kit(study: Study) -> Path:
    """The folder of one kit made from `study`, in which its rater rated an item."""
    out = study.path.parent / "kits"
    (made,) = make_kits(study, ["ann"], out)
    with open_study(made.path) as kit:
        _rate(_queue(kit, "ann"))(JobContext())
    return out


def _collect(study: Study) -> Job:
    return kits.collect_job(study, _rated_kit(study))


def _top_up(study: Study) -> Job:
    _rated_kit(study)
    return campaign.top_up_job(study.path, ["bob"], study.path.parent / "top-up")


def _import_spans(study: Study) -> Job:
    """A spans file of the pairs the study holds too, its protocol error spans."""
    with study.session(write=True) as s:
        ds = dataset_named(s, "wiki")
        s.add_all(regular_item(ds.id, src, out, system) for src, out, system in SPAN_PAIRS)
    settings.set_protocol(study, "esa")(JobContext())
    path = study.path.parent / "spans.jsonl"
    _canonical_file(path)
    return spans.import_spans_job(study, path)


def _shards_in(study: Study) -> Path:
    """The study's items exported as shards for one metric (the export gives it its id)."""
    pytest.importorskip("pyarrow", reason="the shard ops need pyarrow (the cluster extra)")
    folder = study.path.parent / "in"
    shards.export_shards_job(study.path, folder, ["compression"])(JobContext())
    return folder


def _score_shards(study: Study) -> Job:
    from meaningbench.cluster.work import plan_work

    work, manifest = plan_work(_shards_in(study), study.path.parent / "out", ["all"], "full")
    return shards.score_shards_job(work, manifest)


def _merge_shards(study: Study) -> Job:
    """The merge of the study's shards, scored here."""
    _score_shards(study)(JobContext())
    return shards.merge_shards_job(study.path, study.path.parent / "out")


def _export_shards(study: Study) -> Job:
    pytest.importorskip("pyarrow", reason="the shard ops need pyarrow (the cluster extra)")
    return shards.export_shards_job(study.path, study.path.parent / "in", ["compression"])


# The ops run here against a real study, each with what it needs.
RUN: dict[str, Callable[[Study], Job]] = {
    "settings.set_setting": lambda st: settings.set_setting(st, NAME_KEY, "Pilot"),
    "settings.store_settings": lambda st: settings.store_settings(st, *_guidelines()),
    "settings.save_study_settings": lambda st: settings.save_study_settings(
        st, NAME_KEY, "Pilot", [_guidelines()]
    ),
    "scenes.save_scenes": _save_scenes,
    "settings.set_language": lambda st: settings.set_language(st, "de"),
    "settings.set_protocol": lambda st: settings.set_protocol(st, "esa", hidden_number=True),
    "settings.add_rater_thresholds": lambda st: settings.add_rater_thresholds(
        st, {"min_agreement": 0.5}
    ),
    "labels.choose_job": lambda st: labels.choose_job(st.path, None),
    "rate.open_rating": lambda st: rate.open_rating(st, "ann"),
    "rate.open_side_by_side": _open_sxs,
    "rate.submit_rating": _rate_and_undo,
    "rate.undo_rating": _rate_and_undo,
    "kits.make_kits_job": lambda st: kits.make_kits_job(st, "ann, bob", st.path.parent / "kits"),
    "merge.merge_job": _merge,
    "labels.fix_job": _fix,
    "disagreements.resolve_job": _resolve,
    "rate.submit_unit": _sxs,
    "rate.undo_unit": _sxs,
    "skip.skip_item": _skip,
    "skip.skip_unit": _sxs_skip,
    "flag.flag_item": _flag_and_unflag,
    "flag.unflag_item": _flag_and_unflag,
    "practice.open_practice": lambda st: practice.open_practice(st, "newcomer"),
    "practice.answer_practice": _answer,
    "practice.add_practice_items": lambda st: practice.add_practice_items(
        st, [("a b c", "a b", 40.0, 80.0, "b carries little")]
    ),
    "kits.collect_job": _collect,
    "campaign.top_up_job": _top_up,
    "scenes.import_ucca_files": _import_ucca,
    "scenes.import_ucca_job": _import_ucca_report,
    "scenes.propose_scenes_job": _propose,
    "score.score_job": lambda st: partial(
        score.score_job, study_path=st.path, metrics=["compression"], options={"workers": 1}
    ),
    "spans.import_spans_job": _import_spans,
    "shards.export_shards_job": _export_shards,  # the study's id, made by its first export
    "shards.merge_shards_job": _merge_shards,
}


@dataclass(frozen=True)
class Models:
    """Tiny models built from a config: an encoder (BERT, 2 layers) and an LLM judge."""

    encoder: Path
    judge: str


def _rated(study: Study) -> None:
    """Human ratings of every item, for the ops that learn from them or correlate with them."""
    ids = [i for (i,) in _rows(study, select(Item.id).order_by(Item.id))]
    add_ratings(study, "rater", {i: float(10 + (37 * k) % 80) for k, i in enumerate(ids)})


def _rows(study: Study, query: Any) -> list[Any]:
    with study.session() as s:
        return list(s.execute(query).all())


def _train(study: Study, models: Models) -> Job:
    _rated(study)
    out = study.path.parent / "model"
    request = tiny_request(study, out, models.encoder, epochs=1, max_steps=2, sanity_n=5)
    return partial(train.train_job, request)


def _sweep(study: Study, models: Models) -> Job:
    _rated(study)
    request = sweep.SweepRequest(study.path, [str(models.encoder)], "1")
    return partial(sweep.sweep_job, request=request, n_boot=20)


def _judge(study: Study, models: Models) -> Job:
    spec = f"llm_judge[model={models.judge},max_tokens=2]"
    return partial(
        judge.judge_as_rater_job, study_path=study.path, spec=spec, rater="judge", device="cpu"
    )


# The ops that need a tiny model, run here against a real study as well.
MODEL_RUN: dict[str, Callable[[Study, Models], Job]] = {
    "judge.judge_as_rater_job": _judge,
    "sweep.sweep_job": _sweep,
    "train.train_job": _train,
}

# The ops that only read the study (or none): run here too, they must write nothing to it.
READS: dict[str, Callable[[Study], Job]] = {
    "shards.score_shards_job": _score_shards,  # writes result shards only
    "export.export_job": lambda st: partial(
        export.export_job, study_path=st.path, out=st.path.parent / "out.csv", ratings=True
    ),
    "score.list_metrics_job": lambda st: partial(score.list_metrics_job, study_path=st.path),
}

# The ops this recorder cannot watch, and why.
NOT_RUN = {
    "demo.build_demo_job": "builds a new study under a temporary name no other process "
    "knows (create_study, then the importer's own sqlite3 connection, which begins with "
    "BEGIN IMMEDIATE), moved into place when complete (tests/ops/test_demo.py runs it)",
    "shards.score_with_ray_job": "needs a Ray cluster; its writes to the study are "
    "export_shards_job's and merge_shards_job's, run here (tests/ops/test_shards.py runs it "
    "on a local Ray instance)",
    "importing.import_job": "writes through a sqlite3 connection of its own (no engine's "
    "events), beginning with BEGIN IMMEDIATE",
    "child_process.in_child_process": "runs another op (one of those here) in a child "
    "process, whose engines this process's recorder does not hear",
    "kits.send_back_job": "copies the kit through SQLite's backup API, in no transaction; "
    "it writes no study but the copy it makes",
    "score.close_gone_runs": "db.runs.interrupt_gone_runs writes through the raw sqlite3 "
    "connection inside its session(write=True), which the engine's events do not see "
    "(tests/ops/test_score.py runs it)",
}

# Public functions of the ops modules that are no op (no job), and what they are.
NOT_OPS = {
    "child_process.terminate_all": "ends the running child processes when the window closes",
    "kits.controls_passed": "words for a returned kit's controls",
    "kits.default_send_back_folder": "the folder Send back offers",
}


def _is_job(sig: inspect.Signature) -> bool:
    takes = {str(p.annotation) for p in sig.parameters.values()}
    returns = str(sig.return_annotation)
    return returns == "Job" or returns.startswith("Job[") or "JobContext" in takes


def _functions() -> dict[str, inspect.Signature]:
    """Every public function the ops modules define, by `module.name`."""
    found = {}
    for info in pkgutil.iter_modules(meaningbench.ops.__path__):
        module = importlib.import_module(f"meaningbench.ops.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and not name.startswith("_"):
                found[f"{info.name}.{name}"] = inspect.signature(fn)
    return found


def test_every_op_is_run_here_or_said_why_not() -> None:
    ops = {name for name, sig in _functions().items() if _is_job(sig)}
    assert ops == RUN.keys() | MODEL_RUN.keys() | READS.keys() | NOT_RUN.keys()


def test_every_other_function_of_the_ops_is_said_what_it_is() -> None:
    """A function the job check does not see (an op typed another way) fails here."""
    others = {name for name, sig in _functions().items() if not _is_job(sig)}
    assert others == NOT_OPS.keys()


@pytest.mark.parametrize("op", sorted(RUN))
def test_an_op_writes_in_transactions_begun_for_writing(
    op: str, study: Study, recorder: Recorder
) -> None:
    job = RUN[op](study)
    recorder.written, recorder.deferred = 0, []  # what the setting up wrote does not count
    job(JobContext())
    assert recorder.written > 0, f"{op} wrote nothing: the check saw no transaction"
    assert recorder.deferred == [], f"{op} wrote in a deferred transaction"


@pytest.fixture(scope="module")
def models(tiny_encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> Models:  # noqa: F811
    # Characters are the judge's tokens: a prompt with the study's sentences needs room.
    folder = tmp_path_factory.mktemp("judge")
    return Models(tiny_encoder, tiny_judge(folder, writes="0123456789", context=4096))


@pytest.mark.parametrize("op", sorted(MODEL_RUN))
def test_an_op_with_a_model_writes_in_transactions_begun_for_writing(
    op: str, study: Study, recorder: Recorder, models: Models
) -> None:
    job = MODEL_RUN[op](study, models)
    recorder.written, recorder.deferred = 0, []
    job(JobContext())
    assert recorder.written > 0, f"{op} wrote nothing: the check saw no transaction"
    assert recorder.deferred == [], f"{op} wrote in a deferred transaction"


@pytest.mark.parametrize("op", sorted(READS))
def test_an_op_that_reads_writes_nothing(op: str, study: Study, recorder: Recorder) -> None:
    job = READS[op](study)
    recorder.written, recorder.deferred = 0, []
    job(JobContext())
    assert recorder.written == 0, f"{op} wrote to the study it only reads"
