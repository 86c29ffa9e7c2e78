"""The study summary and the demo study."""

from __future__ import annotations

import json
from pathlib import Path

from meaningbench.datasets.demo import DEMO_DATASET, build_demo_study, default_demo_path
from meaningbench.datasets.importer import import_file
from meaningbench.datasets.info import study_info
from meaningbench.db.study import open_study
from meaningbench.settings import studies_dir
from tests.datasets.helpers import count, rows, write


def test_info_counts(new_study, tmp_path: Path) -> None:
    import_file(
        new_study,
        write(
            tmp_path / "w.csv",
            "source,output,system,annotator,meaning,fluency\n"
            "S1.,O1.,a,r1,80,90\nS1.,O1.,a,r2,70,\nS1.,O2.,b,r1,10,20\n",
        ),
    )
    import_file(
        new_study, write(tmp_path / "c.tsv", "original\tsimplification\tlabel\nX.\tY.\t50\n")
    )
    import_file(
        new_study,
        write(
            tmp_path / "k.csv",
            "source,output,kind\nA.,A.,control-identical\nB.,B.,control-identical\n"
            "C.,zz,control-unrelated\n",
        ),
    )
    info = study_info(new_study)
    assert info.items == 6
    assert info.items_by_kind == {"regular": 3, "control-identical": 2, "control-unrelated": 1}
    assert [(d["name"], d["items"]) for d in info.datasets] == [("w", 2), ("c", 1), ("k", 3)]
    assert {s["name"]: s["items"] for s in info.systems} == {"a": 1, "b": 1, None: 4}
    assert {a["name"]: (a["kind"], a["ratings"]) for a in info.annotators} == {
        "r1": ("named", 4),
        "r2": ("named", 1),
        "aggregate:c": ("aggregate", 1),
    }
    dims = {d["name"]: d["ratings"] for d in info.dimensions}
    assert dims == {"meaning": 4, "fluency": 2, "simplicity": 0}
    assert info.ratings_current == 6 and info.metric_runs == [] and info.scores == 0
    json.dumps(info.to_dict())  # JSON-ready
    text = "\n".join(info.lines())
    assert "r1 (named): 4 ratings" in text
    assert "  2 named raters: per-rater (named), 5 ratings by 2 named raters" in text
    assert "  aggregate:c: aggregate, 1 rating (published labels; n not given)" in text


def test_demo_study(tmp_path: Path) -> None:
    path = build_demo_study(tmp_path / "demo.mbstudy")
    study = open_study(path)
    try:
        assert count(study, "SELECT COUNT(*) FROM item") == 60
        assert count(study, "SELECT COUNT(DISTINCT source_group) FROM item") == 12
        per_source = {n for (n,) in rows(study, "SELECT COUNT(*) FROM item GROUP BY source_group")}
        assert per_source <= {4, 5}
        assert count(study, "SELECT COUNT(DISTINCT system) FROM item") >= 5
        name, meta = rows(study, "SELECT name, meta FROM dataset")[0]
        assert name == DEMO_DATASET and json.loads(meta)["illustrative"] is True
        annotators = rows(study, "SELECT name, kind FROM annotator ORDER BY name")
        assert annotators == [("demo-rater-1", "named"), ("demo-rater-2", "named")]
        # Every item rated by both demo raters on meaning, fluency and simplicity.
        assert count(study, "SELECT COUNT(*) FROM rating") == 60 * 2 * 3
        refs = [len(json.loads(r)) for (r,) in rows(study, "SELECT refs FROM item")]
        assert set(refs) <= {1, 2} and 2 in refs
        # The copies are the source itself; meaning ratings follow the kind of output.
        copies = rows(
            study, "SELECT COUNT(*) FROM item WHERE system = 'copier' AND source != output"
        )
        assert copies == [(0,)]
        means = dict(
            rows(
                study,
                "SELECT i.system, AVG(r.value) FROM rating r JOIN item i ON i.id = r.item_id "
                "JOIN dimension d ON d.id = r.dimension_id WHERE d.name = 'meaning' GROUP BY i.system",
            )
        )
        assert means["copier"] > means["paraphraser"] > means["trimmer"] > means["contradictor"]
        assert means["contradictor"] > means["scrambler"]
    finally:
        study.close()
    assert not list(tmp_path.glob(".*building*"))


def test_demo_is_never_rebuilt_over_an_existing_study(tmp_path: Path) -> None:
    path = build_demo_study()
    assert path == default_demo_path() and path.parent == studies_dir()
    before = path.read_bytes()
    assert build_demo_study() == path
    assert path.read_bytes() == before
