"""Several layers from one forward pass: the same vectors as the one-layer path, one pass per
text, and the caches the one-layer path reads filled with them."""

from __future__ import annotations

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.neural.sbert import sentence_vectors, sentence_vectors_layers
from meaningbench.metrics.neural.support.cache import MEMORY
from meaningbench.metrics.neural.support.encoding import token_embeddings, token_embeddings_layers
from meaningbench.metrics.neural.support.models import load_model
from tests.metrics.neural.conftest import SENTENCES
from tests.metrics.neural.sweep_helpers import ForwardCounter

TEXTS = list(dict.fromkeys(t for pair in SENTENCES for t in pair))


@pytest.fixture(autouse=True)
def _empty_memory_cache():
    MEMORY.clear()
    yield
    MEMORY.clear()


def test_token_embeddings_of_every_layer_equal_the_one_layer_path(tiny_encoder: str) -> None:
    loaded = load_model(tiny_encoder, device="cpu")
    many = token_embeddings_layers(loaded, [0, 1, 2, 3], TEXTS, batch_size=3)
    MEMORY.clear()
    for layer in range(4):
        one = token_embeddings(loaded, layer, TEXTS, batch_size=5)
        for text in TEXTS:
            assert many[layer][text].ids == one[text].ids
            diff = (many[layer][text].vectors - one[text].vectors).abs().max().item()
            assert diff <= 1e-6, (layer, text, diff)


def test_pooled_vectors_of_every_layer_equal_the_one_layer_path(tiny_encoder: str) -> None:
    loaded = load_model(tiny_encoder, device="cpu")
    many = sentence_vectors_layers(loaded, [1, 3], TEXTS, batch_size=4)
    MEMORY.clear()
    for layer in (1, 3):
        one = sentence_vectors(loaded, TEXTS, batch_size=2, layer=layer)
        for text in TEXTS:
            diff = (many[layer][text].vectors - one[text].vectors).abs().max().item()
            assert diff <= 1e-6, (layer, text, diff)
    # The last hidden state is the model's output: pooling it gives the default vectors.
    default = sentence_vectors(loaded, TEXTS)
    for text in TEXTS:
        assert (default[text].vectors - many[3][text].vectors).abs().max().item() <= 1e-6


def test_every_text_is_encoded_once_for_all_layers_and_then_found_cached(
    tiny_encoder: str,
) -> None:
    loaded = load_model(tiny_encoder, device="cpu")
    counter = ForwardCounter(loaded)
    try:
        token_embeddings_layers(loaded, [1, 2, 3], TEXTS + TEXTS[:3], batch_size=4)
        assert counter.sequences == len(TEXTS)
        # What a one-layer run of each layer needs is already in the cache it reads.
        for layer in (1, 2, 3):
            token_embeddings(loaded, layer, TEXTS)
        assert counter.sequences == len(TEXTS)
        # Per layer, the one-layer path would have encoded every text again.
        MEMORY.clear()
        for layer in (1, 2, 3):
            token_embeddings(loaded, layer, TEXTS)
        assert counter.sequences == 4 * len(TEXTS)
    finally:
        counter.close()


def test_embeddings_reach_the_disk_cache_of_each_layer(tiny_encoder: str) -> None:
    loaded = load_model(tiny_encoder, device="cpu")
    refs = set(TEXTS[:4])
    token_embeddings_layers(loaded, [2, 3], TEXTS, disk_mb=16, persist=refs)
    MEMORY.clear()
    counter = ForwardCounter(loaded)
    try:
        token_embeddings(loaded, 3, sorted(refs), disk_mb=16)
        assert counter.sequences == 0  # read from disk, as the one-layer path stores them
        token_embeddings(loaded, 3, TEXTS[4:], disk_mb=16)
        assert counter.sequences == len(TEXTS[4:])  # outputs are not kept on disk
    finally:
        counter.close()


def test_a_layer_the_model_lacks_is_refused_before_any_work(tiny_encoder: str) -> None:
    loaded = load_model(tiny_encoder, device="cpu")
    counter = ForwardCounter(loaded)
    try:
        with pytest.raises(UserError, match=r"layer 4 is out of range .*0–3"):
            token_embeddings_layers(loaded, [1, 4], TEXTS)
        with pytest.raises(UserError, match=r"layer 7 is out of range"):
            sentence_vectors_layers(loaded, [7], TEXTS)
        assert counter.sequences == 0
    finally:
        counter.close()
