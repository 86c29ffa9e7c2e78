"""The LLM judge's other backends: an OpenAI-compatible endpoint the user runs (llama.cpp's
server, Ollama, vLLM) and, with the extra `meaningbench[llm]`, llama-cpp-python on a .gguf.

Both answer in the chat-completions shape, so one reader serves them. The network is used
only here, only for the URL the user gave (standard library `http.client`, bounded in time,
size and redirects by `judge_http`).

Expected score from an endpoint: it returns the top alternatives of each answer token only,
so the digit rule of `judge_expected` cannot run. Where the answer's score is one token, the
alternatives at that token that are themselves whole valid scores give the expected score
(`from_whole_tokens`); where it spans several tokens, the parsed number is the score.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from meaningbench.errors import UserError
from meaningbench.metrics.neural.support.judge_expected import Expected, from_whole_tokens
from meaningbench.metrics.neural.support.judge_http import Limits, fetch, one_line
from meaningbench.metrics.neural.support.judge_local import JudgeReply, PromptTooLong
from meaningbench.metrics.neural.support.judge_templates import Template, kept_answer, read_answer

TOP_LOGPROBS = 20
TIMEOUT_S = 600.0  # one answer of a large model on a busy CPU server, start to end
PING_TIMEOUT_S = 5.0
PING_MAX_BYTES = 1 << 20
# The answer's size cap: the envelope, then per answer token its text and its TOP_LOGPROBS
# alternatives (about 1.5 KB in llama.cpp's and vLLM's format), with room to spare.
BODY_BASE_BYTES = 64 << 10
BODY_PER_TOKEN_BYTES = 8 << 10
CONTEXT_WORDS = ("context", "too long", "exceed")
NOT_CHAT = "not a chat-completions answer"


def is_endpoint(backend: str) -> bool:
    return backend.startswith(("http://", "https://"))


def answer_cap(max_tokens: int) -> int:
    return BODY_BASE_BYTES + max(1, max_tokens) * BODY_PER_TOKEN_BYTES


def ping(base: str) -> None:
    """Raise a one-line `UserError` naming the URL when nothing answers there."""
    # Any HTTP status will do: a server without /models still serves chat.
    fetch(base.rstrip("/") + "/models", None, Limits(PING_TIMEOUT_S, PING_MAX_BYTES))


def chat_request(model: str, prompt: str, max_tokens: int, seed: int) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0,
        "seed": seed,
        "max_tokens": max_tokens,
        "logprobs": True,
        "top_logprobs": TOP_LOGPROBS,
    }


@dataclass(frozen=True)
class Endpoint:
    base: str
    model: str
    timeout_s: float = TIMEOUT_S


def endpoint_reply(
    endpoint: Endpoint, template: Template, source: str, output: str, max_tokens: int, seed: int
) -> JudgeReply:
    url = endpoint.base.rstrip("/") + "/chat/completions"
    request = chat_request(endpoint.model, template.render(source, output), max_tokens, seed)
    answer = fetch(
        url,
        json.dumps(request).encode("utf-8"),
        Limits(endpoint.timeout_s, answer_cap(max_tokens)),
    )
    text = answer.body.decode("utf-8", "replace")
    if answer.status >= 300:
        if answer.status == 400 and any(w in text.lower() for w in CONTEXT_WORDS):
            raise PromptTooLong(f"prompt too long: the endpoint refused it ({one_line(text)})")
        raise UserError(f"the judge endpoint {url} answered HTTP {answer.status}: {one_line(text)}")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UserError(f"the judge endpoint {url} did not answer JSON: {exc}") from exc
    return completion_reply(data, template, url, max_tokens)


def completion_reply(data: Any, template: Template, where: str, max_tokens: int) -> JudgeReply:
    """The answer and expected score of a chat-completions response."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError) as exc:
        raise UserError(f"{where}: {NOT_CHAT} (no choices[0].message.content)") from exc
    if not isinstance(text, str):
        raise UserError(f"{where}: {NOT_CHAT} (choices[0].message.content is not text)")
    usage = data.get("usage") if isinstance(data, dict) else None
    prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    kept = kept_answer(text, max_tokens)
    expected, problem = _expected(kept, choice, template)
    return JudgeReply(
        text,
        expected,
        prompt_tokens if isinstance(prompt_tokens, int) else None,
        problem,
    )


def _expected(text: str, choice: Any, template: Template) -> tuple[Expected | None, str | None]:
    """The expected score from the answer's token probabilities, or why they cannot give
    one when they are there but unreadable (then the parsed number is the score)."""
    answer = read_answer(text, template)
    if answer.start is None or answer.score is None:
        return None, None
    try:
        tokens = answer_tokens(choice)
    except ValueError as exc:
        return None, f"token probabilities not readable: {exc}"
    shown = 0
    for token, logprob, alternatives in tokens:
        if shown == answer.start:
            number = token.strip()
            if number != _score_text(answer.score) or token != number:
                return None, None  # the score spans several tokens, or shares one with a space
            probs = {alt: math.exp(lp) for alt, lp in alternatives}
            probs.setdefault(token, math.exp(logprob))
            return from_whole_tokens(probs, template.low, template.high), None
        shown += len(token)
        if shown > answer.start:
            return None, None
    return None, None


Token = tuple[str, float, list[tuple[str, float]]]  # text, logprob, top alternatives


def answer_tokens(choice: Any) -> list[Token]:
    """The answer's tokens with their log-probabilities; `ValueError` saying what is wrong
    when they are not the chat-completions shape or not finite log-probabilities."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if content is None:
        return []
    if not isinstance(content, list):
        raise ValueError("logprobs.content is not a list")
    out: list[Token] = []
    for i, token in enumerate(content):
        if not isinstance(token, dict):
            raise ValueError(f"token {i} is not an object")
        alternatives = token.get("top_logprobs") or []
        if not isinstance(alternatives, list):
            raise ValueError(f"token {i}: top_logprobs is not a list")
        out.append(
            (
                _token_text(token, i),
                _logprob(token, i),
                [(_token_text(alt, i), _logprob(alt, i)) for alt in alternatives],
            )
        )
    return out


def _token_text(entry: Any, i: int) -> str:
    text = entry.get("token") if isinstance(entry, dict) else None
    if not isinstance(text, str):
        raise ValueError(f"token {i}: a token without its text")
    return text


def _logprob(entry: dict[str, Any], i: int) -> float:
    value = entry.get("logprob")
    # A log-probability is a finite number ≤ 0 (a rounding hair above 0 is allowed).
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"token {i}: logprob {value!r} is not a number")
    if not math.isfinite(value) or value > 1e-6:
        raise ValueError(f"token {i}: logprob {value!r} is not a log-probability")
    return float(min(value, 0.0))


def _score_text(score: float) -> str:
    return str(int(score)) if score == int(score) else str(score)


class LlamaCppJudge:
    """A .gguf through llama-cpp-python (`pip install meaningbench[llm]`)."""

    def __init__(self, path: str, seed: int) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise UserError(
                "backend=llama-cpp needs llama-cpp-python: pip install 'meaningbench[llm]'"
            ) from exc
        self.llm = Llama(model_path=path, n_ctx=0, seed=seed, logits_all=True, verbose=False)

    def reply(
        self, template: Template, source: str, output: str, max_tokens: int, seed: int
    ) -> JudgeReply:
        prompt = template.render(source, output)
        n = len(self.llm.tokenize(prompt.encode("utf-8")))
        context = int(self.llm.n_ctx())
        if n + max_tokens > context:
            raise PromptTooLong(
                f"prompt too long: {n} tokens + max_tokens={max_tokens} exceed the "
                f"model's context of {context} tokens"
            )
        data = self.llm.create_chat_completion(
            messages=[{"role": "user", "content": prompt}],
            temperature=0.0,
            max_tokens=max_tokens,
            logprobs=True,
            top_logprobs=TOP_LOGPROBS,
            seed=seed,
        )
        return completion_reply(data, template, "llama-cpp", max_tokens)
