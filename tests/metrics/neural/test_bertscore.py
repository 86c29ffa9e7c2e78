"""BERTScore against the bert-score package (the oracle) and against its own definition."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.support.encoding import token_embeddings
from meaningbench.runtime import CancelToken
from tests.metrics.neural.conftest import SENTENCES

LAYER = 4
ORACLE_PAIRS = [(s, o) for s, o in SENTENCES if o]  # bert-score crashes on "" under transformers 5


def _pairs(rows, refs=None):
    return [Pair(i, s, o, tuple(refs[i]) if refs else (s,)) for i, (s, o) in enumerate(rows)]


@pytest.fixture(scope="module")
def oracle(minilm_path):
    from bert_score import BERTScorer

    def make(**kwargs):
        return BERTScorer(model_type=minilm_path, num_layers=LAYER, device="cpu", **kwargs)

    return make


@pytest.fixture
def baseline_file(tmp_path: Path) -> Path:
    path = tmp_path / "baseline.tsv"
    lines = ["LAYER,P,R,F"] + [f"{i},0.41,0.43,0.42" for i in range(7)]
    path.write_text("\n".join(lines) + "\n")
    return path


# The reference tests run on both backends: ONNX Runtime must not move a score.
BACKENDS = pytest.mark.parametrize("backend", ["torch", "onnx"])


def _ours(pairs, **config):
    metric = BertScoreMetric(layer=LAYER, embedding_cache_mb=0, **config)
    scores = metric.score_batch(pairs)
    if config.get("backend"):
        assert metric.backend().name == config["backend"], metric.backend()  # no fallback
    return metric, scores


@BACKENDS
@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("rescale", [False, True])
def test_equals_bert_score(oracle, baseline_file, idf, rescale, backend):
    sources = [s for s, _ in ORACLE_PAIRS]
    outputs = [o for _, o in ORACLE_PAIRS]
    kwargs = {}
    if idf:
        kwargs.update(idf=True, idf_sents=list(dict.fromkeys(sources)), nthreads=0)
    if rescale:
        kwargs.update(rescale_with_baseline=True, lang="en", baseline_path=str(baseline_file))
    P, R, F = oracle(**kwargs).score(outputs, sources)
    _, ours = _ours(
        _pairs(ORACLE_PAIRS), idf=idf, rescale=rescale, baseline=str(baseline_file), backend=backend
    )
    for k, item in enumerate(ours):
        assert item.details["P"] == pytest.approx(float(P[k]), abs=1e-5)
        assert item.details["R"] == pytest.approx(float(R[k]), abs=1e-5)
        assert item.details["F1"] == pytest.approx(float(F[k]), abs=1e-5)
        assert item.raw == pytest.approx(float(F[k]), abs=1e-5)
        assert item.value == pytest.approx(100 * max(0.0, float(F[k])), abs=1e-3)


@BACKENDS
def test_equals_bert_score_on_csmd(oracle, shared_datasets, backend):
    import pandas as pd

    frame = pd.read_csv(shared_datasets / "csmd" / "dev.tsv", sep="\t").head(40)
    rows = list(zip(frame["original"], frame["simplification"], strict=True))
    P, R, F = oracle().score([o for _, o in rows], [s for s, _ in rows])
    _, ours = _ours(_pairs(rows), backend=backend)
    got = [item.details["F1"] for item in ours]
    assert max(abs(g - float(f)) for g, f in zip(got, F, strict=True)) < 1e-5


@BACKENDS
def test_several_references_take_the_best_of_each(oracle, backend):
    rows = ORACLE_PAIRS[:3]
    refs = [[s, "Something else entirely."] for s, _ in rows]
    P, R, F = oracle().score([o for _, o in rows], refs)
    _, ours = _ours(_pairs(rows, refs), backend=backend)
    for k, item in enumerate(ours):
        assert item.details["F1"] == pytest.approx(float(F[k]), abs=1e-5)
        assert item.details["P"] == pytest.approx(float(P[k]), abs=1e-5)
        assert item.details["ref_index"] == 0


def test_identity_scores_one():
    rows = [(s, s) for s, _ in SENTENCES]
    _, ours = _ours(_pairs(rows))
    for item in ours:
        for key in ("P", "R", "F1"):
            assert item.details[key] == pytest.approx(1.0, abs=1e-6)
        assert item.value == pytest.approx(100.0, abs=1e-4)


def test_empty_output_scores_zero():
    _, (item,) = _ours(_pairs([("He forgot his umbrella on the train.", "")]))
    assert (item.details["P"], item.details["R"], item.details["F1"]) == (0.0, 0.0, 0.0)
    assert item.value == 0.0


@pytest.mark.parametrize("idf", [False, True])
def test_alignment_agrees_with_the_scores(idf):
    metric, ours = _ours(_pairs(ORACLE_PAIRS), idf=idf)
    specials = {"[CLS]", "[SEP]"}
    for item in ours:
        al = item.details["alignment"]
        for side, key in (("cand", "P"), ("ref", "R")):
            tokens, sims = al[side]["tokens"], al[side]["sim"]
            assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
            if idf:
                continue
            kept = [s for t, s in zip(tokens, sims, strict=True) if t not in specials]
            assert sum(kept) / len(kept) == pytest.approx(item.details[key], abs=1e-4)
    # each token's best match is the most similar token on the other side, at the recorded
    # similarity: recomputed here from the layer's token vectors
    loaded = metric.loaded()
    for pair, item in zip(_pairs(ORACLE_PAIRS), ours, strict=True):
        al = item.details["alignment"]
        embs = token_embeddings(loaded, metric.layer(), [pair.output, pair.source])
        sim = embs[pair.output].vectors @ embs[pair.source].vectors.T
        for side, matrix in (("cand", sim), ("ref", sim.T)):
            best = matrix.max(dim=1)
            assert al[side]["best"] == best.indices.tolist()
            assert al[side]["sim"] == pytest.approx(best.values.tolist(), abs=1e-5)


def test_alignment_matches_identical_tokens():
    s = "The committee postponed its decision."
    _, (item,) = _ours(_pairs([(s, s)]))
    al = item.details["alignment"]
    assert al["cand"]["best"] == list(range(len(al["cand"]["tokens"])))
    assert al["cand"]["tokens"][1:-1] == ["the", "committee", "postponed", "its", "decision", "."]


def test_idf_is_taken_from_the_whole_study_not_the_batch(oracle):
    pairs = _pairs(ORACLE_PAIRS)
    whole = BertScoreMetric(layer=LAYER, idf=True, embedding_cache_mb=0)
    whole.prepare(pairs)
    in_two = [*whole.score_batch(pairs[:2]), *whole.score_batch(pairs[2:])]
    sources = [p.source for p in pairs]
    _, _, F = oracle(idf=True, idf_sents=list(dict.fromkeys(sources)), nthreads=0).score(
        [p.output for p in pairs], sources
    )
    assert [i.details["F1"] for i in in_two] == pytest.approx([float(f) for f in F], abs=1e-5)
    # a repeated source is one document: the idf (and the config hash) do not change
    doubled = BertScoreMetric(layer=LAYER, idf=True, embedding_cache_mb=0)
    doubled.prepare(pairs + pairs)
    assert doubled.config_hash() == whole.config_hash()
    other = BertScoreMetric(layer=LAYER, idf=True, embedding_cache_mb=0)
    other.prepare(pairs[:3])
    assert other.config_hash() != whole.config_hash()


def test_config_hash_ignores_device_and_batch_size():
    a = BertScoreMetric(device="cpu", batch_size=8)
    b = BertScoreMetric(device="auto", batch_size=64)
    assert a.config_hash() == b.config_hash()
    assert BertScoreMetric(layer=2).config_hash() != a.config_hash()
    assert a.layer() == 6  # the default layer of the embedded MiniLM


class _CancelAfter(CancelToken):
    """A real cancel token that a user 'clicks' after `n` checks."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def check(self) -> None:
        self.n -= 1
        if self.n < 0:
            self.cancel()
        super().check()


def test_cancel_mid_run_stops_between_batches(monkeypatch):
    from meaningbench.metrics.neural.support import encoding
    from meaningbench.runtime import Cancelled

    calls = []
    real = encoding._forward_layer

    def counting(loaded, layer, batch):
        calls.append(len(batch))
        return real(loaded, layer, batch)

    monkeypatch.setattr(encoding, "_forward_layer", counting)
    rows = [(f"Sentence number {i} about a river.", f"Output {i} about a lake.") for i in range(20)]
    metric = BertScoreMetric(layer=LAYER, embedding_cache_mb=0, batch_size=4)
    with pytest.raises(Cancelled):
        metric.score_batch(_pairs(rows), _CancelAfter(2))
    assert calls == [4, 4]  # two batches ran, then the cancel flag stopped the run


def test_rescale_without_a_baseline_is_explained():
    metric = BertScoreMetric(layer=3, rescale=True)
    availability = metric.availability()
    assert availability.ok  # the packaged baseline of the embedded MiniLM covers every layer
    missing = BertScoreMetric(layer=3, rescale=True, baseline="/nonexistent/baseline.tsv")
    av = missing.availability()
    assert not av.ok and "meaningbench baseline" in av.reason


def test_values_are_finite_and_bounded():
    _, ours = _ours(_pairs(SENTENCES))
    for item in ours:
        assert item.value is not None and 0.0 <= item.value <= 100.0
        assert math.isfinite(item.raw)


def test_greedy_match_by_hand():
    import torch

    from meaningbench.metrics.neural.support.cache import Embedding
    from meaningbench.metrics.neural.support.greedy import greedy_match, weights

    # unit vectors: [CLS] a [SEP] against [CLS] b c [SEP] (ids 101 / 102 are special)
    cand = Embedding((101, 7, 102), torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]))
    ref = Embedding(
        (101, 8, 9, 102), torch.tensor([[1.0, 0.0], [0.8, 0.6], [-0.6, -0.8], [0.0, 1.0]])
    )
    specials = {101, 102}
    m = greedy_match(cand, ref, weights(cand.ids, None, specials), weights(ref.ids, None, specials))
    # "a" best matches "b" (0.96); "b" matches "a" (0.96); "c" is negative to every candidate
    # token (best -0.6), which counts as 0 as in bert-score: R = (0.96 + 0) / 2.
    assert m.precision == pytest.approx(0.96)
    assert m.recall == pytest.approx(0.48)
    assert m.f1 == pytest.approx(2 * 0.96 * 0.48 / 1.44)
    assert m.cand_best == [0, 1, 3] and m.ref_best[1:3] == [1, 0]


def test_an_unknown_reference_mode_is_refused_when_the_metric_is_made():
    with pytest.raises(ValueError, match="reference_mode must be one of"):
        BertScoreMetric(reference_mode="sources")


@BACKENDS
@pytest.mark.parametrize("rescale", [False, True])
def test_empty_output_equals_bert_score(oracle, baseline_file, rescale, capfd, backend):
    rows = [("He forgot his umbrella on the train.", ""), ("Cats sleep a lot.", "Cats nap.")]
    kwargs = {}
    if rescale:
        kwargs.update(rescale_with_baseline=True, lang="en", baseline_path=str(baseline_file))
    scorer = oracle(**kwargs)
    tokenizer = scorer._tokenizer
    if not hasattr(tokenizer, "build_inputs_with_special_tokens"):
        # bert-score 0.3.13 encodes an empty sentence with this method, which newer
        # transformers tokenizers no longer have; it is what BERT's tokenizer returned.
        tokenizer.build_inputs_with_special_tokens = lambda ids: [
            tokenizer.cls_token_id,
            *ids,
            tokenizer.sep_token_id,
        ]
    P, R, F = scorer.score([o for _, o in rows], [s for s, _ in rows])
    assert "Empty candidate sentence detected" in capfd.readouterr().err  # its own rule ran
    _, ours = _ours(_pairs(rows), rescale=rescale, baseline=str(baseline_file), backend=backend)
    for k, item in enumerate(ours):
        assert item.raw == pytest.approx(float(F[k]), abs=1e-5)
        assert item.details["P"] == pytest.approx(float(P[k]), abs=1e-5)


def test_batched_matching_equals_matching_each_pair_alone():
    """Pairs of many lengths matched together, against a plain per-pair computation: padding
    must never win a maximum, even for a token whose similarities are all negative."""
    import numpy as np
    import torch

    from meaningbench.metrics.neural.support.cache import Embedding
    from meaningbench.metrics.neural.support.greedy import greedy_match_many

    rng = np.random.default_rng(7)

    def embedding(n: int) -> Embedding:
        v = rng.normal(size=(n, 8)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return Embedding(tuple(range(100, 100 + n)), torch.from_numpy(v))

    pairs = []
    for lc, lr in [(3, 9), (12, 4), (2, 6), (7, 7), (30, 3), (5, 2), (4, 25)]:
        c, r = embedding(lc), embedding(lr)
        pairs.append((c, r, rng.uniform(0.1, 2, lc).tolist(), rng.uniform(0.1, 2, lr).tolist()))
    # A reference token opposite to every candidate token: its best similarity is negative.
    c = embedding(4)
    c = Embedding(c.ids, c.vectors.abs())  # all in the positive orthant
    r = Embedding((1, 2, 3), torch.cat([c.vectors[:2], -c.vectors[2:3]]))
    assert float((c.vectors @ r.vectors[2]).max()) < 0
    pairs.append((c, r, [1.0] * 4, [1.0] * 3))

    for (c, r, cw, rw), m in zip(pairs, greedy_match_many(pairs), strict=True):
        sim = c.vectors.numpy() @ r.vectors.numpy().T
        c_best, r_best = sim.argmax(axis=1), sim.argmax(axis=0)
        c_sim, r_sim = np.maximum(sim.max(axis=1), 0), np.maximum(sim.max(axis=0), 0)
        p = float((c_sim * cw).sum() / sum(cw))
        rec = float((r_sim * rw).sum() / sum(rw))
        if len(c.ids) == 2 or len(r.ids) == 2:
            p = rec = 0.0
        assert m.precision == pytest.approx(p, abs=1e-6)
        assert m.recall == pytest.approx(rec, abs=1e-6)
        assert m.f1 == pytest.approx(2 * p * rec / (p + rec) if p + rec else 0.0, abs=1e-6)
        assert m.cand_best == c_best.tolist() and m.ref_best == r_best.tolist()
        assert m.cand_sim == pytest.approx(c_sim.tolist(), abs=1e-6)
        assert m.ref_sim == pytest.approx(r_sim.tolist(), abs=1e-6)
