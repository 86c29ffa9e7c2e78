"""Long texts: overlapping windows instead of truncation, for BERTScore and SBERT cosine.

The encoder here is tiny (random weights, 32 positions), so a "long" text is cheap: a
3,000-word text is a few hundred windows. The German fixture is a long source and its
simplification, as the GermEval study scores them.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric
from meaningbench.metrics.neural.support.encoding import token_embeddings, token_ids
from meaningbench.metrics.neural.support.models import load_model
from meaningbench.metrics.neural.support.windows import (
    count_windows,
    plan_windows,
    stitch,
    window_stride,
)
from tests.metrics.neural.conftest import SENTENCES, TOKENIZER_FILES

POSITIONS = 32
GERMAN = Path(__file__).resolve().parents[3] / "fixtures" / "long_german"


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:
    """A BERT encoder with random weights and 32 positions, and a tokenizer that says so."""
    import json
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=POSITIONS,
    )
    folder = tmp_path_factory.mktemp("tiny-encoder")
    BertModel(config).save_pretrained(folder)
    for name in TOKENIZER_FILES:
        shutil.copy(Path(minilm_path) / name, folder / name)
    tok_config = json.loads((folder / "tokenizer_config.json").read_text())
    tok_config["model_max_length"] = POSITIONS
    (folder / "tokenizer_config.json").write_text(json.dumps(tok_config))
    return str(folder)


def _long_text(words: int) -> str:
    sentences = itertools.cycle(s for pair in SENTENCES for s in pair if s)
    out: list[str] = []
    n = 0
    for k, sentence in enumerate(sentences):
        out.append(f"In part {k} {sentence[0].lower()}{sentence[1:]}")
        n += len(out[-1].split())
        if n >= words:
            return " ".join(out)
    raise AssertionError("unreachable")


# --- the windows themselves ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "max_length", "prefix", "suffix"),
    [(5, 8, 1, 1), (9, 8, 1, 1), (40, 8, 1, 1), (41, 8, 1, 1), (100, 12, 1, 2), (33, 7, 0, 1)],
)
def test_windows_fit_and_cover_every_token_once(n, max_length, prefix, suffix):
    import torch

    ids = [1000 + i for i in range(n)]
    ids = [-1] * prefix + ids + [-2] * suffix
    plan = plan_windows(ids, max_length, prefix, suffix)
    assert all(len(w) <= max_length for w in plan.windows)
    assert all(w[:prefix] == tuple(ids[:prefix]) for w in plan.windows)
    assert all(w[len(w) - suffix :] == tuple(ids[len(ids) - suffix :]) for w in plan.windows)
    # Each window's "vectors" are its own ids, so the stitch must give the text's ids back,
    # each token once and in order.
    vectors = [torch.tensor(w, dtype=torch.float32).unsqueeze(1) for w in plan.windows]
    assert stitch(plan, vectors).squeeze(1).tolist() == [float(i) for i in ids]
    assert plan.count == count_windows(len(ids), max_length, prefix, suffix)
    if len(ids) <= max_length:
        assert plan.windows == (tuple(ids),)


def test_each_token_comes_from_the_window_where_it_is_most_central():
    n, max_length = 50, 10  # capacity 8, stride 4
    ids = [0] + list(range(1, n + 1)) + [0]
    plan = plan_windows(ids, max_length, 1, 1)
    assert plan.stride == window_stride(8) == 4
    starts = [ids.index(w[1]) - 1 for w in plan.windows]
    owner = [s.window for s in plan.segments[1:-1] for _ in range(s.stop - s.start)]
    for p in range(n):
        margins = [
            (min(p - s, min(s + 8, n) - 1 - p), -w) for w, s in enumerate(starts) if s <= p < s + 8
        ]
        assert owner[p] == -max(margins)[1]
    # Away from the text's ends no token is taken from within a quarter window of an edge.
    for p in range(4, n - 4):
        s = starts[owner[p]]
        assert min(p - s, s + 7 - p) >= 8 // 4


# --- BERTScore -----------------------------------------------------------------------------


def _bertscore(model: str, pairs: list[Pair], **config) -> list:
    metric = BertScoreMetric(model=model, embedding_cache_mb=0, **{"layer": 2, **config})
    return metric.score_batch(pairs)


def test_short_texts_are_scored_as_before(tiny_encoder):
    pairs = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(SENTENCES[:4])]
    loaded = load_model(tiny_encoder)
    assert (
        max(len(i) for i in token_ids(loaded, [t for p in pairs for t in (p.source, p.output)]))
        <= POSITIONS
    )
    windowed = _bertscore(tiny_encoder, pairs)
    truncated = _bertscore(tiny_encoder, pairs, long_texts="truncate")
    assert [s.raw for s in windowed] == [s.raw for s in truncated]
    assert all(s.details["windows"] == {"output": 1, "reference": 1} for s in windowed)
    assert all("window_stride" not in s.details for s in windowed)


def test_a_3000_word_text_is_scored_whole(tiny_encoder):
    text = _long_text(3000)
    assert len(text.split()) >= 3000
    changed = text.rsplit(". ", 1)[0] + ". Nothing of this happened at all."
    short = "The cat sat on the mat."
    loaded = load_model(tiny_encoder)
    full = len(token_ids(loaded, [text], truncate=False)[0])
    assert full > 3000
    pairs = [Pair(0, text, short, (text,)), Pair(1, changed, short, (changed,))]
    scores = _bertscore(tiny_encoder, pairs)
    assert scores[0].details["tokens"]["reference"] == full
    assert scores[0].details["windows"]["reference"] == count_windows(full, POSITIONS, 1, 1) > 100
    assert scores[0].details["window_stride"] == 15  # (32 − 2) / 2
    # Only the last sentence differs, and the score sees it (recall runs over every token).
    assert scores[0].details["R"] != scores[1].details["R"]
    # Truncated, the two texts are the same first 32 tokens: the change is not seen.
    cut = _bertscore(tiny_encoder, pairs, long_texts="truncate")
    assert cut[0].details["R"] == cut[1].details["R"]
    assert "windows" not in cut[0].details


def test_stitched_vectors_come_from_the_model_run_on_each_window(tiny_encoder):
    import torch
    from transformers import AutoModel

    text = _long_text(120)
    loaded = load_model(tiny_encoder)
    emb = token_embeddings(loaded, 2, [text])[text]
    ids = token_ids(loaded, [text], truncate=False)[0]
    assert list(emb.ids) == ids
    plan = plan_windows(ids, POSITIONS, 1, 1)
    model = AutoModel.from_pretrained(tiny_encoder)
    model.eval()
    row = 0
    with torch.inference_mode():
        for seg in plan.segments:
            window = torch.tensor([plan.windows[seg.window]])
            hidden = model(window, output_hidden_states=True).hidden_states[2][0]
            hidden = hidden / hidden.norm(dim=-1, keepdim=True)
            part = emb.vectors[row : row + seg.stop - seg.start]
            assert torch.allclose(part, hidden[seg.start : seg.stop], atol=1e-5)
            row += seg.stop - seg.start
    assert row == len(ids)


def test_windows_differ_from_bert_score_which_truncates(minilm_path):
    """bert-score cuts at 512 tokens: with `long_texts="truncate"` we agree with it; by
    default a change past token 512 is seen."""
    from bert_score import BERTScorer

    text = _long_text(700)
    changed = text.rsplit(". ", 1)[0] + ". Nothing of this happened at all."
    short = SENTENCES[0][0]
    scorer = BERTScorer(model_type=minilm_path, num_layers=4, device="cpu")
    _, R, _ = scorer.score([short, short], [text, changed])
    pairs = [Pair(0, text, short, (text,)), Pair(1, changed, short, (changed,))]
    cut = _bertscore(minilm_path, pairs, long_texts="truncate", layer=4)
    assert [s.details["R"] for s in cut] == pytest.approx([float(r) for r in R], abs=1e-5)
    assert float(R[0]) == pytest.approx(float(R[1]), abs=1e-7)  # bert-score misses the change
    windowed = _bertscore(minilm_path, pairs, layer=4)
    assert windowed[0].details["windows"]["reference"] > 1
    assert windowed[0].details["R"] != pytest.approx(windowed[1].details["R"], abs=1e-7)


# --- SBERT cosine --------------------------------------------------------------------------


def _sbert(model: str, pairs: list[Pair], **config) -> list:
    metric = SentenceCosineMetric(model=model, embedding_cache_mb=0, **config)
    return metric.score_batch(pairs)


def test_sbert_pools_over_every_token_of_a_long_text(tiny_encoder):
    import torch
    from transformers import AutoModel

    text = _long_text(3000)
    changed = text.rsplit(". ", 1)[0] + ". Nothing of this happened at all."
    short = "The cat sat on the mat."
    pairs = [Pair(0, text, short, (text,)), Pair(1, changed, short, (changed,))]
    scores = _sbert(tiny_encoder, pairs)
    loaded = load_model(tiny_encoder)
    full = len(token_ids(loaded, [text], truncate=False)[0])
    n_short = len(token_ids(loaded, [short])[0])
    assert scores[0].details["tokens"] == {"source": full, "output": n_short}
    assert scores[0].details["windows"]["source"] > 100
    assert scores[0].details["windows"]["output"] == 1
    assert scores[0].raw != scores[1].raw
    cut = _sbert(tiny_encoder, pairs, long_texts="truncate")
    assert cut[0].raw == cut[1].raw
    # The pooled vector is the mean of the stitched last-layer token vectors.
    ids = token_ids(loaded, [text], truncate=False)[0]
    plan = plan_windows(ids, POSITIONS, 1, 1)
    model = AutoModel.from_pretrained(tiny_encoder)
    model.eval()
    with torch.inference_mode():
        parts = [model(torch.tensor([w]))[0][0] for w in plan.windows]
        out = model(torch.tensor([token_ids(loaded, [short])[0]]))[0][0]
    a, b = stitch(plan, parts).mean(dim=0), out.mean(dim=0)
    cos = float(torch.nn.functional.cosine_similarity(a, b, dim=0))
    assert scores[0].raw == pytest.approx(cos, abs=1e-5)


def test_sbert_short_texts_unchanged(tiny_encoder):
    pairs = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(SENTENCES[:4])]
    windowed = _sbert(tiny_encoder, pairs)
    truncated = _sbert(tiny_encoder, pairs, long_texts="truncate")
    assert [s.raw for s in windowed] == [s.raw for s in truncated]


# --- the long German fixture ---------------------------------------------------------------


def test_the_long_german_pair_scores_without_truncation(tiny_encoder):
    source = (GERMAN / "source.txt").read_text(encoding="utf-8")
    output = (GERMAN / "output.txt").read_text(encoding="utf-8")
    assert len(source) >= 2000 and len(output) >= 2000
    loaded = load_model(tiny_encoder)
    n_source, n_output = (len(i) for i in token_ids(loaded, [source, output], truncate=False))
    pair = [Pair(0, source, output, (source,))]
    bert = _bertscore(tiny_encoder, pair)[0]
    assert bert.details["tokens"] == {"output": n_output, "reference": n_source}
    assert bert.details["windows"]["reference"] == count_windows(n_source, POSITIONS, 1, 1) > 1
    assert len(bert.details["alignment"]["cand"]["tokens"]) == n_output
    sbert = _sbert(tiny_encoder, pair)[0]
    assert sbert.details["tokens"] == {"source": n_source, "output": n_output}
    assert sbert.details["windows"]["output"] > 1
