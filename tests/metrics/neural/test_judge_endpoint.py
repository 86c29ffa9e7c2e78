"""The LLM judge against a real local HTTP server speaking the OpenAI chat-completions
protocol (http.server in a thread): the request it sends, the expected score from the
returned token probabilities, and an unreachable URL named in one line with nothing stored."""

from __future__ import annotations

import json
import math
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.judge import LlmJudgeMetric

PAIR = Pair(1, "The cat sat on the mat.", "A cat sat on a mat.", ())
# The answer "4" with its top alternatives; "x" is not a score and is left out.
TOP = [("4", 0.6), ("3", 0.3), ("x", 0.1)]


class ChatServer(BaseHTTPRequestHandler):
    requests: list[dict] = []
    answer = "4"

    def log_message(self, *args: object) -> None:
        return None

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"data": [{"id": "judge"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        if "word " * 50 in body["messages"][0]["content"]:
            self._send(
                400, {"error": {"message": "the request exceeds the available context size"}}
            )
            return
        tokens = [
            {
                "token": self.answer,
                "logprob": math.log(TOP[0][1]),
                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in TOP],
            }
        ]
        self._send(
            200,
            {
                "choices": [
                    {
                        "message": {"role": "assistant", "content": self.answer},
                        "logprobs": {"content": tokens},
                    }
                ],
                "usage": {"prompt_tokens": 42},
            },
        )


@pytest.fixture
def endpoint() -> Iterator[str]:
    ChatServer.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_endpoint_answer_gives_the_expected_score(endpoint):
    metric = LlmJudgeMetric(backend=endpoint, template="likert", model="judge", seed=7)
    assert metric.availability().ok
    score = metric.score_batch([PAIR])[0]
    hand = (4 * 0.6 + 3 * 0.3) / (0.6 + 0.3)
    assert score.raw == pytest.approx(hand)
    assert score.value == pytest.approx((hand - 1) * 25)
    assert score.details["method"] == "expected" and score.details["parsed"] == 4.0
    assert score.details["prompt_tokens"] == 42
    sent = ChatServer.requests[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["model"] == "judge" and sent["temperature"] == 0 and sent["seed"] == 7
    assert sent["max_tokens"] == 4 and sent["logprobs"] is True
    assert PAIR.source in sent["messages"][0]["content"]
    assert metric.versions()["endpoint"] == endpoint


def test_a_context_refusal_is_that_item_not_scored(endpoint):
    long_pair = Pair(2, "word " * 60, "word", ())
    scores = LlmJudgeMetric(backend=endpoint, template="likert").score_batch([PAIR, long_pair])
    assert scores[0].value is not None
    assert scores[1].value is None and scores[1].not_computed.startswith("prompt too long")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_endpoint_is_named_in_one_line_and_nothing_is_stored(new_study, capsys):
    from meaningbench.cli import main
    from tests.jobs.studydata import add_items

    add_items(new_study, [(PAIR.source, PAIR.output, (), None)])
    url = f"http://127.0.0.1:{_free_port()}/v1"
    found = LlmJudgeMetric(backend=url).availability()
    assert not found.ok and "\n" not in found.reason
    assert found.reason.startswith(f"cannot reach the judge endpoint {url}/models")
    path = str(new_study.path)
    new_study.close()
    code = main(["score", path, "--metrics", f"llm_judge[backend={url}]"])
    out = capsys.readouterr()
    assert code != 0
    assert f"cannot reach the judge endpoint {url}" in out.out + out.err
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT COUNT(*) FROM score").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM metric_run").fetchone() == (0,)
    finally:
        conn.close()
