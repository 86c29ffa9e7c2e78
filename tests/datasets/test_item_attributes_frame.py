"""`item_attributes_frame`: the items' kept category columns as a wide table."""

from __future__ import annotations

import math
from pathlib import Path

from meaningbench.db.frames import item_attributes_frame
from meaningbench.db.models import Dataset, Item
from meaningbench.db.study import create_study


def _item(ds: Dataset, n: int, meta: dict[str, object], kind: str = "regular") -> Item:
    return Item(
        dataset=ds,
        source=f"s{n}",
        output=f"o{n}",
        source_group=f"g{n}",
        pair_key=f"k{n}",
        kind=kind,
        meta=meta,
    )


def test_one_column_per_attribute_nan_where_missing(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    with study.session(write=True) as s:
        a = Dataset(name="a", meta={})
        b = Dataset(name="b", meta={})
        s.add_all([a, b])
        s.add_all(
            [
                _item(a, 1, {"attributes": {"type": "split", "domain": "news"}}),
                _item(a, 2, {}),
                _item(b, 3, {"attributes": {"type": "paraphrase"}}),
                _item(a, 4, {"control": "identical"}, kind="control-identical"),
            ]
        )
        s.commit()
    with study.session() as s:
        frame = item_attributes_frame(s)
        only_b = item_attributes_frame(s, dataset="b")
        every_kind = item_attributes_frame(s, kinds=None)
    study.close()
    assert frame.index.name == "item_id"
    assert list(frame.index) == [1, 2, 3]
    assert list(frame.columns) == ["domain", "type"]
    assert frame.loc[1, "type"] == "split" and frame.loc[1, "domain"] == "news"
    assert frame.loc[3, "type"] == "paraphrase"
    assert math.isnan(frame.loc[2, "type"]) and math.isnan(frame.loc[3, "domain"])
    assert list(only_b.index) == [3] and list(only_b.columns) == ["type"]
    assert list(every_kind.index) == [1, 2, 3, 4]
    counts = frame["type"].value_counts()
    assert counts.to_dict() == {"split": 1, "paraphrase": 1}


def test_no_attributes_no_columns(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    with study.session(write=True) as s:
        a = Dataset(name="a", meta={})
        s.add_all([a, _item(a, 1, {})])
        s.commit()
    with study.session() as s:
        frame = item_attributes_frame(s)
    study.close()
    assert list(frame.index) == [1] and frame.columns.empty
