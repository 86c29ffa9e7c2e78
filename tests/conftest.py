"""Test set-up: Qt offscreen before any QApplication exists, a private data folder."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(autouse=True)
def _private_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("mbhome")
    monkeypatch.setenv("MEANINGBENCH_HOME", str(home))
    return home


@pytest.fixture
def shared_datasets() -> Path:
    """The public rating data beside the project; tests using it skip when it is absent."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip("../shared/datasets is not present")
    return SHARED_DATASETS


@pytest.fixture
def new_study(tmp_path: Path):
    from db.study import create_study

    study = create_study(tmp_path / "test.mbstudy")
    yield study
    study.close()
