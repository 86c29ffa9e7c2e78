"""Options whose values are a closed set are typed `Literal[...]`: a value outside the set is
refused where the metric is configured (spec, command line, plugin), with the set listed,
and the metric reference lists the set."""

from __future__ import annotations

from typing import Any, ClassVar, get_args

import pytest

from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import configured_names
from meaningbench.metrics.base import ItemScore, Metric, MetricInfo, ReferenceMode
from meaningbench.metrics.lexical.text import SacrebleuTokenizer
from meaningbench.metrics.registry import metric_classes
from meaningbench.reference_docs import metric_reference


class _Plain(Metric):
    """A metric that declares reference_mode but types none of its options itself."""

    info: ClassVar[MetricInfo] = MetricInfo("plain_for_test", "Plain", "lexical", "test")
    defaults: ClassVar[dict[str, Any]] = {"reference_mode": "source", "size": 3}

    def score_batch(self, pairs: Any, cancel: Any = None) -> list[ItemScore]:
        return []


def test_a_value_outside_the_set_is_refused_with_the_set() -> None:
    with pytest.raises(
        InputError,
        match=r"tokenize must be one of '13a', 'intl', 'none', 'char', 'zh', 'ja-mecab', "
        r"'ko-mecab', not 'zz'",
    ):
        configured_names(["bleu[tokenize=zz]"], [])
    with pytest.raises(InputError, match=r"item_variant must be one of 'evaluate', 'easse'"):
        configured_names(["sari[item_variant=corpus]"], [])
    with pytest.raises(InputError, match=r"scene_origin must be one of 'best', 'manual'"):
        configured_names(["samsa[scene_origin=guess]"], [])
    with pytest.raises(InputError, match=r"device must be one of 'auto', 'cpu', 'cuda', 'mps'"):
        configured_names(["bertscore[device=tpu]"], [])
    (ok,) = configured_names(["bleu[tokenize=intl]"], [])
    assert ok.config["tokenize"] == "intl"


def test_reference_mode_is_typed_for_every_metric_that_has_it() -> None:
    assert _Plain.typed_options() == {"reference_mode": ReferenceMode}
    with pytest.raises(ValueError, match="reference_mode must be one of 'source', 'references'"):
        _Plain(reference_mode="both")
    assert _Plain(size=99).config["size"] == 99  # an untyped option is not checked
    for name, cls in metric_classes().items():
        if "reference_mode" in cls.defaults:
            assert cls.typed_options()["reference_mode"] is ReferenceMode, name


def test_the_metric_reference_lists_each_closed_set() -> None:
    row = next(line for line in metric_reference().splitlines() if line.startswith("| `bleu`"))
    listed = " \\| ".join(f'"{value}"' for value in get_args(SacrebleuTokenizer))
    assert f"`tokenize=13a` ({listed})" in row
