"""The analysis commands on a small real study: JSON shapes, exit codes, report and exports."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from meaningbench.analysis.export import to_csv, to_latex
from meaningbench.analysis.live import correlation_table
from meaningbench.cli import main
from tests.analysis.studybuild import SOURCES, add_items, add_ratings, add_scores


@pytest.fixture
def study_path(new_study) -> Path:
    rng = np.random.default_rng(0)
    rows = [(s, s.replace("the", "a", 1), f"sys{k % 3}") for s in SOURCES for k in range(3)]
    rows = [(s, f"{o} v{k}", sys) for k, (s, o, sys) in enumerate(rows)]
    ids = add_items(new_study, rows)
    truth = rng.uniform(10, 90, len(ids))
    degraded = add_items(
        new_study,
        [(rows[k][0], rows[k][1] + " broken", None) for k in range(8)],
        kind="control-degraded",
        parents=ids[:8],
    )
    for name, noise in (("ann", 8), ("bob", 12)):
        values = {
            i: float(np.clip(t + rng.normal(0, noise), 0, 100))
            for i, t in zip(ids, truth, strict=True)
        }
        values.update({d: values[p] - 40 for d, p in zip(degraded, ids[:8], strict=True)})
        add_ratings(new_study, name, values, durations=dict.fromkeys(values, 4000))
    add_scores(
        new_study,
        "bleu",
        {i: float(t + rng.normal(0, 15)) for i, t in zip(ids, truth, strict=True)},
    )
    add_scores(new_study, "rouge1", {i: float(rng.uniform(0, 100)) for i in ids})
    return new_study.path


BLEU = "bleu[refs=source]"  # the canonical name of the default BLEU run


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_correlate_json_shape_and_values(study_path: Path, capsys) -> None:
    code, out, _ = _run(["correlate", str(study_path), "--json", "--boot", "200"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["dimension"] == "meaning" and data["n"] == 24
    assert set(data["metrics"]) == {"bleu[refs=source]", "rouge1[refs=source]"}
    keys = {
        "pearson",
        "pearson_p",
        "pearson_ci",
        "spearman",
        "spearman_p",
        "kendall",
        "kendall_p",
        "r2",
        "rmse",
        "system_pearson",
    }
    for entry in data["metrics"].values():
        assert keys <= set(entry)
        assert len(entry["pearson_ci"]) == 2
    # Same numbers through scipy: the mean of the two raters against the bleu scores.
    from meaningbench.analysis.score_columns import score_matrix
    from meaningbench.db.frames import ratings_frame
    from meaningbench.db.study import open_study

    with open_study(study_path) as study, study.session() as s:
        r = ratings_frame(s, dimension="meaning", kinds=("regular",))
        x = score_matrix(s)["bleu[refs=source]"]
    y = r.groupby("item_id")["value"].mean()
    assert data["metrics"]["bleu[refs=source]"]["pearson"] == pytest.approx(
        stats.pearsonr(x.loc[y.index], y)[0]
    )
    code, out, _ = _run(
        ["correlate", str(study_path), "--z", "--groups", "sources", "--boot", "50"], capsys
    )
    assert code == 0 and "z-scores" in out and "bleu" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["correlate", "{missing}"],
        ["correlate", "{study}", "--dimension", "nonsense"],
        ["correlate", "{study}", "--boot", "-1"],
        ["sanity", "{study}", "--metrics", "no_such_metric"],
        ["agreement", "{study}", "--dimension", "nonsense"],
        ["qc", "{missing}"],
        ["report", "{study}", "/no/such/folder/out.html"],
        ["report", "{study}", "{tmp}/out.html", "--sanity-metrics", "bleu,no_such_metric"],
    ],
)
def test_user_errors_exit_2(study_path: Path, tmp_path: Path, capsys, argv: list[str]) -> None:
    argv = [
        a.format(study=study_path, missing=tmp_path / "missing.mbstudy", tmp=tmp_path) for a in argv
    ]
    code, out, err = _run(argv, capsys)
    assert code == 2 and "error" in err and "Traceback" not in err


def test_correlate_without_scores_exits_2(new_study, capsys) -> None:
    add_items(new_study, [("a b c", "a b", None)])
    code, _, err = _run(["correlate", str(new_study.path)], capsys)
    assert code == 2 and "no metric scores" in err


def test_sanity_json_shape(study_path: Path, capsys) -> None:
    code, out, _ = _run(
        ["sanity", str(study_path), "--metrics", "bleu,rouge1", "--unrelated", "sampled", "--json"],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert set(data["metrics"]) == {"bleu[refs=source]", "rouge1[refs=source]"}
    bleu = data["metrics"]["bleu[refs=source]"]
    assert list(bleu["identical"]) == ["95", "96", "97", "98", "99", "100"]
    assert list(bleu["unrelated"]) == ["5", "4", "3", "2", "1", "0"]
    assert bleu["identical"]["100"] == 1.0 and bleu["n"] == len(SOURCES)


def test_agreement_and_qc_json(study_path: Path, capsys) -> None:
    code, out, _ = _run(["agreement", str(study_path), "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["n_annotators"] == 2 and data["icc_model"] == "ICC(2,1)"
    assert 0 < data["alpha"] <= 1 and 0 < data["ceiling"] <= 1
    assert set(data["loo"]) == {"ann", "bob"}
    code, out, _ = _run(["qc", str(study_path), "--json"], capsys)
    assert code == 0
    qc = json.loads(out)
    assert set(qc["annotators"]) == {"ann", "bob"}
    assert all(
        a["status"] == "pass" and a["degraded_pairs"] == 8 for a in qc["annotators"].values()
    )
    code, out, _ = _run(["qc", str(study_path)], capsys)
    assert code == 0 and "pass" in out


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)


def test_report_is_self_contained_html(study_path: Path, tmp_path: Path, capsys) -> None:
    out_file = tmp_path / "report.html"
    code, out, _ = _run(
        ["report", str(study_path), str(out_file), "--boot", "100", "--sanity-metrics", "bleu"],
        capsys,
    )
    assert code == 0 and out_file.exists()
    html = out_file.read_text(encoding="utf-8")
    parser = _Collect()
    parser.feed(html)
    assert parser.tags.count("svg") >= 3 and "table" in parser.tags
    for section in (
        "Correlation with human ratings",
        "Sanity checks",
        "Agreement",
        "Rater quality control",
    ):
        assert section in html
    assert not any(name in {"src", "href"} for name, _ in parser.attrs)
    assert "<script" not in html


def test_csv_and_latex_exports(study_path: Path) -> None:
    from meaningbench.db.study import open_study

    with open_study(study_path) as study:
        table = correlation_table(study, n_boot=50)
    csv_text = to_csv(table)
    back = pd.read_csv(io.StringIO(csv_text), index_col="metric")
    assert back.loc[BLEU, "pearson"] == pytest.approx(table.results[BLEU].pearson)
    assert list(back.columns)[:3] == ["n", "pearson", "pearson_p"]
    latex = to_latex(table, caption="50% of items & more", label="tab:corr")
    assert latex.count(r"\\") == 1 + len(table.results)  # header + one line per metric
    assert r"\begin{tabular}{lrrrrrrr}" in latex and r"\bottomrule" in latex
    assert r"50\% of items \& more" in latex and r"R$^2$" in latex
    frame = pd.DataFrame({"a_b": [1.5, float("nan")]}, index=pd.Index(["x_1", "y"], name="m"))
    plain = to_latex(frame)
    assert r"a\_b" in plain and r"x\_1" in plain and "--" in plain
