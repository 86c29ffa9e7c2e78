"""The `lens-metric` package's own model and scorer, importable beside transformers 5.

lens-metric 0.2.0 pins pandas < 2 and pytorch-lightning 2.0.9, so `make test` installs it
without its dependencies (with pytorch-lightning 2.0.9, lightning-utilities, torchmetrics and
setuptools < 81, whose pkg_resources lightning imports). Its BERT encoder unpacks three
values from `BertModel(..., return_dict=False)`, which transformers 5 shortened to two (the
absent pooler is no longer a None in the tuple): the oracle gives the package a BertModel
that returns the transformers 4 tuple. Everything else runs as published.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

INSTALL = (
    "pip install --no-deps lens-metric==0.2.0 pytorch-lightning==2.0.9 lightning-utilities "
    'torchmetrics "setuptools<81" (`make test` installs them)'
)


def package_lens(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(RegressionMetricMultiReference, LENS) from the installed package."""
    if importlib.util.find_spec("lens") is None or importlib.util.find_spec("lens.models") is None:
        pytest.skip(f"the LENS parity oracle needs lens-metric: {INSTALL}")
    try:
        import lens.encoders.bert as lens_bert
        from lens import LENS
        from lens.models import RegressionMetricMultiReference
    except ImportError as exc:
        pytest.skip(f"lens-metric does not import here ({exc}): {INSTALL}")
    from transformers import BertModel

    class Transformers4Tuple(BertModel):
        def forward(self, *args: Any, return_dict: bool | None = None, **kwargs: Any) -> Any:
            out = super().forward(*args, return_dict=True, **kwargs)
            if return_dict is False:
                return (out.last_hidden_state, out.pooler_output, out.hidden_states)
            return out

    monkeypatch.setattr(lens_bert, "BertModel", Transformers4Tuple)
    return RegressionMetricMultiReference, LENS
