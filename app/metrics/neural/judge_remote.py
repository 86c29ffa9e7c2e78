"""The LLM judge's other backends: an OpenAI-compatible endpoint the user runs (llama.cpp's
server, Ollama, vLLM) and, with the extra `meaningbench[llm]`, llama-cpp-python on a .gguf.

Both answer in the chat-completions shape, so one reader serves them. The network is used
only here, only for the URL the user gave (standard library `urllib`, no other client).

Expected score from an endpoint: it returns the top alternatives of each answer token only,
so the digit rule of `judge_expected` cannot run. Where the answer's score is one token, the
alternatives at that token that are themselves whole valid scores give the expected score
(`from_whole_tokens`); where it spans several tokens, the parsed number is the score.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from typing import Any

from meaningbench.errors import UserError
from meaningbench.metrics.neural.judge_expected import Expected, from_whole_tokens
from meaningbench.metrics.neural.judge_local import JudgeReply, PromptTooLong
from meaningbench.metrics.neural.judge_templates import Template, read_answer

TOP_LOGPROBS = 20
TIMEOUT_S = 600.0  # one answer of a large model on a busy CPU server
PING_TIMEOUT_S = 5.0
CONTEXT_WORDS = ("context", "too long", "exceed")


def is_endpoint(backend: str) -> bool:
    return backend.startswith(("http://", "https://"))


def unreachable(url: str, exc: BaseException) -> UserError:
    reason = getattr(exc, "reason", exc)
    return UserError(f"cannot reach the judge endpoint {url}: {reason}")


def ping(base: str) -> None:
    """Raise a one-line `UserError` naming the URL when nothing answers there."""
    url = base.rstrip("/") + "/models"
    try:
        with urllib.request.urlopen(url, timeout=PING_TIMEOUT_S) as response:
            response.read()
    except urllib.error.HTTPError:
        return  # something answers; a server without /models still serves chat
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(url, exc) from exc


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


def endpoint_reply(
    base: str, model: str, template: Template, source: str, output: str, max_tokens: int, seed: int
) -> JudgeReply:
    url = base.rstrip("/") + "/chat/completions"
    body = json.dumps(chat_request(model, template.render(source, output), max_tokens, seed))
    request = urllib.request.Request(
        url, body.encode("utf-8"), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            data = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace")[:300]
        if exc.code == 400 and any(w in text.lower() for w in CONTEXT_WORDS):
            raise PromptTooLong(f"prompt too long: the endpoint refused it ({text})") from exc
        raise UserError(f"the judge endpoint {url} answered HTTP {exc.code}: {text}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(url, exc) from exc
    except ValueError as exc:
        raise UserError(f"the judge endpoint {url} did not answer JSON: {exc}") from exc
    return completion_reply(data, template, url)


def completion_reply(data: Any, template: Template, where: str) -> JudgeReply:
    """The answer and expected score of a chat-completions response."""
    try:
        choice = data["choices"][0]
        text = str(choice["message"]["content"] or "")
    except (KeyError, IndexError, TypeError) as exc:
        raise UserError(f"{where}: not a chat-completions answer ({exc!r})") from exc
    tokens = ((choice.get("logprobs") or {}).get("content")) or []
    usage = data.get("usage") or {}
    prompt_tokens = usage.get("prompt_tokens")
    return JudgeReply(
        text,
        _expected(text, tokens, template),
        int(prompt_tokens) if isinstance(prompt_tokens, int) else None,
    )


def _expected(text: str, tokens: list[Any], template: Template) -> Expected | None:
    answer = read_answer(text, template)
    if answer.start is None or answer.score is None or not tokens:
        return None
    shown = 0
    for token in tokens:
        piece = str(token.get("token", ""))
        if shown == answer.start:
            number = piece.strip()
            if number != _score_text(answer.score) or piece != number:
                return None  # the score spans several tokens, or shares one with a space
            probs = {
                str(alt.get("token", "")): math.exp(float(alt.get("logprob", -math.inf)))
                for alt in token.get("top_logprobs") or []
            }
            probs.setdefault(piece, math.exp(float(token.get("logprob", -math.inf))))
            return from_whole_tokens(probs, template.low, template.high)
        shown += len(piece)
        if shown > answer.start:
            return None
    return None


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
        return completion_reply(data, template, "llama-cpp")
