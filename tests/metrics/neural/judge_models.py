"""Tiny causal LMs for the LLM judge's tests, built from a config (no download).

A character-level tokenizer (every character one token, so every digit is its own token, as
in SmolLM2; `number_tokenizer`: the numbers 0–100 one token each) and a 2-layer Llama with random weights. The `digits` variant can only write
digits (the other rows of its output layer are zero, so a digit with a positive logit always
wins), the `letters` variant only letters: one answers a number, the other never does.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)
SPECIALS = ["<unk>", "<s>", "</s>"]


def char_tokenizer(chat: bool):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(string.printable) - set("\x0b\x0c\r"))
    vocab = {t: i for i, t in enumerate(SPECIALS + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    return fast


def number_tokenizer(top: int = 100):
    """As `char_tokenizer` (with the chat template), but a run of digits is one token when
    it is a number from 0 to `top` (else unknown): with 100, every score on 0–100 is a whole
    token."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(string.printable) - set("\x0b\x0c\r") - set(string.digits))
    numbers = [str(n) for n in range(top + 1)]
    vocab = {t: i for i, t in enumerate(SPECIALS + chars + numbers)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"\d+|[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_judge(
    folder: Path,
    *,
    writes: str | list[str],
    chat: bool = True,
    context: int = 512,
    tokenizer: Any = None,
) -> str:
    """Save a tiny judge model that writes only the `writes` tokens; returns its folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tokenizer or char_tokenizer(chat)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    allowed = [tokenizer.convert_tokens_to_ids(c) for c in writes]
    with torch.no_grad():
        keep = torch.zeros(len(tokenizer), dtype=torch.bool)
        keep[allowed] = True
        model.lm_head.weight[~keep] = 0.0
        model.lm_head.weight[keep] *= 4.0  # digit probabilities well away from uniform
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
