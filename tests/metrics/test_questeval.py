"""QuestEval through its own Python environment: availability, the child protocol, errors,
cancellation; and, where such an environment is configured, parity with QuestEval run there.

The package itself cannot be installed beside the project (it pins transformers 4.8 and
spaCy 3.0), so the protocol tests give the adapter a Python whose `questeval` is a small
stand-in with the package's interface (`QuestEval(...).corpus_questeval(...)`), which
records what it was asked and scores each output by its length relative to its source.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.questeval import PYTHON_VARIABLE, QuestEvalMetric
from meaningbench.runtime import Cancelled, CancelToken

STAND_IN = """
import json, os, time

class QuestEval:
    def __init__(self, task="text2text", do_weighter=False, no_cuda=False, use_cache=True, **kw):
        self.asked = {"task": task, "do_weighter": do_weighter, "no_cuda": no_cuda,
                      "use_cache": use_cache}

    def corpus_questeval(self, hypothesis, sources=None, list_references=None, batch_size=512):
        if os.environ.get("STAND_IN_FAIL"):
            raise RuntimeError("the QG model is not in the cache")
        time.sleep(float(os.environ.get("STAND_IN_SLEEP", "0")))
        print("loading models...")  # QuestEval's own output goes to stdout too
        with open(os.environ["STAND_IN_LOG"], "w") as fh:
            json.dump({**self.asked, "sources": sources, "batch_size": batch_size}, fh)
        scores = [min(1.0, len(h) / max(1, len(s))) for h, s in zip(hypothesis, sources)]
        return {"corpus_score": sum(scores) / len(scores), "ex_level_scores": scores}
"""
PAIRS = [
    Pair(1, "The cat sat on the mat.", "A cat sat.", ("The cat sat on the mat.",)),
    Pair(2, "It rained.", "It rained all day long.", ("It rained.",)),
]


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "site" / "questeval"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("__version__ = 'stand-in'\n", encoding="utf-8")
    (package / "questeval_metric.py").write_text(STAND_IN, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    monkeypatch.setenv(PYTHON_VARIABLE, sys.executable)
    log = tmp_path / "asked.json"
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    return log


def test_without_an_environment_it_says_which_variable_to_set(monkeypatch) -> None:
    monkeypatch.delenv(PYTHON_VARIABLE, raising=False)
    availability = QuestEvalMetric().availability()
    assert not availability.ok and availability.status() == "needs environment"
    assert availability.fix.startswith(f"set {PYTHON_VARIABLE}=")
    assert "questeval==0.2.4" in availability.fix
    monkeypatch.setenv(PYTHON_VARIABLE, "/no/such/python")
    assert "does not exist" in QuestEvalMetric().availability().reason


def test_a_python_without_questeval_is_not_available(monkeypatch) -> None:
    monkeypatch.setenv(PYTHON_VARIABLE, sys.executable)  # the project's own: no questeval
    availability = QuestEvalMetric().availability()
    assert not availability.ok
    assert "cannot import questeval" in availability.reason


def test_scores_come_from_the_child(stand_in: Path) -> None:
    metric = QuestEvalMetric(batch_size=8)
    assert metric.availability().ok
    scores = metric.score_batch(PAIRS)
    assert [s.raw for s in scores] == pytest.approx([10 / 23, 1.0])
    assert [s.value for s in scores] == pytest.approx([1000 / 23, 100.0])
    asked = json.loads(stand_in.read_text(encoding="utf-8"))
    assert asked["task"] == "text_simplification" and asked["do_weighter"] is False
    assert asked["sources"] == [p.source for p in PAIRS] and asked["batch_size"] == 8


def test_a_failing_child_reports_its_last_error_line(stand_in, monkeypatch) -> None:
    monkeypatch.setenv("STAND_IN_FAIL", "1")
    with pytest.raises(UserError, match="the QG model is not in the cache"):
        QuestEvalMetric().score_batch(PAIRS)


def test_cancelling_kills_the_child(stand_in, monkeypatch) -> None:
    monkeypatch.setenv("STAND_IN_SLEEP", "60")
    cancel = CancelToken()
    threading.Timer(1.0, cancel.cancel).start()
    began = time.monotonic()
    with pytest.raises(Cancelled):
        QuestEvalMetric().score_batch(PAIRS, cancel)
    assert time.monotonic() - began < 20


REAL = "real QuestEval parity needs {var} set to a Python with questeval==0.2.4 and its models"


def test_parity_with_questeval_in_its_environment() -> None:
    """Where a QuestEval environment is configured: the adapter's scores are QuestEval's."""
    import os

    python = os.environ.get(PYTHON_VARIABLE)
    if not python or QuestEvalMetric().availability().ok is False:
        pytest.skip(REAL.format(var=PYTHON_VARIABLE))
    direct = subprocess.run(
        [
            python,
            "-c",
            "import json, sys; from questeval.questeval_metric import QuestEval; "
            "q = QuestEval(task='text_simplification', do_weighter=False, use_cache=False); "
            "s, o = json.load(sys.stdin); "
            "print(json.dumps(q.corpus_questeval(hypothesis=o, sources=s)['ex_level_scores']))",
        ],
        input=json.dumps([[p.source for p in PAIRS], [p.output for p in PAIRS]]),
        capture_output=True,
        text=True,
        check=True,
    )
    expected = json.loads(direct.stdout.strip().splitlines()[-1])
    scores = QuestEvalMetric().score_batch(PAIRS)
    assert [s.raw for s in scores] == pytest.approx(expected, abs=1e-6)
