"""The Sentence-BERT bi-encoder kind: it learns, it is saved as a standard Sentence-Transformers
folder that the battery runs as `sbert_cosine@NAME` and `bertscore@NAME`, and its card says
how ratings became cosine targets."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from meaningbench.analysis.score_columns import scores_frame
from meaningbench.db.models import RegisteredModel
from meaningbench.errors import UserError
from meaningbench.jobs.metric_listing import list_metrics
from meaningbench.jobs.metric_specs import expand_specs
from meaningbench.jobs.score_store import registered_models
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.base import Pair
from meaningbench.runtime import JobContext
from meaningbench.training import Evaluated, train_model
from meaningbench.training.labels import parse_label_map

from .conftest import WORDS, add_rated_items, tiny_request

CUE_MAP = "80=0.9,20=0.1"


def _cue_rows_on_two_levels(n_sources: int, seed: int = 0) -> list[dict]:
    """Outputs saying "never" are rated 20, "always" 80: a cue whose two ratings a map lists."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n_sources):
        words = [rng.choice(WORDS) for _ in range(8)]
        source = "the " + " ".join(words)
        for o in range(3):
            negated = rng.random() < 0.5
            output = "the " + " ".join(words[:5]) + (" never" if negated else " always")
            rows.append(
                {
                    "source": source,
                    "output": output,
                    "system": f"s{o}",
                    "rating": 20 if negated else 80,
                }
            )
    return rows


@pytest.fixture
def two_level_study(new_study):
    with new_study.session() as session:
        add_rated_items(session, _cue_rows_on_two_levels(30))
    return new_study


def _bi_request(study, out, encoder, **changes):
    values = dict(kind="bi-encoder", label_map=parse_label_map(CUE_MAP), epochs=6)
    values.update(changes)
    return tiny_request(study, out, encoder, **values)


def test_a_bi_encoder_learns_and_is_saved_as_sentence_transformers(
    two_level_study, tiny_encoder, tmp_path
) -> None:
    events = []
    out = tmp_path / "bi"
    result = train_model(_bi_request(two_level_study, out, tiny_encoder), None, events.append)

    evaluations = [e for e in events if isinstance(e, Evaluated)]
    assert evaluations[0].step == 0
    assert min(e.val_loss for e in evaluations[1:]) < 0.5 * evaluations[0].val_loss

    # The standard Sentence-Transformers layout, the encoder's files at the root.
    for name in ("config.json", "model.safetensors", "tokenizer.json", "modules.json",
                 "sentence_bert_config.json", "1_Pooling/config.json", "model_card.json"):  # fmt: skip
        assert (out / name).is_file(), name
    pooling = json.loads((out / "1_Pooling" / "config.json").read_text())
    assert pooling["pooling_mode_mean_tokens"] is True and pooling["word_embedding_dimension"] == 32

    # The card says how ratings became targets, and the figures before and after.
    card = json.loads((out / "model_card.json").read_text())
    assert card["kind"] == "bi-encoder" and card["metrics"] == ["sbert_cosine", "bertscore"]
    assert card["mapping"]["text"] == "80=0.9,20=0.1"
    assert card["mapping"]["table"] == [
        {"score": 80.0, "target": 0.9},
        {"score": 20.0, "target": 0.1},
    ]
    assert "mapped by the label map (exact: only the listed ratings)" in card["data"]["target"]
    assert card["mapping"]["between"] == "exact"
    assert card["test_before"]["n"] == card["test"]["n"] > 0
    readme = (out / "README.md").read_text()
    assert (
        "label map `80=0.9,20=0.1`, exact: only the listed ratings): 80 → 0.9, 20 → 0.1" in readme
    )
    assert "`sbert_cosine@bi`, `bertscore@bi`" in readme
    assert "| statistic | before | after |" in readme

    # The targets were the mapped ones: the test predictions are checked against 90 and 10.
    saved = json.loads((out / "checkpoints" / "seed-0" / "result.json").read_text())
    assert set(saved["predictions"]["human"]) <= {90.0, 10.0}
    assert result.registered and result.name == "bi"
    with two_level_study.session() as s:
        assert s.query(RegisteredModel).filter_by(name="bi").one().metric == "sbert_cosine"


def test_the_saved_folder_embeds_as_the_model_in_memory(tiny_encoder, tmp_path) -> None:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    from meaningbench.metrics.neural.sbert import sentence_vectors
    from meaningbench.metrics.neural.support.models import load_model
    from meaningbench.training.augment import Example
    from meaningbench.training.biencoder import (
        encode_texts,
        load_encoder,
        save_sentence_transformer,
    )
    from meaningbench.training.kinds import KIND_OBJECTS

    kind = KIND_OBJECTS["bi-encoder"]
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_encoder))
    torch.manual_seed(0)
    model = load_encoder(str(tiny_encoder))
    examples = [
        Example("the river crossed the city", "a city by the river", 80.0, "rated"),
        Example("the pilot sold the tower", "the tower was sold", 60.0, "rated"),
        Example("the winter museum", "music of the harbour", 5.0, "rated"),
    ]
    data = encode_texts(tokenizer, examples, 64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(3):  # move the weights away from the base encoder's
        loss = kind.batch_loss(model, data, [0, 1, 2], "cpu")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    folder = tmp_path / "st"
    save_sentence_transformer(model, tokenizer, folder, max_length=64)

    texts = ["the river crossed the city", "a city by the river", "music of the harbour"]
    model.eval()
    with torch.inference_mode():
        enc = tokenizer(texts, padding=True, return_tensors="pt")
        vectors = model.embed(enc["input_ids"], enc["attention_mask"])
        memory = torch.nn.functional.normalize(vectors, dim=-1).numpy()
    oracle = SentenceTransformer(str(folder), device="cpu").encode(texts, normalize_embeddings=True)
    ours = sentence_vectors(load_model(str(folder), device="cpu"), texts)
    for row, text in enumerate(texts):
        assert np.allclose(oracle[row], memory[row], atol=1e-5)
        assert np.allclose(ours[text].vectors.numpy(), memory[row], atol=1e-5)
    # The in-memory cosines are what the kind predicts and what the battery's metric scores.
    predicted = kind.predict(model, data, device="cpu")
    cos = float(memory[0] @ memory[1])
    assert predicted[0] == pytest.approx(100 * cos, abs=1e-3)


def test_the_battery_runs_it_as_both_metrics(two_level_study, tiny_encoder, tmp_path) -> None:
    from bert_score import BERTScorer

    from meaningbench.metrics.neural.bertscore import BertScoreMetric

    out = tmp_path / "both"
    result = train_model(_bi_request(two_level_study, out, tiny_encoder, epochs=1, max_steps=3))
    name = result.name

    listed = {m.name: m for m in list_metrics(two_level_study.path)}
    assert listed[f"sbert_cosine@{name}"].available is True
    assert listed[f"bertscore@{name}"].available is True
    assert listed[f"bertscore@{name}"].family == "trained"
    specs, _ = expand_specs(["all"], registered_models(two_level_study))
    assert {f"sbert_cosine@{name}", f"bertscore@{name}"} <= {s.text for s in specs}

    summaries = score_study(
        ScoreRequest(
            study_path=two_level_study.path,
            metrics=[f"sbert_cosine@{name}", f"bertscore@{name}[layer=1]"],
            options={"device": "cpu", "workers": 1},
        ),
        JobContext(),
    )
    assert [s.status for s in summaries] == ["done", "done"], summaries
    with two_level_study.session() as s:
        scores = scores_frame(s)
    assert set(scores["column"]) == {
        f"sbert_cosine@{name}",
        f"bertscore@{name}[refs=source,layer=1]",
    }

    # sbert_cosine gives the model's own test predictions (the same folder, read alike).
    sbert = scores[scores["metric"] == "sbert_cosine"]
    by_item = dict(zip(sbert["item_id"], sbert["value"], strict=True))
    saved = json.loads((out / "checkpoints" / "seed-0" / "result.json").read_text())["predictions"]
    for item_id, value in zip(saved["item_id"], saved["value"], strict=True):
        assert by_item[item_id] == pytest.approx(value, abs=1e-3)

    # bertscore on the folder is bert-score's BERTScore of that folder at that layer.
    rows = _cue_rows_on_two_levels(30)[:6]
    pairs = [Pair(i, r["source"], r["output"], (r["source"],)) for i, r in enumerate(rows)]
    ours = BertScoreMetric(model=str(out), layer=1, embedding_cache_mb=0).score_batch(pairs)
    oracle = BERTScorer(model_type=str(out), num_layers=1, device="cpu")
    _, _, f1 = oracle.score([r["output"] for r in rows], [r["source"] for r in rows])
    for item, expected in zip(ours, f1.tolist(), strict=True):
        assert item.details["F1"] == pytest.approx(expected, abs=1e-5)

    # A registered bi-encoder is not a cross-encoder: meaningbert@NAME is refused, and why.
    bad = ScoreRequest(
        study_path=two_level_study.path, metrics=[f"meaningbert@{name}"], options={"device": "cpu"}
    )
    with pytest.raises(Exception, match="registered for sbert_cosine"):
        score_study(bad, JobContext())


def test_a_label_not_in_the_map_names_its_item(new_study, tiny_encoder, tmp_path) -> None:
    rows = _cue_rows_on_two_levels(10)
    rows[4]["rating"] = 55.0
    with new_study.session() as session:
        ids = add_rated_items(session, rows)
    out = tmp_path / "unmapped"
    with pytest.raises(UserError) as caught:
        train_model(_bi_request(new_study, out, tiny_encoder))
    message = str(caught.value)
    assert "the label 55 is not in the label map (it maps 80, 20)" in message
    assert f"its rating of item {ids[4]} of dataset 'synthetic-30" in message
    assert not out.exists()  # refused before anything was written

    # A score off the dimension's scale is a mistake in the map, said as such.
    with pytest.raises(UserError, match="the score 120 is outside the dimension's scale 0–100"):
        train_model(_bi_request(new_study, out, tiny_encoder, label_map=((120.0, 1.0),)))


def test_linear_rescaling_is_the_default(rated_study, tiny_encoder, tmp_path) -> None:
    out = tmp_path / "linear"
    request = tiny_request(rated_study, out, tiny_encoder, kind="bi-encoder", max_steps=2, epochs=1)
    train_model(request)
    card = json.loads((out / "model_card.json").read_text())
    assert card["mapping"]["kind"] == "linear"
    assert "rescaled linearly" in card["data"]["target"]
    # Targets are the 0–100 ratings themselves (cosine × 100): nothing was mapped.
    saved = json.loads((out / "checkpoints" / "seed-0" / "result.json").read_text())["predictions"]
    with rated_study.session() as s:
        from meaningbench.db.frames import ratings_frame

        means = ratings_frame(s, dimension="meaning").groupby("item_id")["value"].mean()
    assert saved["human"] == pytest.approx([means[i] for i in saved["item_id"]])


def test_linear_between_reads_the_map_between_its_rows(new_study, tiny_encoder, tmp_path) -> None:
    from meaningbench.training.data import load_targets
    from meaningbench.training.labels import map_targets

    rows = _cue_rows_on_two_levels(4)
    rows[1]["rating"], rows[2]["rating"] = 50.0, 35.0
    with new_study.session() as session:
        ids = add_rated_items(session, rows)
        targets = load_targets(session)
    table = parse_label_map(CUE_MAP)  # 20 → 0.1, 80 → 0.9
    mapped = map_targets(targets, table, low=0, high=100, between="linear").frame
    by_item = dict(zip(mapped["item_id"], mapped["target"], strict=True))
    # By hand: 50 lies halfway from 20 to 80 → 0.5; 35 a quarter of the way → 0.1 + 0.8 / 4.
    assert by_item[ids[1]] == pytest.approx(50.0)
    assert by_item[ids[2]] == pytest.approx(30.0)
    others = [by_item[i] for i in ids if i not in ids[1:3]]
    assert sorted({round(v, 9) for v in others}) == [10.0, 90.0]  # listed: their own targets
    # The exact table refuses the same ratings.
    with pytest.raises(UserError, match="the label 50 is not in the label map"):
        map_targets(targets, table, low=0, high=100)

    # Beyond the listed range nothing is extrapolated: the training stops, naming the item.
    with new_study.session() as session:
        far = add_rated_items(session, [{**rows[0], "rating": 95.0}])
    out = tmp_path / "beyond"
    with pytest.raises(UserError) as caught:
        train_model(_bi_request(new_study, out, tiny_encoder, label_between="linear"))
    message = str(caught.value)
    assert "the label 95 is outside the label map's range 20–80" in message
    assert f"of item {far[0]} of dataset 'synthetic-1-" in message
    assert not out.exists()
