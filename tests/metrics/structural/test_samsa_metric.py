"""SAMSA and SAMSA_abl as battery metrics reading scenes from a real study file, through
what the scoring job hands them (`jobs.study_inputs`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.core.keys import source_group_key
from meaningbench.jobs.scene_import import import_ucca
from meaningbench.jobs.scene_store import replace_scenes
from meaningbench.jobs.study_inputs import StudyFileInputs
from meaningbench.metrics.base import Pair
from meaningbench.metrics.registry import create_metric, metric_classes
from meaningbench.metrics.structural.samsa import NO_SCENES, SamsaMetric
from meaningbench.metrics.structural.scenes import Participant, SceneSpec
from meaningbench.metrics.structural.tokens import words
from tests.metrics.structural.helpers import add_items

DATA = Path(__file__).parent / "data"
STORM = "After the storm passed, the old fisherman repaired his boat and sailed to Port Isaac."


def _pairs(study, rows) -> list[Pair]:
    ids = add_items(study, rows)
    return [
        Pair(i, src, out, (src,), system) for i, (src, out, system) in zip(ids, rows, strict=True)
    ]


def _reading(metric, study):
    metric.use_study(StudyFileInputs(study.path))
    return metric


def test_both_metrics_are_registered() -> None:
    classes = metric_classes()
    assert classes["samsa"].info.family == "structural"
    assert classes["samsa_abl"].info.label == "SAMSA_abl"


def test_scores_from_imported_ucca_scenes(new_study) -> None:
    outputs = [
        # 3 sentences for 3 scenes; "sailed" is matched to the third sentence, which lost
        # the remote participant "fisherman" ("He"): ½·1 + ½·(0 + 1)/2 = 0.75.
        # SAMSA = (3/3²)·(1 + 1 + 0.75)
        ("The storm passed. The old fisherman repaired his boat. He sailed to Port Isaac.", 3 / 9 * 2.75, 2.75 / 3),
        # the source itself: 1 sentence, everything kept: (1/9)·3
        (STORM, 1 / 9 * 3, 1.0),
    ]  # fmt: skip
    pairs = _pairs(new_study, [(STORM, out, f"sys{n}") for n, (out, _, _) in enumerate(outputs)])
    with new_study.session() as s:
        import_ucca(s, [DATA / "storm.xml"])

    samsa = _reading(create_metric("samsa", embeddings=False), new_study)
    abl = _reading(create_metric("samsa_abl", embeddings=False), new_study)
    got, got_abl = samsa.score_batch(pairs), abl.score_batch(pairs)
    for (_, expected, expected_abl), score, score_abl in zip(outputs, got, got_abl, strict=True):
        assert score.error is None
        assert score.raw == pytest.approx(expected)
        assert score.value == pytest.approx(100 * expected)
        assert score_abl.value == pytest.approx(100 * expected_abl)
    details = got[0].details
    assert details["scene_origin"] == "ucca"
    assert [sc["sentence"] for sc in details["scenes"]] == [0, 1, 2]
    assert details["scenes"][2]["participants"][0]["found"] is False


def test_pairs_without_scenes_get_the_explaining_error(new_study) -> None:
    pairs = _pairs(new_study, [("A source nobody annotated.", "An output.", "x")])
    scores = _reading(SamsaMetric(embeddings=False), new_study).score_batch(pairs)
    assert scores[0].value is None and scores[0].error == NO_SCENES
    # without any study the same message explains what to do
    assert SamsaMetric(embeddings=False).score_batch(pairs)[0].error == NO_SCENES


def test_manual_scenes_win_over_parser_scenes(new_study) -> None:
    src = "The cat sat on the mat and the dog barked."
    pairs = _pairs(new_study, [(src, "The cat sat on the mat. The dog barked.", "x")])
    t = tuple(words(src))
    manual = [
        SceneSpec(t, (2,), (Participant((0, 1), (1,)), Participant((3, 4, 5), (5,)))),
        SceneSpec(t, (9,), (Participant((7, 8), (8,)),)),
    ]
    parser = [SceneSpec(t, (2,), (Participant((0, 1), (1,)),), origin="parser")]
    with new_study.session() as s:
        replace_scenes(s, source_group_key(src), parser, origin="parser")
        replace_scenes(s, source_group_key(src), manual, origin="manual")
    best = _reading(SamsaMetric(embeddings=False), new_study).score_batch(pairs)[0]
    assert best.details["scene_origin"] == "manual" and best.details["n_scenes"] == 2
    assert best.value == pytest.approx(100.0)
    only_parser = _reading(
        SamsaMetric(embeddings=False, scene_origin="parser"), new_study
    ).score_batch(pairs)[0]
    # one scene, two sentences: penalised to 0
    assert only_parser.details["n_scenes"] == 1 and only_parser.value == 0.0


def test_config_hash_ignores_where_the_study_lies() -> None:
    a = SamsaMetric(embeddings=False)
    a.use_study(StudyFileInputs("/a/one.mbstudy"))
    b = SamsaMetric(embeddings=False)
    b.use_study(StudyFileInputs("/b/two.mbstudy"))
    assert a.config_hash() == b.config_hash()
    assert a.config_hash() != SamsaMetric().config_hash()
    # The study is the job's to hand over, not an option a metric is configured with.
    with pytest.raises(ValueError):
        SamsaMetric(study="/a/one.mbstudy")
    with pytest.raises(ValueError):
        SamsaMetric(scene_origin="guess")


def test_embedding_similarity_aligns_a_synonym_main_relation() -> None:
    src = "Mary moved to Boston and found a job."
    t = tuple(words(src))
    scenes = [
        SceneSpec(t, (1,), (Participant((0,), (0,)), Participant((2, 3), (3,)))),
        SceneSpec(t, (5,), (Participant((0,), (0,), remote=True), Participant((6, 7), (7,)))),
    ]
    pair = Pair(1, src, "Mary relocated to Boston. Mary found a job.", (src,))
    plain = SamsaMetric(embeddings=False)
    plain.use_scenes(lambda pairs: {1: scenes})
    with_emb = SamsaMetric(embeddings=True)
    with_emb.use_scenes(lambda pairs: {1: scenes})
    # without embeddings "relocated" ≠ "moved": scene 1 = ½·0 + ½·1 → (2/4)·(0.5 + 1)
    assert plain.score_batch([pair])[0].raw == pytest.approx(0.75)
    scored = with_emb.score_batch([pair])[0]
    assert scored.raw == pytest.approx(1.0)
    assert "embedding" in scored.details["scenes"][0]["main_relation"]["matches"][0]


def test_the_scoring_job_runs_samsa_on_the_study_scenes(new_study) -> None:
    """Through the battery's job: scores land in the study, items without scenes say why."""
    from meaningbench.analysis.score_columns import score_matrix
    from meaningbench.jobs.base import JobContext
    from meaningbench.jobs.scoring import ScoreRequest, score_study

    ids = add_items(
        new_study,
        [
            (STORM, "The storm passed. The old fisherman repaired his boat. He sailed to Port Isaac.", "a"),
            ("Nobody drew scenes for this one.", "Nobody did.", "a"),
        ],
    )  # fmt: skip
    with new_study.session() as s:
        import_ucca(s, [DATA / "storm.xml"])
    spec = "samsa[embeddings=false]"  # the job tells SAMSA which study holds the scenes
    [summary] = score_study(ScoreRequest(new_study.path, [spec]), JobContext())
    assert (summary.status, summary.scored, summary.failed) == ("done", 1, 1)
    with new_study.session() as s:
        values = score_matrix(s)
    column = values.columns[0]
    assert values.loc[ids[0], column] == pytest.approx(100 * 3 / 9 * 2.75)
    # where the study lies is no part of the cached config: a second run finds the cache
    [again] = score_study(ScoreRequest(new_study.path, [spec]), JobContext())
    assert again.cached == 1


def test_editing_scenes_makes_exactly_their_scores_stale(new_study) -> None:
    from meaningbench.jobs.base import JobContext
    from meaningbench.jobs.scoring import ScoreRequest, score_study

    src_a = "The cat sat on the mat and the dog barked."
    src_b = "The bird sang in the tree."
    ids = add_items(
        new_study,
        [
            (src_a, "The cat sat on the mat. The dog barked.", "x"),
            (src_a, "The cat sat on the mat.", "y"),
            (src_b, "The bird sang.", "x"),
        ],
    )
    ta, tb = tuple(words(src_a)), tuple(words(src_b))
    two = [
        SceneSpec(ta, (2,), (Participant((0, 1), (1,)), Participant((3, 4, 5), (5,)))),
        SceneSpec(ta, (9,), (Participant((7, 8), (8,)),)),
    ]
    bird = [SceneSpec(tb, (2,), (Participant((0, 1), (1,)),))]
    with new_study.session() as s:
        replace_scenes(s, source_group_key(src_a), two, origin="manual")
        replace_scenes(s, source_group_key(src_b), bird, origin="manual")
    request = ScoreRequest(new_study.path, ["samsa[embeddings=false]"])
    [first] = score_study(request, JobContext())
    assert (first.scored, first.cached) == (3, 0)
    [again] = score_study(request, JobContext())
    assert (again.scored, again.cached) == (0, 3)

    # Re-annotate the first source with one scene: its two items are re-scored, not the bird.
    with new_study.session() as s:
        replace_scenes(s, source_group_key(src_a), two[:1], origin="manual")
    [after] = score_study(request, JobContext())
    assert (after.scored, after.cached) == (2, 1)
    from meaningbench.analysis.score_columns import score_matrix

    with new_study.session() as s:
        values = score_matrix(s).iloc[:, 0]
    # one scene now, and two output sentences: more sentences than scenes scores 0
    assert values[ids[0]] == 0.0
