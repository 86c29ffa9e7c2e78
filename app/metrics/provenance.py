"""Where each metric's numbers come from: the reference implementation it reproduces and the
test that checks it against that implementation (or against hand-computed values).

The metric reference (resources/docs/metric-reference.md) prints this table; a test checks
that every registered metric has an entry and that each named test exists.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provenance:
    reference: str  # the implementation (package and function) or formula reproduced
    test: str  # pytest node id of the check: path::function


_LEX = "tests/metrics/test_lexical_oracles.py::"
_SAMSA_FORMULA = "tests/structural/test_samsa_formula.py::"

PROVENANCE: dict[str, Provenance] = {
    "bertscore": Provenance(
        "bert-score 0.3.13 `bert_score.score`",
        "tests/neural/test_bertscore.py::test_equals_bert_score",
    ),
    "blanc_help": Provenance(
        "blanc 0.3.4 `BlancHelp` (the authors' package)",
        "tests/neural/test_cloze.py::test_blanc_equals_the_authors_package",
    ),
    "bleu": Provenance(
        "sacrebleu `BLEU.sentence_score`", _LEX + "test_bleu_is_sacrebleu_sentence_bleu"
    ),
    "bleu_samsa_am": Provenance(
        "(BLEU + SAMSA) / 2 of the stored scores (Sulem et al. 2018), hand values",
        "tests/metrics/test_bleu_samsa.py::test_through_the_scoring_job_from_stored_scores",
    ),
    "bleu_samsa_gm": Provenance(
        "√(BLEU · SAMSA) of the stored scores (Sulem et al. 2018), hand values",
        "tests/metrics/test_bleu_samsa.py::test_through_the_scoring_job_from_stored_scores",
    ),
    "bleurt": Provenance(
        "bleurt-pytorch 0.0.1 `BleurtForSequenceClassification` (model code ported)",
        "tests/metrics/test_bleurt.py::test_logits_match_the_package_model",
    ),
    "chrf": Provenance(
        "sacrebleu `CHRF.sentence_score`", _LEX + "test_chrf_is_sacrebleu_sentence_chrf"
    ),
    "compression": Provenance(
        "EASSE compression ratio (characters)", _LEX + "test_surface_measures"
    ),
    "coverage": Provenance(
        "keyword masking and recovery (Coverage), checked by hand",
        "tests/neural/test_cloze.py::test_coverage_masks_the_top_keywords",
    ),
    "edit_similarity": Provenance(
        "rapidfuzz `Levenshtein.normalized_similarity`", _LEX + "test_surface_measures"
    ),
    "fkbleu": Provenance(
        "iBLEU × sigmoid(ΔFKGL) from sacrebleu and textstat",
        _LEX + "test_ibleu_and_fkbleu_from_their_parts",
    ),
    "fkgl": Provenance(
        "textstat `flesch_kincaid_grade`", _LEX + "test_fkgl_is_textstat_and_matches_a_hand_count"
    ),
    "ibleu": Provenance(
        "α·BLEU(refs) − (1 − α)·BLEU(source) from sacrebleu",
        _LEX + "test_ibleu_and_fkbleu_from_their_parts",
    ),
    "lens": Provenance(
        "lens-metric 0.2.0 `LENS.score` (scoring path ported)",
        "tests/metrics/test_lens.py::test_scores_match_the_package",
    ),
    "meaningbert": Provenance(
        "transformers `AutoModelForSequenceClassification` on the MeaningBERT checkpoint",
        "tests/neural/test_meaningbert.py::test_logit_is_the_score",
    ),
    "meteor": Provenance(
        "NLTK `meteor_score`", _LEX + "test_meteor_is_nltk_meteor_on_the_same_tokens"
    ),
    "questeval": Provenance(
        "questeval 0.2.4 `corpus_questeval`, run in its own environment",
        "tests/metrics/test_questeval.py::test_parity_with_questeval_in_its_environment",
    ),
    "rouge1": Provenance(
        "rouge-score `RougeScorer`", _LEX + "test_rouge_is_rouge_score_with_stemmer"
    ),
    "rouge2": Provenance(
        "rouge-score `RougeScorer`", _LEX + "test_rouge_is_rouge_score_with_stemmer"
    ),
    "rougel": Provenance(
        "rouge-score `RougeScorer`", _LEX + "test_rouge_is_rouge_score_with_stemmer"
    ),
    "samsa": Provenance(
        "the SAMSA formula (Sulem et al. 2018), hand values",
        _SAMSA_FORMULA + "test_a_dropped_participant_lowers_the_score_by_the_formula",
    ),
    "samsa_abl": Provenance(
        "the SAMSA_abl formula (Sulem et al. 2018), hand values",
        _SAMSA_FORMULA + "test_kept_as_one_sentence_scores_50_and_abl_100",
    ),
    "sari": Provenance(
        "HF evaluate `sari` per item, EASSE `corpus_sari` per system",
        "tests/metrics/test_sari.py::test_sentence_sari_matches_published_values",
    ),
    "sbert_cosine": Provenance(
        "sentence-transformers `encode` and cosine",
        "tests/neural/test_sbert.py::test_equals_sentence_transformers",
    ),
    "ter": Provenance(
        "sacrebleu `TER.sentence_score`", _LEX + "test_ter_is_100_minus_sacrebleu_ter"
    ),
}


def provenance(name: str) -> Provenance | None:
    return PROVENANCE.get(name)
