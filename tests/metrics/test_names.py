"""The printer and the parser of metric specs live in one module and agree on the text:
every printed spec reads back to the name, model and options it was printed from."""

from __future__ import annotations

from typing import Any

import pytest

from meaningbench.errors import InputError
from meaningbench.metrics.names import MetricSpec, canonical_name, parse_spec, split_specs

DEFAULTS: dict[str, Any] = {
    "reference_mode": "source",
    "idf": False,
    "model": "default-encoder",
    "batch_size": 32,
    "threshold": 0.5,
    "variant": None,
}


@pytest.mark.parametrize(
    ("config", "model_name"),
    [
        ({}, None),
        ({"reference_mode": "references", "idf": True}, None),
        ({"threshold": 0.75, "variant": "easse"}, None),
        ({"model": "/opt/models/mine", "batch_size": 8}, "my-model"),
        ({"variant": None, "threshold": 2.0}, "enc"),
    ],
)
def test_a_printed_spec_reads_back_to_what_was_printed(
    config: dict[str, Any], model_name: str | None
) -> None:
    text = canonical_name(
        "bertscore",
        config,
        DEFAULTS,
        runtime_options=frozenset({"batch_size"}),
        model_name=model_name,
    )
    spec = parse_spec(text)
    assert (spec.name, spec.model, spec.text) == ("bertscore", model_name, text)
    expected = {
        k: v
        for k, v in config.items()
        if k not in ("batch_size", "reference_mode")
        and v != DEFAULTS[k]
        and not (model_name and k == "model")
    }
    expected["reference_mode"] = config.get("reference_mode", "source")
    assert spec.options == expected


def test_specs_split_on_commas_outside_brackets_and_refuse_what_they_cannot_read() -> None:
    texts = split_specs("bleu, bertscore[refs=references,idf=true],meaningbert@m")
    assert [parse_spec(t) for t in texts] == [
        MetricSpec("bleu", None, {}, "bleu"),
        MetricSpec("bertscore", None, {"reference_mode": "references", "idf": True}, texts[1]),
        MetricSpec("meaningbert", "m", {}, "meaningbert@m"),
    ]
    with pytest.raises(InputError, match="cannot read the metric"):
        parse_spec("bleu[[x]")
