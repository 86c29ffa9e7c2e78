"""`meaningbench simulate`: replaying SimpDA 2022's real ratings in each strategy's order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from meaningbench.analysis.metaeval_significance import rank_metrics
from meaningbench.analysis.metaeval_study import metaeval_data_from_study
from meaningbench.analysis.selection_sim import (
    budget_steps,
    prefix_sizes,
    settled_share,
    simulate_study,
)
from meaningbench.cli import main
from meaningbench.db.study import open_study
from meaningbench.errors import UserError

METRICS = "bleu,chrf,ter,sari"
STRATEGIES = ("disagreement", "variance", "diversity")


@pytest.fixture(scope="module")
def simpda(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sim") / "simpda.mbstudy"
    source = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    assert main(["import", str(path), str(source), "--dataset", "simpda"]) == 0
    assert main(["score", str(path), "--metrics", METRICS, "--workers", "1", "--quiet"]) == 0
    return path


def test_budget_steps_and_prefixes() -> None:
    assert budget_steps(5)[:3] == [5.0, 10.0, 15.0] and budget_steps(5)[-1] == 100.0
    assert budget_steps(30) == [30.0, 60.0, 90.0, 100.0]
    with pytest.raises(UserError, match="--step"):
        budget_steps(0)
    # Items cost 1, 3, 1, 5 ratings (10 in all): 30 % is the first two items, 100 % all.
    costs = np.array([1.0, 3.0, 1.0, 5.0])
    assert prefix_sizes([0, 1, 2, 3], costs, [10, 30, 50, 100]) == [1, 2, 3, 4]
    assert prefix_sizes([3, 2, 1, 0], costs, [10, 50, 60, 100]) == [1, 1, 2, 4]
    assert settled_share([25, 50, 75, 100], [True, False, True, True]) == 75
    assert settled_share([25, 50, 75, 100], [False, False, False, True]) == 100


def test_simulation_ends_on_the_full_data_ranking_for_every_strategy(simpda: Path) -> None:
    study = open_study(simpda)
    try:
        opts = dict(seeds=3, step=10.0, resamples=50)
        sim = simulate_study(study, STRATEGIES, **opts)
        again = simulate_study(study, STRATEGIES, **opts)
        data = metaeval_data_from_study(study)
        full = rank_metrics(
            data,
            "pearson",
            group_by="none",
            resamples=50,
            intervals=False,
        )
    finally:
        study.close()
    assert sim.to_dict() == again.to_dict()  # reproducible from the seeds
    assert list(sim.curves) == ["random", *STRATEGIES]
    assert sim.n_items == 360 and sim.n_ratings == 1080
    # The reference is the engine's own ranking of all the data.
    assert sim.reference.order == full.order
    assert sim.reference.clusters == full.clusters
    for curves in sim.curves.values():
        assert len(curves) == 3
        for curve in curves:
            assert curve.shares == sorted(curve.shares) and curve.shares[-1] == 100.0
            assert curve.items == sorted(curve.items) and curve.items[-1] == 360
            assert curve.tau[-1] == 1.0 and curve.same_top[-1]
            assert 10.0 <= curve.settled <= 100.0
            ok = [
                t is not None and t >= 0.9 and c
                for t, c in zip(curve.tau, curve.same_top, strict=True)
            ]
            assert all(ok[curve.shares.index(curve.settled) :])
    summary = {s.strategy: s for s in sim.summaries()}
    assert summary["random"].of_random == 1.0
    # The field's protocol ranks the metrics by the same Pearson r as the engine.
    from meaningbench.analysis.selection_protocol import pearson_prefixes

    work = data.subset(data.common())
    every = pearson_prefixes(np.array([np.arange(work.n)]), work.human, work.metrics)[0, -1]
    assert every.tolist() == pytest.approx([full.values[m] for m in work.metric_names], abs=1e-12)
    assert sim.field is not None and [r.strategy for r in sim.field.rows] == list(sim.curves)
    for s in summary.values():
        assert s.low <= s.mean <= s.high


def test_simulate_command_writes_json_and_plots(
    simpda: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    shutil.copyfile(simpda, study)
    svg, png = tmp_path / "plot.svg", tmp_path / "plot.png"
    args = ["simulate", str(study), "--seeds", "2", "--step", "25", "--resamples", "20"]
    capsys.readouterr()
    assert main([*args, "--selection", "variance", "--out", str(svg), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["strategy"] for s in out["summary"]] == ["random", "variance"]
    assert out["measure"] == "pearson" and out["group_by"] == "none"
    assert len(out["curves"]["variance"]) == 2
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<svg") and "variance" in text and "random" in text
    assert main([*args, "--out", str(png)]) == 0
    printed = capsys.readouterr().out
    assert "settled" in printed and "diversity" in printed
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--selection", "smart"], "unknown strategy 'smart'"),
        (["--step", "0"], "--step must lie between 0.1 and 100"),
        (["--out", "plot.pdf"], "write the plot as .svg or .png"),
        (["--metrics", "bleu"], "at least two scored metrics"),
    ],
)
def test_simulate_refuses_bad_requests(
    simpda: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    capsys.readouterr()
    assert main(["simulate", str(simpda), "--seeds", "1", *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (Path.cwd() / "plot.pdf").exists()


def test_the_report_shows_the_simulation_when_asked(
    simpda: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, asked = tmp_path / "plain.html", tmp_path / "asked.html"
    args = ["report", str(simpda), "--no-sanity", "--boot", "20"]
    assert main([*args, str(plain)]) == 0
    assert main([*args, str(asked), "--simulate-selection", "2"]) == 0
    capsys.readouterr()
    assert "Rating fewer items" not in plain.read_text(encoding="utf-8")
    html = asked.read_text(encoding="utf-8")
    section = html[html.index("<h2 id='rating-fewer-items'>") :]
    section = section[: section.index("<h2", 5)]
    for strategy in ("random", "disagreement", "variance", "diversity", "mix", "balanced"):
        assert f"<td>{strategy}</td>" in section or f">{strategy}<" in section
    assert "<svg" in section and "Kendall τ with the full-data ranking" in section
    assert "360 items" in section


def test_metaeval_on_simpda_names_its_n_configurations_and_verdict(
    simpda: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SimpDA 2022's 6 systems: the ranking says it runs over 6 systems and warns; the
    methods name each metric's configuration in short paragraphs; the JSON carries the
    stopping signal's verdict."""
    capsys.readouterr()
    args = ["metaeval", str(simpda), "--measures", "pearson", "--resamples", "100", "--json"]
    assert main([*args, "--group-by", "system"]) == 0
    out = json.loads(capsys.readouterr().out)
    ranking = out["ranking"]
    assert (ranking["n_units"], ranking["units"], ranking["n_outputs"]) == (6, "systems", 360)
    assert ranking["small_n_warning"].startswith("Only 6 systems:")
    assert "not significantly below" in ranking["clusters_meaning"]
    paragraphs = out["methods"].split("\n\n")
    assert len(paragraphs) >= 3 and all(len(p) < 1200 for p in paragraphs)
    configs = next(p for p in paragraphs if p.startswith("Metric configurations: "))
    assert "bleu[refs=source] (bleu; references: the source sentence, " in configs
    assert "tokenize: 13a" in configs and "batch" not in configs
    assert "over 6 systems (360 outputs)" in paragraphs[-1]
    stop = out["stopping"]
    assert stop["verdict"] in ("not settled — keep rating", "settled — you can stop rating")
    assert stop["ratings"] == 1080 and stop["settings"]["group_by"] == "system"
    assert main([*args[:-1], "--no-stopping"]) == 0
    printed = capsys.readouterr().out
    assert "grouping: all outputs together (--group-by none)" in printed
    assert "Stopping signal" not in printed and "over 360 outputs" in printed


def test_kendall_is_scipys_tau_b_ties_included() -> None:
    from scipy import stats

    from meaningbench.analysis.selection_sim import kendall

    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 7, 12):
        for _ in range(200):
            a = list(np.round(rng.normal(size=n), 1))  # rounded: ties on both sides
            b = list(np.round(rng.normal(size=n), 1))
            expected = stats.kendalltau(a, b).statistic
            got = kendall(a, b)
            if np.isfinite(expected):
                assert got == pytest.approx(expected, abs=1e-12)
            else:
                assert got is None
    assert kendall([1.0, None], [1.0, 2.0]) is None and kendall([1.0], [2.0]) is None


def test_the_systems_target_ranks_simpdas_six_systems_by_the_fields_protocol(simpda: Path) -> None:
    """Each strategy's order cut at 5, 10, …, 50 % of the items: τ between the systems'
    mean human scores on the cut and on all items, checked against scipy on the cut."""
    from scipy import stats

    from meaningbench.analysis.selection_protocol import PROPS
    from meaningbench.analysis.selection_sim import simulate_study_systems
    from meaningbench.annotation.selection import order as selection_order

    study = open_study(simpda)
    try:
        sim = simulate_study_systems(study, STRATEGIES, seeds=3)
        again = simulate_study_systems(study, STRATEGIES, seeds=3)
        data = metaeval_data_from_study(study)
    finally:
        study.close()
    assert sim.to_dict() == again.to_dict()
    out = sim.to_dict()
    assert out["target"] == "systems" and len(sim.systems) == 6 and sim.n_items == 360
    field = out["field_protocol"]
    assert field["budgets"] == [5, 10, 15, 20, 25, 30, 35, 40, 45, 50]
    assert [r["strategy"] for r in field["strategies"]] == ["random", *STRATEGIES]
    # The reference: the systems' means over all 360 outputs, as pandas would give them.
    names = np.array([str(s) for s in data.systems])
    full = {s: float(data.human[names == s].mean()) for s in sim.systems}
    assert out["full_data_means"] == pytest.approx(full)
    # Variance's order for seed 0, cut by hand at each budget.
    keep = data.common()
    work = data.subset(keep)
    order = selection_order("variance", work.metrics, list(work.sources), 0)
    labels = np.array([str(s) for s in work.systems])
    taus = []
    for p in PROPS:
        rows = np.asarray(order[: int(360 * p)])
        cut = [work.human[rows][labels[rows] == s] for s in sim.systems]
        means = [c.mean() if c.size else np.nan for c in cut]
        tau = stats.kendalltau(means, [full[s] for s in sim.systems]).statistic
        taus.append(0.0 if not np.isfinite(tau) else tau)
    row = sim.field.rows[2]
    assert row.strategy == "variance"
    assert all(-1.0 <= r.accuracy <= 1.0 and r.parity > 0 for r in sim.field.rows)
    assert len(sim.field.random_target) == 10 and sim.field.random_parity > 0
    # Variance's order does not depend on the seed but for ties: seed 0 is its mean here.
    assert row.accuracy_sd < 0.05
    again_study = open_study(simpda)
    try:
        one = simulate_study_systems(again_study, ["variance"], seeds=1)
    finally:
        again_study.close()
    assert one.field.rows[1].by_budget == pytest.approx(taus, abs=1e-12)
    # Today's criterion, τ alone, on the ratings budget: from the share on, τ ≥ 0.9 at
    # every later step of 5 % of the 1,080 ratings (each output costs its 3 ratings).
    later = []
    for share in budget_steps(5):
        rows = np.asarray(order[: int(np.ceil(share / 100 * 360 - 1e-9))])
        cut = [work.human[rows][labels[rows] == s] for s in one.systems]
        means = [c.mean() if c.size else np.nan for c in cut]
        tau = stats.kendalltau(means, [full[s] for s in one.systems]).statistic
        later.append(bool(np.isfinite(tau) and tau >= 0.9 - 1e-12))
    assert one.settled["variance"] == [settled_share(budget_steps(5), later)]
    summary = {r["strategy"]: r for r in sim.to_dict()["summary"]}
    assert summary["random"]["tau_only_of_random"] == 1.0
    assert all(0 < r["tau_only_settled_share_mean"] <= 100 for r in summary.values())


def test_simulate_target_systems_in_json_and_on_the_terminal(
    simpda: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    args = ["simulate", str(simpda), "--seeds", "2", "--target", "systems"]
    svg = tmp_path / "systems.svg"
    assert main([*args, "--json", "--out", str(svg)]) == 0
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<svg") and "ranking of the systems" in text and "variance" in text
    out = json.loads(capsys.readouterr().out)
    assert out["target"] == "systems" and out["full_data_ranking"][0] == "GPT-3-few-shot"
    rows = out["field_protocol"]["strategies"]
    assert {"accuracy_kendall", "parity", "kendall_by_budget"} <= set(rows[0])
    # balanced is simulated by default; taking the six systems in turn on one source after
    # another completes whole sources, which the pairwise tests behind SPA need.
    spa = {r["strategy"]: r["accuracy_spa"] for r in rows}
    assert spa["balanced"] > 0.6 > spa["random"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "field protocol (subset2evaluate)" in printed and "parity" in printed
    assert "6 systems ranked by their mean human score" in printed
    assert "settled: tau >= 0.9 from this share of the ratings on" in printed
    # The metrics target (the default) carries the field's figures beside the settle criterion.
    assert (
        main(
            ["simulate", str(simpda), "--seeds", "1", "--step", "50", "--resamples", "10", "--json"]
        )
        == 0
    )
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["target"] == "metrics" and metrics["summary"]
    assert metrics["field_protocol"]["target"] == "metrics"
    assert len(metrics["field_protocol"]["strategies"]) == 6
    # Another measure: the settle criterion as before, the field's figures left out.
    other = ["--measure", "spearman", "--selection", "variance"]
    assert (
        main(
            [
                "simulate",
                str(simpda),
                "--seeds",
                "1",
                "--step",
                "50",
                "--resamples",
                "10",
                *other,
                "--json",
            ]
        )
        == 0
    )
    spearman = json.loads(capsys.readouterr().out)
    assert spearman["measure"] == "spearman" and spearman["field_protocol"] is None


def test_simulate_target_systems_refuses_a_study_of_two_systems(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    two = [lines[0]] + [
        line for line in lines[1:] if line.rstrip().split(",")[-4] in ("T5-3B", "Muss")
    ]
    small = tmp_path / "two.csv"
    small.write_text("".join(two), encoding="utf-8")
    study = tmp_path / "two.mbstudy"
    assert main(["import", str(study), str(small), "--dataset", "simpda"]) == 0
    assert main(["score", str(study), "--metrics", "bleu,chrf", "--workers", "1", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["simulate", str(study), "--seeds", "1", "--target", "systems"]) == 2
    err = capsys.readouterr().err
    assert "--target systems ranks the study's systems" in err
    assert "2 systems with scored outputs (Muss, T5-3B)" in err and "at least three" in err


def test_the_systems_target_refuses_outputs_without_systems() -> None:
    """ASSET's shape: every output without a system label."""
    from meaningbench.analysis.metaeval import MetaEvalData
    from meaningbench.analysis.selection_sim import simulate_systems

    rng = np.random.default_rng(0)
    data = MetaEvalData(
        human=rng.normal(size=20),
        metrics=rng.normal(size=(20, 2)),
        metric_names=["a", "b"],
        systems=np.array([None] * 20, dtype=object),
        sources=np.array([f"s{i}" for i in range(20)], dtype=object),
    )
    with pytest.raises(UserError, match=r"0 systems with scored outputs \(none\)"):
        simulate_systems(data, np.ones(20), ["variance"], seeds=1)


def test_balanced_on_outputs_without_systems_is_random_and_says_so() -> None:
    """ASSET's shape for the metrics target: balanced has no systems to take in turn."""
    from meaningbench.analysis.metaeval import MetaEvalData
    from meaningbench.analysis.selection_report import selection_section
    from meaningbench.analysis.selection_sim import simulate, summary_lines

    rng = np.random.default_rng(3)
    human = rng.normal(size=40)
    data = MetaEvalData(
        human=human,
        metrics=np.column_stack([human + rng.normal(size=40), rng.normal(size=40)]),
        metric_names=["a", "b"],
        systems=np.array([None] * 40, dtype=object),
        sources=np.array([f"s{i}" for i in range(40)], dtype=object),
    )
    sim = simulate(data, np.ones(40), ["balanced"], seeds=2, step=25, resamples=10)
    assert [c.to_dict() for c in sim.curves["balanced"]] == [
        c.to_dict() for c in sim.curves["random"]
    ]
    note = "balanced: the items hold fewer than two systems, so its order is the random one"
    assert sim.notes == [note] and sim.to_dict()["notes"] == [note]
    assert f"  note: {note}" in summary_lines(sim)
    assert "Balanced: the items hold fewer than two systems" in selection_section(sim)
    # Not asked for, not noted.
    assert simulate(data, np.ones(40), ["variance"], seeds=1, step=50, resamples=10).notes == []
