"""What a write changed, as one value: built, combined, and told by a running job."""

from __future__ import annotations

import pickle

from meaningbench.runtime import JobContext, run_job
from meaningbench.runtime.changes import EMPTY, StudyChanges, Wrote, changes_of


def test_changes_combine_by_union_and_tell_what_is_new() -> None:
    a = StudyChanges.of(ratings=[1, 2], scores={"bleu": [1]})
    b = StudyChanges.of(ratings=[2, 3], scores=[("bleu", [2]), ("sari", [3])], runs=True)
    both = a | b
    assert both.ratings == {1, 2, 3}
    assert both.scores_by_label == {"bleu": {1, 2}, "sari": {3}}
    assert both.scored_items == {1, 2, 3} and both.runs and not both.everything
    # What `both` says beyond `a`: the rest of the scores and ratings, and the new runs.
    rest = both - a
    assert rest == StudyChanges.of(ratings=[3], scores={"bleu": [2], "sari": [3]}, runs=True)
    assert not (both - both) and (both - both) == EMPTY
    assert a | EMPTY == a and EMPTY | a == a


def test_empty_changes_are_false_and_anything_is_true() -> None:
    assert not EMPTY and not StudyChanges.of(ratings=[], scores={})
    assert StudyChanges(settings=True) and StudyChanges.of(label_sets=["fixed"])
    assert StudyChanges.of(scores={"bleu": [4]})


def test_a_result_carries_its_changes() -> None:
    changes = StudyChanges(everything=True)
    assert changes_of(changes) is changes
    assert changes_of(Wrote("report", changes)) is changes
    assert changes_of("a read's value") == EMPTY


def test_changes_cross_a_process_boundary_unchanged() -> None:
    changes = StudyChanges.of(ratings=[5], scores={"chrf": [5, 6]}, label_sets=["x"])
    assert pickle.loads(pickle.dumps(changes)) == changes


def test_a_job_tells_its_changes_while_it_runs() -> None:
    told: list[StudyChanges] = []

    def job(ctx: JobContext) -> StudyChanges:
        ctx.changed(StudyChanges.of(scores={"bleu": [1]}))
        ctx.changed(EMPTY)  # nothing changed: nobody is told
        ctx.changed(StudyChanges.of(scores={"bleu": [2]}))
        return StudyChanges.of(scores={"bleu": [1, 2]})

    ended = run_job(job, JobContext(on_changes=told.append))
    assert told == [StudyChanges.of(scores={"bleu": [1]}), StudyChanges.of(scores={"bleu": [2]})]
    assert ended.value == StudyChanges.of(scores={"bleu": [1, 2]})
    # Without a listener, telling is no error.
    assert run_job(job, JobContext()).outcome == "done"


def test_scenes_combine_by_source_and_tell_what_is_new() -> None:
    a = StudyChanges.of(scenes=["s1"])
    b = StudyChanges.of(scenes=["s1", "s2"], settings=True)
    assert a and (a | b).scenes == {"s1", "s2"} and (a | b).settings
    assert b - a == StudyChanges.of(scenes=["s2"], settings=True)
    assert not (a - b) and a != StudyChanges(everything=True)


def test_notes_name_the_flagged_items_combine_and_tell_what_is_new() -> None:
    a = StudyChanges.of(notes=[4])
    b = StudyChanges.of(notes=[4, 7], ratings=[7])
    assert a and not StudyChanges.of(notes=[]) and a != StudyChanges.of(ratings=[4])
    assert (a | b).notes == {4, 7} and (a | b).ratings == {7}
    assert b - a == StudyChanges.of(notes=[7], ratings=[7]) and not (a - b)
    assert pickle.loads(pickle.dumps(b)) == b
