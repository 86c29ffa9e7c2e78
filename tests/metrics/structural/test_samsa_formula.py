"""SAMSA on hand-built cases: every expected number is worked out from the paper's formula.

Source: "The cat sat on the mat and the dog barked at the postman."
  scene 1: main relation "sat", participants "The cat" [cat], "on the mat" [mat]
  scene 2: main relation "barked", participants "the dog" [dog], "at the postman" [postman]
n_in = 2. SAMSA = (n_out / n_in²)·Σ scene scores; scene = ½·MR + ½·mean(participants).
"""

from __future__ import annotations

import pytest

from meaningbench.metrics.structural.alignment import WordAligner
from meaningbench.metrics.structural.samsa_core import score_samsa
from meaningbench.metrics.structural.scenes import Participant, SceneSpec
from meaningbench.metrics.structural.tokens import words

SOURCE = "The cat sat on the mat and the dog barked at the postman."


def _scenes() -> list[SceneSpec]:
    tokens = tuple(words(SOURCE))
    assert tokens[2] == "sat" and tokens[9] == "barked" and tokens[12] == "postman"
    return [
        SceneSpec(tokens, (2,), (Participant((0, 1), (1,)), Participant((3, 4, 5), (5,)))),
        SceneSpec(
            tokens, (9,), (Participant((7, 8), (8,)), Participant((10, 11, 12), (12,))), position=1
        ),
    ]


ALIGNER = WordAligner(use_lemmas=True, embedder=None)


def test_split_into_two_sentences_keeping_everything_scores_100() -> None:
    r = score_samsa(_scenes(), "The cat sat on the mat. The dog barked at the postman.", ALIGNER)
    assert (r.n_scenes, r.n_sentences) == (2, 2)
    # (2 / 2²)·(1 + 1) = 1
    assert 100 * r.samsa == pytest.approx(100.0)
    assert [s.sentence for s in r.scenes] == [0, 1]


def test_kept_as_one_sentence_scores_50_and_abl_100() -> None:
    r = score_samsa(_scenes(), SOURCE, ALIGNER)
    # (1 / 2²)·(1 + 1) = 0.5: the identity fails SAMSA by design
    assert 100 * r.samsa == pytest.approx(50.0)
    assert 100 * r.samsa_abl == pytest.approx(100.0)
    assert [s.sentence for s in r.scenes] == [0, 0]


def test_more_output_sentences_than_scenes_scores_0() -> None:
    out = "The cat sat. It was on the mat. The dog barked at the postman."
    r = score_samsa(_scenes(), out, ALIGNER)
    assert r.n_sentences == 3 and r.penalised
    assert r.samsa == 0.0
    # SAMSA_abl has no splitting penalty: scene 1 lost "mat" in its sentence
    # (½·1 + ½·(1 + 0)/2 = 0.75), scene 2 kept everything (1) → (0.75 + 1) / 2
    assert r.samsa_abl == pytest.approx((0.75 + 1.0) / 2)


def test_a_dropped_participant_lowers_the_score_by_the_formula() -> None:
    full = score_samsa(_scenes(), "The cat sat on the mat. The dog barked at the postman.", ALIGNER)
    dropped = score_samsa(_scenes(), "The cat sat. The dog barked at the postman.", ALIGNER)
    # scene 1 = ½·1 + ½·(1 + 0)/2 = 0.75; scene 2 = 1; SAMSA = (2/4)·1.75 = 0.875
    assert 100 * dropped.samsa == pytest.approx(87.5)
    # one of k = 2 participants lost: the loss is (n_out/n_in²)·½·(1/k) = 0.5·0.5·0.5
    assert full.samsa - dropped.samsa == pytest.approx((2 / 2**2) * 0.5 * (1 / 2))
    scene1 = dropped.scenes[0]
    assert scene1.main_relation.found is True
    assert [p.found for p in scene1.participants] == [True, False]
    assert scene1.participants[1].centre == "mat"


def test_a_lost_main_relation_costs_half_a_scene() -> None:
    r = score_samsa(_scenes(), "The cat on the mat. The dog barked at the postman.", ALIGNER)
    # scene 1 = ½·0 + ½·1 = 0.5 → (2/4)·(0.5 + 1)
    assert r.samsa == pytest.approx(0.5 * 1.5)


def test_lemmas_align_inflected_forms() -> None:
    r = score_samsa(_scenes(), "The cats sit on mats. Dogs bark at postmen.", ALIGNER)
    assert r.samsa == pytest.approx(1.0)
    exact_only = WordAligner(use_lemmas=False)
    r2 = score_samsa(_scenes(), "The cats sit on mats. Dogs bark at postmen.", exact_only)
    assert r2.samsa < 0.5


def test_implicit_participant_and_participantless_scene_score_half_their_part() -> None:
    tokens = tuple(words("It rained and the window was broken."))
    rained = SceneSpec(tokens, (1,), ())
    broken = SceneSpec(tokens, (6,), (Participant((3, 4), (4,)), Participant((), ())), position=1)
    r = score_samsa([rained, broken], "It rained. The window was broken.", ALIGNER)
    # rained: ½·1 + ½·½ = 0.75; broken: ½·1 + ½·(1 + ½)/2 = 0.875; (2/4)·1.625
    assert r.samsa == pytest.approx(0.5 * (0.75 + 0.875))


def test_empty_output_scores_zero_and_scenes_are_required() -> None:
    r = score_samsa(_scenes(), "   ", ALIGNER)
    assert r.n_sentences == 0 and r.samsa == 0.0 and r.samsa_abl == 0.0
    with pytest.raises(ValueError):
        score_samsa([], "anything", ALIGNER)


def test_details_name_the_matched_sentence_and_the_parts_found() -> None:
    r = score_samsa(_scenes(), "The dog barked at the postman. The cat sat.", ALIGNER)
    d = r.to_details()
    assert d["sentences"] == ["The dog barked at the postman.", "The cat sat."]
    assert [s["sentence"] for s in d["scenes"]] == [1, 0]
    assert d["scenes"][0]["main_relation"]["matches"] == ["sat→sat (exact)"]
    assert d["scenes"][0]["participants"][1]["found"] is False


def test_details_hold_every_field_of_the_result() -> None:
    import dataclasses

    r = score_samsa(_scenes(), "The cat sat. The dog barked at the postman.", ALIGNER)
    assert r.to_details() == dataclasses.asdict(r)
