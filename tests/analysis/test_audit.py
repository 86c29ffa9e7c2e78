"""`meaningbench audit`: published labels against raw ratings, checked with pandas oracles.

The study is built from the public files shipped with the tests (CSMD train + dev, SimpDA
2022, QuestEval; see tests/fixtures/datasets/ATTRIBUTION.md) and audited in a real
`meaningbench` process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from meaningbench.analysis.audit import GROUP_COLUMNS, audit_study, normalise, parse_scale
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study, open_study
from meaningbench.errors import UserError
from tests.analysis.studybuild import add_items, add_ratings, add_scores

ROOT = Path(__file__).resolve().parents[2]
RAW = "import:raw.csv"  # raw ratings that came in a rating file, as an import writes them


def _cli(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def csmd_study(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "csmd.mbstudy"
    study = create_study(path)
    try:
        for name in ("train", "dev"):
            import_file(study, shared_datasets / "csmd" / f"{name}.tsv", dataset="csmd")
        import_file(study, shared_datasets / "simpda2022" / "simpDA_2022.csv", dataset="simpda")
        import_file(
            study,
            shared_datasets / "csmd_sources" / "questeval_likert_ratings_cleaned.csv",
            dataset="questeval",
        )
    finally:
        study.close()
    return path


def _oracle(shared: Path) -> pd.DataFrame:
    """Every CSMD label with the pandas mean of its pair's raw ratings, per source file."""
    labels = pd.concat(
        pd.read_csv(shared / "csmd" / f"{n}.tsv", sep="\t", keep_default_na=False)
        for n in ("train", "dev")
    )
    labels["key"] = [
        normalise(a) + "\t" + normalise(b)
        for a, b in zip(labels["original"], labels["simplification"], strict=True)
    ]
    simpda = pd.read_csv(shared / "simpda2022" / "simpDA_2022.csv")
    simpda["key"] = [
        normalise(a) + "\t" + normalise(b)
        for a, b in zip(simpda["Input.original"], simpda["Input.simplified"], strict=True)
    ]
    q = pd.read_csv(shared / "csmd_sources" / "questeval_likert_ratings_cleaned.csv")
    q = q[q["aspect"] == "meaning"]
    q["key"] = [
        normalise(a) + "\t" + normalise(b)
        for a, b in zip(q["source"], q["simplification"], strict=True)
    ]
    means = pd.concat(
        [
            simpda.groupby("key")["Answer.adequacy"]
            .mean()
            .rename("raw")
            .to_frame()
            .assign(file="simpda"),
            q.groupby("key")["rating"].mean().rename("raw").to_frame().assign(file="questeval"),
        ]
    )
    assert not means.index.duplicated().any()  # no pair in both files: no cross-file ambiguity
    return labels.join(means, on="key", how="inner")


def test_audit_matches_an_independent_pandas_computation(
    csmd_study: Path, shared_datasets: Path
) -> None:
    proc = _cli("audit", csmd_study, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    oracle = _oracle(shared_datasets)
    groups = {g["source"]: g for g in out["groups"]}
    assert set(groups) == {"simpda", "questeval"}
    for file, part in oracle.groupby("file"):
        g = groups[file]
        label = part["label"].astype(float).to_numpy()
        raw = part["raw"].to_numpy()
        assert g["n_labels"] == len(part)
        assert g["n_equal"] == int((np.abs(label - raw) <= 0.01 + 1e-9).sum())
        assert g["mean_abs_diff"] == pytest.approx(np.mean(np.abs(label - raw)))
        assert g["pearson"] == pytest.approx(stats.pearsonr(label, raw)[0])
        assert g["status"] == "compared" and g["label_scale"] == g["raw_scale"] == "0–100"
    assert out["unmatched"]["aggregate:csmd"] == 948 - len(oracle)
    # The scramble: SimpDA and QuestEval labels mostly carry another pair's mean.
    assert groups["simpda"]["share_equal"] < 0.1
    assert groups["questeval"]["share_equal"] < 0.05
    # SimpDA: CSMD's groupby over the output text, assigned in file order — every label.
    assert "sorted by output text" in groups["simpda"]["mapping"]
    assert groups["simpda"]["mapping_share"] == pytest.approx(1.0)
    assert "sorted by source, then output" in groups["questeval"]["mapping"]
    assert groups["questeval"]["mapping_share"] > 0.9


def test_simpda_mapping_is_the_sorted_groupby(csmd_study: Path, shared_datasets: Path) -> None:
    """The reported mapping, rebuilt in pandas: file order receives sorted-key means."""
    raw = pd.read_csv(shared_datasets / "simpda2022" / "simpDA_2022.csv")
    rows = raw[["Input.original", "Input.simplified"]].drop_duplicates()
    scrambled = dict(
        zip(
            rows["Input.simplified"],
            raw.groupby("Input.simplified")["Answer.adequacy"].mean(),
            strict=True,
        )
    )
    with open_study(csmd_study) as study, study.session() as session:
        result = audit_study(session)
    table = result.labels[result.labels["source_file"] == "simpda"]
    expected = np.array([scrambled[o] for o in table["output"]])
    assert table["mapped_mean"].to_numpy(dtype=float) == pytest.approx(expected)
    assert table["label"].to_numpy(dtype=float) == pytest.approx(expected, abs=0.01)


def test_fix_adds_a_label_set_and_labels_picks_it(csmd_study: Path, tmp_path: Path) -> None:
    path = tmp_path / "fix.mbstudy"
    path.write_bytes(csmd_study.read_bytes())
    before = _cli("audit", path, "--json")
    proc = _cli("audit", path, "--fix", "corrected", "--json")
    assert proc.returncode == 0, proc.stderr
    fix = json.loads(proc.stdout)["fix"]
    assert fix["name"] == "corrected" and fix["n_copied"] == 0
    # Published labels stay; the new set equals its raw means exactly.
    again = json.loads(_cli("audit", path, "--json").stdout)
    published = [g for g in again["groups"] if g["label_set"] == "aggregate:csmd"]
    assert published == json.loads(before.stdout)["groups"]
    corrected = [g for g in again["groups"] if g["label_set"] == "corrected"]
    assert {g["source"] for g in corrected} == {"simpda", "questeval"}
    assert all(g["n_equal"] == g["n_labels"] for g in corrected)
    assert sum(g["n_labels"] for g in corrected) == fix["n_from_raw"]
    # A second fix of the same name is refused; the study is unchanged.
    refused = _cli("audit", path, "--fix", "corrected")
    assert refused.returncode == 2 and "already exists" in refused.stderr


def test_labels_option_never_averages_two_sets(new_study) -> None:
    ids = add_items(new_study, [("a b c", "a b", None), ("d e f", "d e", None), ("g h", "g", None)])
    add_ratings(
        new_study,
        "aggregate:pub",
        dict(zip(ids, [10.0, 50.0, 90.0], strict=True)),
        kind="aggregate",
    )
    add_items(
        new_study,
        [("a b c", "a b", "s1"), ("d e f", "d e", "s1"), ("g h", "g", "s2"), ("g h", "g", "s3")],
        dataset="raw",
    )
    raw_ids = [i + 3 for i in ids] + [ids[2] + 4]
    add_ratings(new_study, "r1", {raw_ids[0]: 80.0, raw_ids[1]: 20.0, raw_ids[2]: 40.0}, origin=RAW)
    add_ratings(new_study, "r2", {raw_ids[0]: 60.0, raw_ids[1]: 30.0, raw_ids[3]: 60.0}, origin=RAW)
    add_scores(new_study, "m", {i: float(k) for k, i in enumerate(ids)})
    with new_study.session() as s:
        result = audit_study(s)
    (g,) = result.groups
    assert g.source == "raw" and g.n_labels == 3 and g.n_ambiguous == 1
    # "g h" → "g" occurs in two raw rows (systems s2, s3): their ratings are pooled.
    by_output = result.labels.set_index("output")["raw_mean"]
    assert by_output.to_dict() == pytest.approx({"a b": 70.0, "d e": 25.0, "g": 50.0})
    from meaningbench.analysis.label_sets import add_fixed_labels, choose_label_set

    with new_study.session() as s:
        add_fixed_labels(s, "fixed", result)
    published = StudyAnalysis.from_study(new_study, labels="aggregate:pub").data.ratings.scores()
    fixed = StudyAnalysis.from_study(new_study, labels="fixed").data.ratings.scores()
    default = StudyAnalysis.from_study(new_study).data
    assert default.label_sets == ["aggregate:pub"]  # an audit's set is never the silent default
    pos = {int(i): k for k, i in enumerate(default.item_ids)}
    assert [published.raw[pos[i]] for i in ids] == [10.0, 50.0, 90.0]
    assert [fixed.raw[pos[i]] for i in ids] == pytest.approx([70.0, 25.0, 50.0])
    with new_study.session() as s:
        choose_label_set(s, "fixed")
    assert StudyAnalysis.from_study(new_study).data.label_sets == ["fixed"]
    with pytest.raises(UserError, match="no aggregate label set 'nope'"):
        StudyAnalysis.from_study(new_study, labels="nope")


def test_scale_mismatch_is_refused_then_mapped(new_study) -> None:
    ids = add_items(new_study, [("a b", "a", None), ("c d", "c", None), ("e f", "e", None)])
    add_ratings(
        new_study,
        "aggregate:pub",
        dict(zip(ids, [25.0, 50.0, 100.0], strict=True)),
        kind="aggregate",
    )
    raw = add_items(
        new_study, [("a b", "a", "x"), ("c d", "c", "x"), ("e f", "e", "x")], dataset="likert"
    )
    add_ratings(new_study, "r1", dict(zip(raw, [2.0, 3.0, 5.0], strict=True)), origin=RAW)
    with new_study.session() as s:
        refused = audit_study(s)
    (g,) = refused.groups
    assert g.status == "scale mismatch" and g.label_scale == "0–100" and g.raw_scale == "1–5"
    assert g.n_equal == 0 and g.pearson is None
    assert any("--scale" in n for n in refused.notes)
    with new_study.session() as s:
        mapped = audit_study(s, scale=parse_scale("raw=1-5"))
    (g,) = mapped.groups
    assert g.status == "compared" and g.n_equal == 3
    with pytest.raises(UserError):
        parse_scale("raw=5-1")


def test_normalisation_matches_whitespace_and_unicode_variants() -> None:
    assert normalise("  Caf\u0065\u0301  au\tlait\n") == normalise("Café au lait")
    assert normalise("A b") != normalise("a b")  # case is kept


def test_report_has_the_audit_section(csmd_study: Path, tmp_path: Path) -> None:
    path = tmp_path / "r.mbstudy"
    path.write_bytes(csmd_study.read_bytes())
    assert _cli("score", path, "--metrics", "chrf").returncode in (0, 1)
    out = tmp_path / "r.html"
    proc = _cli("report", path, out, "--boot", "0", "--no-sanity")
    assert proc.returncode == 0, proc.stderr
    html = out.read_text(encoding="utf-8")
    assert "Published labels against raw ratings" in html
    assert "sorted by output text" in html
    assert "Label set used by this report: <b>aggregate:csmd</b>" in html


def _report_audit_rows(html: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the report's audit table (the first after its heading)."""
    section = html.split("Published labels against raw ratings</h2>", 1)[1]
    table = section.split("<table>", 1)[1].split("</table>", 1)[0]
    head = [unescape(c) for c in re.findall(r"<th>(.*?)</th>", table)]
    rows = [
        [unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>", 1)[1])
    ]
    return head, rows


def _printed(cells: list[str]) -> re.Pattern[str]:
    """A terminal table line holding these cells in this order, and nothing else."""
    return re.compile(r"\s*" + r"\s+".join(re.escape(c) for c in cells) + r"\s*")


def test_report_and_terminal_show_the_same_audit_rows(csmd_study: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    proc = _cli("report", csmd_study, out, "--boot", "0", "--no-sanity")
    assert proc.returncode == 0, proc.stderr
    head, rows = _report_audit_rows(out.read_text(encoding="utf-8"))
    printed = _cli("audit", csmd_study)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    with open_study(csmd_study) as study, study.session() as s:
        groups = audit_study(s).groups
    assert head == ["label set", *GROUP_COLUMNS]
    assert len(rows) == len(groups) >= 2
    assert [r[0] for r in rows] == [g.label_set for g in groups]
    # The terminal prints the columns, then the index's name, then the same rows in order.
    start = next(i for i, line in enumerate(lines) if _printed(head[1:]).fullmatch(line))
    assert lines[start + 1].strip() == "label set"
    table = lines[start + 2 : start + 2 + len(rows)]
    for row, line in zip(rows, table, strict=True):
        assert _printed(row).fullmatch(line), (row, line)
    # The numbers are written once for both: counts with separators, MAD to two places.
    compared = next(g for g in groups if g.mean_abs_diff is not None)
    row = rows[groups.index(compared)]
    assert row[3] == f"{compared.n_labels:,}" and row[5] == f"{compared.mean_abs_diff:.2f}"


def test_a_pair_in_two_files_is_resolved_by_the_label_or_pooled(new_study) -> None:
    ids = add_items(new_study, [("s t", "s", None), ("u v", "u", None)])
    add_ratings(new_study, "aggregate:pub", {ids[0]: 40.0, ids[1]: 77.0}, kind="aggregate")
    a = add_items(new_study, [("s t", "s", "x"), ("u v", "u", "x")], dataset="a")
    b = add_items(new_study, [("s t", "s", "y"), ("u v", "u", "y")], dataset="b")
    add_ratings(new_study, "r1", {a[0]: 40.0, b[0]: 80.0, a[1]: 10.0, b[1]: 30.0}, origin=RAW)
    with new_study.session() as s:
        result = audit_study(s)
    by_source = {g.source: g for g in result.groups}
    # "s": the label equals file a's mean only, so it is checked against file a.
    assert by_source["a"].n_labels == 1 and by_source["a"].n_equal == 1
    # "u": the label equals neither; it is checked against the pooled mean (10 + 30) / 2.
    pooled = by_source["a + b"]
    assert pooled.n_labels == 1 and pooled.n_equal == 0 and pooled.n_ambiguous == 1
    row = result.labels.set_index("output").loc["u"]
    assert row["raw_mean"] == pytest.approx(20.0) and bool(row["several_files"])


def test_training_targets_follow_the_label_set(new_study) -> None:
    from meaningbench.training.data import load_targets

    ids = add_items(new_study, [("a b c", "a b", None), ("d e f", "d e", None)])
    add_ratings(new_study, "aggregate:pub", {ids[0]: 10.0, ids[1]: 90.0}, kind="aggregate")
    add_ratings(new_study, "fixed", {ids[0]: 40.0, ids[1]: 60.0}, kind="aggregate")
    with new_study.session() as s:
        both = load_targets(s).frame.set_index("item_id")["target"]
        fixed = load_targets(s, labels="fixed").frame.set_index("item_id")["target"]
    # Two imported sets with no choice made: the published labels of both (the old rule).
    assert both.loc[ids].tolist() == [25.0, 75.0]
    assert fixed.loc[ids].tolist() == [40.0, 60.0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "no aggregate labels"),
        (["--scale", "raw=5"], "--scale"),
        (["--keep-unmatched"], "go with --fix"),
        (["--tolerance", "-1"], "--tolerance"),
    ],
)
def test_bad_input_exits_2_with_a_reason(new_study, extra: list[str], message: str) -> None:
    add_items(new_study, [("a b", "a", None)])
    proc = _cli("audit", new_study.path, *extra)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_export_and_correlate_read_the_same_label_set(new_study, tmp_path: Path) -> None:
    """After a fix, an export's human score is still exactly what `correlate` uses."""
    from meaningbench.analysis.label_sets import add_fixed_labels, choose_label_set
    from meaningbench.datasets.exporters import export_study

    ids = add_items(new_study, [("a b c", "a b", None), ("d e f", "d e", None)])
    add_ratings(new_study, "aggregate:pub", {ids[0]: 10.0, ids[1]: 90.0}, kind="aggregate")
    raw = add_items(new_study, [("a b c", "a b", "s"), ("d e f", "d e", "s")], dataset="raw")
    add_ratings(new_study, "r1", {raw[0]: 80.0, raw[1]: 20.0}, origin=RAW)
    with new_study.session() as s:
        add_fixed_labels(s, "fixed", audit_study(s))
    out = tmp_path / "items.csv"
    export_study(new_study, out)
    human = pd.read_csv(out).set_index("item_id")["meaning_human"]
    assert human.loc[ids].tolist() == [10.0, 90.0]  # the published labels, never averaged
    with new_study.session() as s:
        choose_label_set(s, "fixed")
    export_study(new_study, out)
    human = pd.read_csv(out).set_index("item_id")["meaning_human"]
    assert human.loc[ids].tolist() == [80.0, 20.0]
    scores = StudyAnalysis.from_study(new_study).data.ratings.scores()
    assert sorted(scores.raw[np.isin(StudyAnalysis.from_study(new_study).data.item_ids, ids)]) == [
        20.0,
        80.0,
    ]


def _labels_and_a_new_rater(study) -> list[int]:  # noqa: ANN001
    ids = add_items(study, [(f"s {k} a b", f"o {k}", None) for k in range(9)])
    add_ratings(study, "aggregate:pub", {i: 10.0 * k for k, i in enumerate(ids)}, kind="aggregate")
    add_ratings(study, "ana", {i: 95.0 - 5 * k for k, i in enumerate(ids)})  # rated in the app
    return ids


def test_the_studys_own_raters_are_not_the_raw_ratings_by_default(new_study) -> None:
    ids = _labels_and_a_new_rater(new_study)
    with new_study.session() as s:
        result = audit_study(s)
    assert result.groups == [] and result.raters == [] and not result.chosen_raters
    assert result.own_raters_left_out == ["ana"]
    assert any("ana" in note for note in result.notes)
    # A raw file imported for the labels is audited against, the new rater still is not.
    raw = add_items(new_study, [(f"s {k} a b", f"o {k}", "x") for k in range(9)], dataset="raw")
    add_ratings(new_study, "r1", {i: 10.0 * k for k, i in enumerate(raw)}, origin=RAW)
    with new_study.session() as s:
        result = audit_study(s)
    (g,) = result.groups
    assert g.source == "raw" and g.n_labels == 9 and g.n_equal == 9
    assert result.raters == ["r1"] and result.own_raters_left_out == ["ana"]
    # Named, the new rater is compared with.
    with new_study.session() as s:
        chosen = audit_study(s, raters=["ana"])
    (g,) = chosen.groups
    assert chosen.chosen_raters and chosen.raters == ["ana"] and g.n_equal == 0
    assert len(ids) == 9
    with new_study.session() as s, pytest.raises(UserError, match="no rater 'bob'"):
        audit_study(s, raters=["bob"])


def test_cli_audit_follows_the_same_rule(new_study) -> None:
    _labels_and_a_new_rater(new_study)
    default = _cli("audit", new_study.path, "--json")
    assert default.returncode == 0, default.stderr
    out = json.loads(default.stdout)
    assert out["groups"] == [] and out["own_raters_left_out"] == ["ana"]
    text_out = _cli("audit", new_study.path)
    assert "raw ratings (imported from rating files): none" in text_out.stdout
    assert "not compared with the study's own raters (ana)" in text_out.stdout
    chosen = json.loads(_cli("audit", new_study.path, "--raters", "ana", "--json").stdout)
    (g,) = chosen["groups"]
    assert g["n_labels"] == 9 and g["n_equal"] == 0 and chosen["raters"] == ["ana"]
