"""What `meaningbench metrics` says of each metric: available, needs weights (with the
option to set), needs an extra or an environment; and that offline nothing reaches for the
network or hangs."""

from __future__ import annotations

import json
import socket
import time

import pytest

from meaningbench.cli import main
from meaningbench.jobs.metric_listing import list_metrics
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.neural.questeval import PYTHON_VARIABLE
from meaningbench.runtime import JobContext
from tests.jobs.studydata import add_items
from tests.metrics.tiny_bleurt import save_tiny_bleurt


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every attempt to open a connection, refused and recorded."""
    attempts: list[object] = []

    def refuse(self, address, *args, **kwargs):  # noqa: ANN001
        attempts.append(address)
        raise OSError(f"network attempted: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(PYTHON_VARIABLE, raising=False)
    return attempts


def test_json_lists_status_and_fix(no_network, capsys) -> None:
    assert main(["metrics", "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)["metrics"]}
    for name in ("bleurt", "lens", "questeval", "bleu_samsa_am", "bleu_samsa_gm"):
        assert name in listed
    assert listed["bleu"]["status"] == "available" and listed["bleu"]["fix"] == ""
    assert listed["bleu_samsa_gm"]["status"] == "available"
    assert (listed["bleurt"]["status"], listed["bleurt"]["fix"]) == (
        "needs weights",
        "bleurt[model=PATH_OR_HUB_ID]",
    )
    assert (listed["lens"]["status"], listed["lens"]["fix"]) == (
        "needs weights",
        "lens[model=PATH_OR_HUB_ID]",
    )
    assert listed["meaningbert"]["fix"] == "meaningbert[model=PATH_OR_HUB_ID]"
    assert listed["questeval"]["status"] == "needs environment"
    assert listed["questeval"]["fix"].startswith(f"set {PYTHON_VARIABLE}=")
    assert not no_network


def test_text_says_what_to_set(no_network, capsys) -> None:
    assert main(["metrics"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "needs weights: set bleurt[model=PATH_OR_HUB_ID]" in lines["bleurt"]
    assert "not available offline" in lines["bleurt"]
    assert f"needs environment: set {PYTHON_VARIABLE}=" in lines["questeval"]
    assert lines["bleu"].rstrip().endswith("available")
    assert not no_network


def test_a_local_bleurt_folder_is_available(tmp_path, no_network) -> None:
    folder = save_tiny_bleurt(tmp_path / "bleurt")
    from meaningbench.metrics.registry import create_metric

    assert create_metric("bleurt", model=folder).availability().ok
    assert not no_network


def test_offline_scoring_of_every_metric_ends_quickly_without_the_network(
    new_study, no_network
) -> None:
    """`score --metrics all,…` with the default checkpoints named explicitly: each one
    that cannot run offline is reported, none hangs, no connection is attempted."""
    add_items(new_study, [("The cat sat on the mat.", "A cat sat.", ("The cat sat.",), "a")])
    listed = {m.name for m in list_metrics()}
    explicit = ["bleurt", "lens", "questeval", "meaningbert"]
    began = time.monotonic()
    summaries = score_study(ScoreRequest(new_study.path, explicit), JobContext())
    assert time.monotonic() - began < 60
    assert {s.metric: s.status for s in summaries} == {n: "unavailable" for n in explicit}
    reasons = {s.metric: s.error or "" for s in summaries}
    assert "not available offline" in reasons["bleurt"]
    assert reasons["bleurt"].endswith("; to use it: bleurt[model=PATH_OR_HUB_ID]")
    assert "not in the Hugging Face cache" in reasons["lens"]
    assert PYTHON_VARIABLE in reasons["questeval"]
    assert set(explicit) <= listed
    assert not no_network
