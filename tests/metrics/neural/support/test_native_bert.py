"""The BERT encoder without transformers equals transformers' BertModel and tokenizer.

transformers is the oracle here: the same folder loaded with `AutoModel`/`AutoTokenizer`.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from meaningbench.metrics.neural.support.models import NATIVE_ENV, clear_model_cache, load_model
from meaningbench.metrics.neural.support.native_bert import (
    NativeTokenizer,
    load_native_encoder,
    native_config,
)
from tests.metrics.neural.conftest import SENTENCES

ODD_TEXTS = [
    "",
    "   ",
    "Café naïve résumé, Ångström and façade.",
    "東京は日本の首都です。",
    "Emoji 😀 and symbols ™ © ½ ∞.",
    "Don't   stop\tthe\u00a0music!\nNew line.",
    "word " * 600,  # over the 512-token limit
    "x",
]


def _csmd_texts(shared_datasets: Path) -> list[str]:
    with (shared_datasets / "csmd" / "train.tsv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return list(dict.fromkeys(r[c] for r in rows for c in ("original", "simplification")))


@pytest.fixture(scope="module")
def hf_tokenizer(minilm_path: str):  # noqa: ANN201
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(minilm_path, local_files_only=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"add_special_tokens": True, "max_length": 512, "truncation": True},
        {"add_special_tokens": True},
        {"add_special_tokens": False},
        {"max_length": 24, "truncation": "longest_first"},
    ],
)
def test_token_ids_equal_the_transformers_tokenizer(
    minilm_path: str, hf_tokenizer, shared_datasets: Path, kwargs: dict
) -> None:
    texts = _csmd_texts(shared_datasets) + ODD_TEXTS
    ours = NativeTokenizer(Path(minilm_path))(texts, **kwargs)
    theirs = hf_tokenizer(texts, **kwargs)
    for key in ("input_ids", "token_type_ids", "attention_mask"):
        assert ours[key] == [list(row) for row in theirs[key]], key


def test_padded_tensors_and_special_tokens_equal_the_transformers_tokenizer(
    minilm_path: str, hf_tokenizer
) -> None:
    tok = NativeTokenizer(Path(minilm_path))
    texts = [s for pair in SENTENCES for s in pair] + ODD_TEXTS
    kwargs = {"padding": True, "truncation": "longest_first", "max_length": 128}
    ours = tok(texts, return_tensors="pt", **kwargs)
    theirs = hf_tokenizer(texts, return_tensors="pt", **kwargs)
    assert set(ours) == set(theirs)
    for key in theirs:
        assert torch.equal(ours[key], theirs[key]), key
    assert tok("")["input_ids"] == hf_tokenizer("")["input_ids"]
    ids = tok(texts[0])["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == hf_tokenizer.convert_ids_to_tokens(ids)
    for role in ("cls", "sep", "pad", "mask", "unk"):
        assert getattr(tok, f"{role}_token_id") == getattr(hf_tokenizer, f"{role}_token_id")
    assert tok.model_max_length == hf_tokenizer.model_max_length


def test_other_tokenizer_calls_are_answered_by_transformers(minilm_path: str, hf_tokenizer) -> None:
    tok = NativeTokenizer(Path(minilm_path))
    a, b = SENTENCES[0]
    assert tok(a, b)["input_ids"] == hf_tokenizer(a, b)["input_ids"]  # a sentence pair
    assert tok.tokenize(a) == hf_tokenizer.tokenize(a)  # a method it does not define
    assert tok.decode([101, 2000, 102]) == hf_tokenizer.decode([101, 2000, 102])


def _hidden_states(model, tokenizer, texts: list[str]) -> tuple[tuple, torch.Tensor]:
    enc = tokenizer(texts, padding=True, truncation=True, max_length=512, return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc, output_hidden_states=True)
    return out.hidden_states, enc["attention_mask"].bool()


def _assert_same_states(ours: tuple, theirs: tuple, real: torch.Tensor) -> None:
    assert len(ours) == len(theirs)
    for layer, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.shape == b.shape
        diff = float((a - b)[real].abs().max())  # padding positions are never read
        assert diff <= 1e-5, f"layer {layer}: {diff}"


def test_every_layer_equals_transformers_on_a_padded_batch(
    minilm_path: str, hf_tokenizer, shared_datasets: Path
) -> None:
    from transformers import AutoModel

    folder = Path(minilm_path)
    ours = load_native_encoder(folder, native_config(folder))
    theirs = AutoModel.from_pretrained(minilm_path, local_files_only=True).eval()
    texts = _csmd_texts(shared_datasets)[:48] + ODD_TEXTS
    states, real = _hidden_states(ours, NativeTokenizer(folder), texts)
    expected, real_hf = _hidden_states(theirs, hf_tokenizer, texts)
    assert torch.equal(real, real_hf)
    _assert_same_states(states, expected, real)
    # Without padding (one text) no mask is built: the same again.
    one, real_one = _hidden_states(ours, NativeTokenizer(folder), texts[:1])
    _assert_same_states(one, _hidden_states(theirs, hf_tokenizer, texts[:1])[0], real_one)


def test_a_checkpoint_with_a_head_loads_its_encoder(tiny_mlm: str) -> None:
    """A masked LM saves its encoder under `bert.`; the head and the rest are not used."""
    from transformers import AutoModel, AutoTokenizer

    folder = Path(tiny_mlm)
    ours = load_native_encoder(folder, native_config(folder))
    assert ours is not None
    theirs = AutoModel.from_pretrained(tiny_mlm, local_files_only=True).eval()
    texts = [s for pair in SENTENCES for s in pair]
    states, real = _hidden_states(ours, NativeTokenizer(folder), texts)
    expected, _ = _hidden_states(theirs, AutoTokenizer.from_pretrained(tiny_mlm), texts)
    _assert_same_states(states, expected, real)


def _variant(minilm_path: str, tmp_path: Path, **changes: object) -> str:
    folder = tmp_path / "variant"
    shutil.copytree(minilm_path, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


def test_load_model_runs_plain_bert_natively_and_the_rest_with_transformers(
    minilm_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import PreTrainedModel

    clear_model_cache()
    try:
        native = load_model(minilm_path, "encoder", "cpu")
        assert not isinstance(native.model, PreTrainedModel)
        assert isinstance(native.tokenizer, NativeTokenizer)
        # Another activation is not what the native encoder computes.
        relu = load_model(_variant(minilm_path, tmp_path, hidden_act="relu"), "encoder", "cpu")
        assert isinstance(relu.model, PreTrainedModel)
        # Other kinds need transformers' heads.
        assert isinstance(load_model(minilm_path, "mlm", "cpu").model, PreTrainedModel)
        clear_model_cache()
        monkeypatch.setenv(NATIVE_ENV, "0")
        assert isinstance(load_model(minilm_path, "encoder", "cpu").model, PreTrainedModel)
    finally:
        clear_model_cache()


def test_bertscore_in_a_fresh_process_never_imports_transformers_model_code() -> None:
    """The point of the native encoder: scoring with the default model leaves transformers'
    model code (and what it drags in) unimported."""
    code = (
        "import sys\n"
        "from meaningbench.metrics.base import Pair\n"
        "from meaningbench.metrics.neural.bertscore import BertScoreMetric\n"
        "m = BertScoreMetric(embedding_cache_mb=0)\n"
        "[s] = m.score_batch([Pair(1, 'The cat sat on the mat.', 'A cat sat.', ())])\n"
        "m.versions()\n"
        "assert 0 < s.raw < 1, s\n"
        "heavy = [n for n in ('transformers', 'scipy', 'torch._dynamo') if n in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip() == "[]", out.stderr[-2000:]
