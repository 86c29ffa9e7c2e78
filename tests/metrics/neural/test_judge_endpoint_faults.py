"""The LLM judge against a local fake endpoint that misbehaves: unreadable or non-finite
token probabilities, an error page of many lines, redirects, an answer that trickles, one
without end, one far longer than max_tokens allows, and a number off every scale. Each
ends in a one-line message or a stored score that is valid JSON, within the time limit."""

from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from meaningbench.cli import main
from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.judge import LlmJudgeMetric, describe_judgement
from meaningbench.metrics.neural.support.judge_expected import from_whole_tokens
from meaningbench.metrics.neural.support.judge_remote import answer_cap
from tests.jobs.studydata import add_items
from tests.metrics.neural.judge_endpoint import (
    TOP,
    Handler,
    completion,
    endless,
    fake_endpoint,
    trickle,
)

PAIR = Pair(1, "The cat sat on the mat.", "A cat sat on a mat.", ())
LIKERT_4 = 75.0  # the parsed answer "4" on 1–5, as 0–100
LOG_TOP = math.log(TOP[0][1])


def _judge(url: str, **options: Any) -> LlmJudgeMetric:
    return LlmJudgeMetric(backend=url, template="likert", model="judge", **options)


def _tokens(logprob: Any = LOG_TOP, alternatives: Any = None) -> list[Any]:
    alts = [{"token": t, "logprob": math.log(p)} for t, p in TOP]
    return [
        {
            "token": "4",
            "logprob": logprob,
            "top_logprobs": alts if alternatives is None else alternatives,
        }
    ]


def _answering(body: dict[str, Any]) -> Any:
    def reply(h: Handler, _request: dict[str, Any]) -> None:
        h.send_json(200, body)

    return reply


@pytest.mark.parametrize(
    "tokens",
    [
        _tokens(logprob="abc"),
        _tokens(logprob=None),
        _tokens(logprob=0.5),
        _tokens(alternatives=[1, 2]),
        _tokens(alternatives=[{"token": "3"}]),
        _tokens(alternatives={"token": "3"}),
        ["4"],
        {"token": "4"},
    ],
    ids=["text", "null", "positive", "numbers", "no-logprob", "object", "strings", "dict"],
)
def test_unreadable_token_probabilities_give_the_parsed_number_and_say_so(tokens):
    with fake_endpoint(_answering(completion("4", tokens))) as server:
        score = _judge(server.url).score_batch([PAIR])[0]
    assert score.value == LIKERT_4 and score.details["method"] == "parsed"
    note = score.details["note"]
    assert note.startswith("token probabilities not readable: ") and "\n" not in note
    assert note in describe_judgement(score.details)


@pytest.mark.parametrize(
    "body",
    [{"choices": []}, {"choices": ["4"]}, {"choices": [{"message": {"content": 4}}]}, [1]],
    ids=["no-choice", "text-choice", "number-content", "list"],
)
def test_an_answer_not_in_the_chat_shape_is_named_in_one_line(body):
    with fake_endpoint(_answering(body)) as server, pytest.raises(UserError) as refused:
        _judge(server.url).score_batch([PAIR])
    assert str(refused.value).startswith(f"{server.url}/chat/completions: not a chat-completions")
    assert "choices[0].message.content" in str(refused.value)


def _stored(path: str) -> list[tuple[float | None, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT value, details FROM score ORDER BY item_id").fetchall()
    finally:
        conn.close()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _study_with(new_study: Any, n: int = 1) -> str:
    add_items(new_study, [(f"Source {i}.", f"Output {i}.", (), None) for i in range(n)])
    path = str(new_study.path)
    new_study.close()
    return path


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_probabilities_are_never_stored(new_study, capsys, bad):
    # json.dumps writes NaN and Infinity as such, as a broken server would.
    alternatives = [{"token": "4", "logprob": math.log(0.6)}, {"token": "3", "logprob": bad}]
    path = _study_with(new_study)
    with fake_endpoint(_answering(completion("4", _tokens(bad, alternatives)))) as server:
        spec = f"llm_judge[backend={server.url},template=likert]"
        assert main(["score", path, "--metrics", spec, "--quiet"]) == 0
    [(value, details)] = _stored(path)
    parsed = json.loads(details, parse_constant=_no_constant)
    assert value == LIKERT_4 and parsed["method"] == "parsed"
    assert "not a log-probability" in parsed["note"]


def test_an_error_page_is_one_line_of_the_table(new_study, capsys):
    page = "Traceback (most recent call last):\n  File 'server.py'\n\nRuntimeError: boom\n"

    def reply(h: Handler, _request: dict[str, Any]) -> None:
        h.send_bytes(500, page.encode("utf-8"))

    path = _study_with(new_study)
    with fake_endpoint(reply) as server:
        spec = f"llm_judge[backend={server.url}]"
        assert main(["score", path, "--metrics", spec, "--quiet"]) == 1
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if "HTTP 500" in line]
    assert len(rows) == 1 and rows[0].startswith("llm_judge")
    assert "Traceback (most recent call last): File 'server.py' RuntimeError: boom" in rows[0]
    assert not [line for line in out if "boom" in line and line not in rows]


def test_a_redirect_to_another_port_is_not_followed():
    with fake_endpoint() as elsewhere:

        def reply(h: Handler, _request: dict[str, Any]) -> None:
            target = f"{elsewhere.url}/chat/completions"
            h.send_bytes(302, b"", {"Location": target, "Content-Length": "0"})

        with fake_endpoint(reply) as server, pytest.raises(UserError) as refused:
            _judge(server.url).score_batch([PAIR])
    assert elsewhere.requests == []
    message = str(refused.value)
    assert f"redirects (HTTP 302) to {elsewhere.url}/chat/completions" in message
    assert "another host or port: not followed" in message and "\n" not in message


def test_a_redirect_on_the_same_host_and_port_is_followed():
    def reply(h: Handler, _request: dict[str, Any]) -> None:
        if h.path.startswith("/v1/"):
            h.send_bytes(307, b"", {"Location": "/v2/chat/completions", "Content-Length": "0"})
        else:
            h.send_json(200, completion("4"))

    with fake_endpoint(reply) as server:
        score = _judge(server.url).score_batch([PAIR])[0]
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions", "/v2/chat/completions"]
    assert server.requests[1]["messages"] == server.requests[0]["messages"]
    assert score.details["method"] == "expected"


def test_the_timeout_holds_for_the_whole_answer_not_each_read():
    # A byte every 0.2 s: a socket timeout of 1 s per read would wait 200 s.
    with fake_endpoint(trickle(0.2)) as server:
        began = time.monotonic()
        with pytest.raises(UserError, match=r"did not answer within 1 s$"):
            _judge(server.url, timeout=1).score_batch([PAIR])
        spent = time.monotonic() - began
    assert spent < 5.0


def test_a_bad_timeout_is_named():
    found = _judge("http://127.0.0.1:9/v1", timeout=0).availability()
    assert not found.ok and "timeout must be seconds between 0 and 6000, not 0" in found.reason


def test_an_answer_past_the_cap_is_refused_without_reading_it_all():
    cap = answer_cap(4)  # likert's max_tokens

    def declared(h: Handler, _request: dict[str, Any]) -> None:
        h.send_bytes(200, b"{", {"Content-Length": str(100 << 20)})

    with fake_endpoint(declared) as server, pytest.raises(UserError) as refused:
        _judge(server.url).score_batch([PAIR])
    assert str(refused.value).endswith(f"answered more than {cap:,} bytes: not read further")
    with fake_endpoint(endless()) as server, pytest.raises(UserError) as refused:
        _judge(server.url).score_batch([PAIR])
    assert f"answered more than {cap:,} bytes" in str(refused.value)


def test_only_what_max_tokens_can_hold_is_read_and_stored(new_study):
    # da: max_tokens 8, so 512 characters are read; the number after them is not.
    content = "x" * 20_000 + " 50"
    path = _study_with(new_study, 3)
    with fake_endpoint(_answering(completion(content, []))) as server:
        assert main(["score", path, "--metrics", f"llm_judge[backend={server.url}]"]) == 0
    stored = _stored(path)
    assert len(stored) == 3
    for value, details in stored:
        parsed = json.loads(details)
        assert value is None and parsed["answer"] == "x" * 512
        assert parsed["answer_chars"] == len(content)
        assert "the answer holds no number" in parsed["not_computed"]
        assert len(details) < 1500
    assert Path(path).stat().st_size < 1 << 20


@pytest.mark.parametrize("answer", ["Score: 1e999", "Score: 1E+999", "100e1"])
def test_a_number_in_exponent_form_is_read_whole(answer):
    with fake_endpoint(_answering(completion(answer, []))) as server:
        score = LlmJudgeMetric(backend=server.url, model="judge").score_batch([PAIR])[0]
    assert score.value is None
    number = answer.removeprefix("Score: ")
    assert f"the answer's number {number} is outside 0–100" in score.not_computed


@pytest.mark.parametrize(("bad", "value"), [("NaN", 40.0), ("Infinity", 40.0), ("1e999", None)])
def test_a_span_list_with_a_non_finite_number_is_not_stored(new_study, bad, value):
    # Python's JSON reader takes these; the stored details must stay JSON.
    answer = f'[{{"text": "cat", "severity": "major", "weight": {bad}}}] Score: 40'
    path = _study_with(new_study)
    with fake_endpoint(_answering(completion(answer, []))) as server:
        spec = f"llm_judge[backend={server.url},template=esa]"
        assert main(["score", path, "--metrics", spec, "--quiet"]) == 0
    [(stored, details)] = _stored(path)
    parsed = json.loads(details, parse_constant=_no_constant)
    assert stored == value and "spans" not in parsed


def test_non_finite_probabilities_from_any_backend_give_no_expected_score():
    assert from_whole_tokens({"4": math.nan, "3": 0.3}, 1, 5) is None
    assert from_whole_tokens({"4": math.inf, "3": 0.3}, 1, 5) is None
    assert from_whole_tokens({"4": 0.6, "3": 0.3}, 1, 5) is not None
