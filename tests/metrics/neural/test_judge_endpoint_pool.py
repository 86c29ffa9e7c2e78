"""The judge's endpoint over kept-alive connections, with requests in flight up to the
user's `concurrency`, against a real local HTTP/1.1 server (http.server in a thread) that
counts the connections it accepts and the requests it serves at once."""

from __future__ import annotations

import threading
import time
from http.server import ThreadingHTTPServer

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.judge import LlmJudgeMetric
from meaningbench.metrics.neural.support.judge_http import POOL, Limits, fetch
from tests.metrics.neural.judge_endpoint import Handler, completion

PAIRS = [Pair(i, f"Source {i}.", f"Output {i}.", ()) for i in range(12)]
ANSWER_S = 0.15


class KeepAliveHandler(Handler):
    protocol_version = "HTTP/1.1"  # connections stay open between requests
    server: CountingServer

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def do_GET(self) -> None:
        super().do_GET()
        # Closed after the answer without saying so: as a server drops an idle connection.
        self.close_connection = self.server.drop_idle


class CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), KeepAliveHandler)
        self.lock = threading.Lock()
        self.connections = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.requests: list[dict] = []
        self.answered = 0
        self.reply = _slow_numbered
        self.drop_idle = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def _slow_numbered(h: KeepAliveHandler, body: dict) -> None:
    server = h.server
    with server.lock:
        server.in_flight += 1
        server.most_in_flight = max(server.most_in_flight, server.in_flight)
    time.sleep(ANSWER_S)
    # The item's number as its score: the order of the scores is checked with it.
    number = body["messages"][0]["content"].split("Source ")[1].split(".")[0]
    with server.lock:
        server.in_flight -= 1
    h.send_json(200, completion(str(int(number) % 5 + 1)))


@pytest.fixture
def server():
    srv = CountingServer()
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def _metric(url: str, concurrency: int) -> LlmJudgeMetric:
    return LlmJudgeMetric(backend=url, model="judge", template="likert", concurrency=concurrency)


def test_requests_run_up_to_the_concurrency_on_kept_connections(server):
    scores = _metric(server.url, 3).score_batch(PAIRS)
    assert server.most_in_flight == 3
    # 12 answers over at most 3 connections (one per request in flight), not 12.
    assert server.connections <= 3
    assert [s.details["parsed"] for s in scores] == [float(i % 5 + 1) for i in range(12)]


def test_one_at_a_time_by_default_on_one_connection(server):
    scores = _metric(server.url, 1).score_batch(PAIRS[:4])
    assert server.most_in_flight == 1 and server.connections == 1
    assert len(scores) == 4


def test_concurrency_is_faster_than_one_at_a_time(server):
    started = time.perf_counter()
    _metric(server.url, 4).score_batch(PAIRS[:8])
    # Eight answers of 0.15 s, four at a time: two rounds, not eight (1.2 s).
    assert time.perf_counter() - started < 8 * ANSWER_S * 0.75


def test_a_connection_the_server_closed_while_idle_is_replaced(server):
    server.drop_idle = True
    limits = Limits(5.0, 1 << 20)
    opened = POOL.opened
    assert fetch(server.url + "/models", None, limits).status == 200
    time.sleep(0.1)  # the server has closed its end by now
    assert fetch(server.url + "/models", None, limits).status == 200
    assert server.connections == 2 and POOL.opened == opened + 2


def test_concurrency_out_of_range_is_refused_by_name(server):
    for bad in (0, 65, "many"):
        with pytest.raises(UserError, match="concurrency must be a whole number from 1 to 64"):
            _metric(server.url, bad).score_batch(PAIRS[:1])  # type: ignore[arg-type]


def test_the_judge_command_takes_the_concurrency(server, new_study, capsys):
    from meaningbench.cli import main
    from tests.jobs.studydata import add_items

    add_items(new_study, [(f"Source {i}.", f"Output {i}.", (), None) for i in range(6)])
    path = str(new_study.path)
    new_study.close()
    argv = ["judge", path, "--backend", server.url, "--model", "judge", "--template", "likert"]
    assert main([*argv, "--as-rater", "endpoint", "--concurrency", "3"]) == 0
    assert server.most_in_flight == 3 and server.connections <= 3
    assert "endpoint [machine]: 6 items rated" in capsys.readouterr().out


def test_concurrency_is_not_in_the_config_hash():
    url = "http://127.0.0.1:9/v1"
    assert _metric(url, 1).config_hash() == _metric(url, 8).config_hash()
