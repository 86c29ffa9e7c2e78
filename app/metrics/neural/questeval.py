"""QuestEval (Scialom et al. 2021) through a separate Python environment.

The `questeval` package (0.2.4) pins transformers 4.8, spaCy 3.0 and datasets 1.7, which
cannot be installed beside this project (Python ≥ 3.11, torch 2, transformers ≥ 4.40). It
runs instead in its own environment: the interpreter named by MEANINGBENCH_QUESTEVAL_PYTHON
(resources/docs/neural.md says how to build it). Each batch is sent to a child process
of that interpreter as JSON; the child builds `QuestEval(task=…)`, calls its own
`corpus_questeval(hypothesis=outputs, sources=sources)` and sends back the per-example
scores. QuestEval loads its T5 question generation and answering models from the Hugging
Face Hub: the child inherits HF_HUB_OFFLINE, so offline it uses the cache or fails at once.

raw = QuestEval's example score (0–1); value = 100·raw. Reference-less: the output is
compared with its source, as in the MeaningBERT study.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability, ItemScore, Metric, MetricInfo, Pair
from meaningbench.runtime import CancelToken

PYTHON_VARIABLE = "MEANINGBENCH_QUESTEVAL_PYTHON"
RESULT_PREFIX = "MEANINGBENCH_QUESTEVAL "
POLL_S = 0.2  # how often a running child is checked for cancellation
TASKS = ("text_simplification", "text2text", "summarization")
SETUP_HINT = (
    f"set {PYTHON_VARIABLE}=/path/to/python of an environment with "
    "`pip install questeval==0.2.4` (resources/docs/neural.md)"
)

# Runs in the QuestEval environment: stdin = the request, last stdout line = the scores.
CHILD = """
import json, sys
request = json.load(sys.stdin)
from questeval.questeval_metric import QuestEval
import questeval
metric = QuestEval(task=request["task"], do_weighter=request["do_weighter"],
                   no_cuda=request["no_cuda"], use_cache=False)
result = metric.corpus_questeval(hypothesis=request["outputs"], sources=request["sources"],
                                 batch_size=request["batch_size"])
scores = [float(x) for x in result["ex_level_scores"]]
version = getattr(questeval, "__version__", "")
print(request["prefix"] + json.dumps({"scores": scores, "version": version}), flush=True)
"""


def questeval_python() -> str | None:
    value = os.environ.get(PYTHON_VARIABLE, "").strip()
    return value or None


def _has_questeval(python: str) -> bool:
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('questeval') is None)"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def run_child(
    python: str, request: dict[str, Any], cancel: CancelToken | None = None
) -> dict[str, Any]:
    """Run the QuestEval child on one request; cancelling kills it.

    `communicate` drains both pipes while it waits, so a child that logs a lot (progress
    bars on stderr) never blocks on a full pipe; it is retried until the child ends.
    """
    proc = subprocess.Popen(
        [python, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pending: str | None = json.dumps(request)
    while True:
        try:
            stdout, stderr = proc.communicate(pending, timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            pending = None
            if cancel is not None and cancel.cancelled:
                proc.kill()
                proc.communicate()
                cancel.check()
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return dict(json.loads(line[len(RESULT_PREFIX) :]))
    last = (stderr.strip().splitlines() or ["no output"])[-1]
    raise UserError(f"QuestEval ({python}) failed: {last}")


class QuestEvalMetric(Metric):
    info = MetricInfo(
        name="questeval",
        label="QuestEval",
        family="neural",
        description="Question generation and answering between source and output (Scialom "
        "et al. 2021), run in its own environment; 100·score.",
        needs_model=True,
        reference="questeval 0.2.4 `corpus_questeval`, run in its own environment",
        parity_test="tests/metrics/test_questeval.py::test_parity_with_questeval_in_its_environment",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "task": "text_simplification",
        "do_weighter": False,
        "device": "auto",
        "batch_size": 64,
    }
    batches_itself: ClassVar[bool] = True

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        if self.config["task"] not in TASKS:
            raise ValueError(f"questeval: task must be one of {TASKS}, not {self.config['task']!r}")

    def availability(self) -> Availability:
        python = questeval_python()
        if python is None:
            return Availability(
                False,
                f"QuestEval runs in its own environment: {SETUP_HINT}",
                "environment",
                SETUP_HINT,
            )
        if not Path(python).exists():
            return Availability(
                False, f"{PYTHON_VARIABLE} names {python}, which does not exist", "environment",
                SETUP_HINT,
            )  # fmt: skip
        if not _has_questeval(python):
            return Availability(
                False, f"{python} cannot import questeval", "environment", SETUP_HINT
            )
        return Availability(True, f"runs in {python}")

    def versions(self) -> dict[str, str]:
        return {"questeval_python": questeval_python() or ""}

    def model_id(self) -> str | None:
        return "questeval"

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        python = questeval_python()
        if python is None:
            raise UserError(f"QuestEval needs its own environment: {SETUP_HINT}")
        request = {
            "prefix": RESULT_PREFIX,
            "task": self.config["task"],
            "do_weighter": bool(self.config["do_weighter"]),
            "no_cuda": self.config["device"] == "cpu",
            "batch_size": int(self.config["batch_size"]),
            "sources": [p.source for p in pairs],
            "outputs": [p.output for p in pairs],
        }
        result = run_child(python, request, cancel)
        scores = [float(x) for x in result["scores"]]
        if len(scores) != len(pairs):
            raise UserError(f"QuestEval returned {len(scores)} scores for {len(pairs)} items")
        return [ItemScore(100.0 * s, s) for s in scores]
