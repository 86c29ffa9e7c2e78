"""Selection strategies: which items a queue asks first, from stored metric scores only.

The scores come from the real battery (`meaningbench score` with lexical metrics) on study
files imported from a CSV; the queues are built by the queue builder on those files.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sqlalchemy import select

from meaningbench.annotation import selection
from meaningbench.annotation.queue import (
    annotator_seed,
    ensure_queue,
    get_or_create_annotator,
    selection_ranks,
)
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.cli import main
from meaningbench.db.models import Item, QueueEntry
from meaningbench.db.study import Study, open_study
from meaningbench.errors import UserError
from tests.analysis.studybuild import add_ratings
from tests.annotation.factories import sentence

METRICS = "bleu,chrf,ter,sari"
STRATEGIES = ("disagreement", "variance", "diversity", "mix", "balanced")


# ---- the strategies on arrays ---------------------------------------------------------


def test_disagreement_puts_the_split_item_first() -> None:
    # Three metrics agree on the order of outputs a < b < c of source s1; on source s2
    # metric 3 reverses what metrics 1 and 2 say about d and e.
    scores = np.array(
        [
            [0.1, 0.2, 0.1],  # a
            [0.5, 0.5, 0.4],  # b
            [0.9, 0.8, 0.9],  # c
            [0.2, 0.3, 0.9],  # d
            [0.8, 0.7, 0.1],  # e
        ]
    )
    groups = ["s1", "s1", "s1", "s2", "s2"]
    got = selection.disagreement(scores, groups=np.array(groups, dtype=object))
    assert got[:3].max() < 1e-12  # full agreement within s1
    assert got[3] > 0.3 and got[4] > 0.3
    assert set(selection.order("disagreement", scores, groups, seed=1)[:2]) == {3, 4}


def test_disagreement_turns_a_lower_is_better_metric_round() -> None:
    # TER-like: the third metric is the others' mirror image. Turned round, all agree.
    rng = np.random.default_rng(0)
    base = rng.random(30)
    scores = np.column_stack([base, base * 2 + 1, -base])
    groups = np.array([f"s{i // 3}" for i in range(30)], dtype=object)
    assert selection.disagreement(scores, groups).max() < 1e-12


def test_variance_ranks_sources_by_the_spread_of_their_outputs() -> None:
    scores = np.array([[0.5, 0.5], [0.52, 0.49], [0.1, 0.2], [0.9, 0.95], [0.4, 0.6], [0.6, 0.4]])
    groups = ["flat", "flat", "wide", "wide", "mid", "mid"]
    got = selection.variance(scores, np.array(groups, dtype=object))
    assert got[2] == got[3] > got[4] == got[5] > got[0] == got[1]
    assert selection.order("variance", scores, groups, seed=3)[:2] in ([2, 3], [3, 2])


def test_diversity_keeps_every_prefix_proportional_to_the_clusters() -> None:
    rng = np.random.default_rng(1)
    # Two well-separated profiles, 60 and 20 items.
    scores = np.vstack([rng.normal(0, 0.05, (60, 3)), rng.normal(5, 0.05, (20, 3))])
    groups = [f"s{i}" for i in range(80)]
    order = selection.order("diversity", scores, groups, seed=7)
    assert sorted(order) == list(range(80))
    for n in (8, 20, 40):
        small = sum(1 for i in order[:n] if i >= 60)
        assert abs(small - n / 4) <= 1  # a quarter of every prefix, within rounding


def test_order_is_a_function_of_seed_and_scores() -> None:
    rng = np.random.default_rng(2)
    scores = rng.random((50, 4))
    groups = [f"s{i // 2}" for i in range(50)]
    for strategy in ("random", *STRATEGIES):
        a = selection.order(strategy, scores, groups, seed=11)
        assert a == selection.order(strategy, scores.copy(), list(groups), seed=11)
        assert sorted(a) == list(range(50))
        # The order of the metric columns does not matter.
        assert a == selection.order(strategy, scores[:, ::-1].copy(), groups, seed=11)
    assert selection.order("random", scores, groups, 11) != selection.order(
        "random", scores, groups, 12
    )
    # Other scores, another order.
    other = scores.copy()
    other[:, 0] = other[::-1, 0]
    assert selection.order("disagreement", scores, groups, 11) != selection.order(
        "disagreement", other, groups, 11
    )


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(UserError, match="Unknown selection 'smart'"):
        selection.order("smart", np.zeros((2, 2)), ["a", "b"], 0)


# ---- on study files -------------------------------------------------------------------


@pytest.fixture(scope="module")
def scored_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 sources × 3 system outputs, imported from a CSV and scored by the battery."""
    folder = tmp_path_factory.mktemp("selection")
    rng = random.Random(5)
    rows = []
    for i in range(40):
        src = sentence(rng, rng.randint(12, 20)) + f" ({i})"
        for k in range(3):
            words = src.split()
            keep = rng.sample(range(len(words)), k=max(3, len(words) - rng.randint(0, 8)))
            out = " ".join(words[j] for j in sorted(keep)) if k else sentence(rng, 9)
            rows.append({"source": src, "output": out, "system": f"sys{k}"})
    csv = folder / "items.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    path = folder / "scored.mbstudy"
    assert main(["import", str(path), str(csv), "--dataset", "d"]) == 0
    assert main(["score", str(path), "--metrics", METRICS, "--workers", "1", "--quiet"]) == 0
    return path


def _copy(scored: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / f"{name}.mbstudy"
    shutil.copyfile(scored, target)
    return target


def _configure(study: Study, **changes: object) -> None:
    with study.session() as s:
        st = load_settings(s)
        for key, value in changes.items():
            setattr(st, key, value)
        save_settings(s, st)


def _queue(study: Study, name: str) -> list[tuple[int, str]]:
    with study.session() as s:
        annotator = get_or_create_annotator(s, name)
        ensure_queue(s, annotator)
        rows = s.execute(
            select(Item.id, Item.kind)
            .join(QueueEntry, QueueEntry.item_id == Item.id)
            .where(QueueEntry.annotator_id == annotator.id)
            .order_by(QueueEntry.position)
        ).all()
        return [(int(i), str(k)) for i, k in rows]


def _regular(queue: list[tuple[int, str]]) -> list[int]:
    return [i for i, kind in queue if kind == "regular"]


def test_a_queue_follows_the_selection_with_controls_and_overlap_unchanged(
    scored_study: Path, tmp_path: Path
) -> None:
    queues = {}
    for strategy in ("random", *STRATEGIES):
        study = open_study(_copy(scored_study, tmp_path, strategy))
        _configure(study, seed=9, selection=strategy, overlap_k=2, pool_size=3)
        queues[strategy] = [_queue(study, name) for name in ("ann", "bob", "cy")]
        if strategy != "random":
            for name, queue in zip(("ann", "bob", "cy"), queues[strategy], strict=True):
                with study.session() as s:
                    ranks = selection_ranks(s, load_settings(s), annotator_seed(9, name, 0))
                # Regular items by selection rank, but for the moves that keep two outputs
                # of one source apart.
                regular = _regular(queue)
                rho = stats.spearmanr(range(len(regular)), [ranks[i] for i in regular])
                assert rho.statistic > 0.9
                first = regular[: len(regular) // 3]
                assert np.mean([ranks[i] for i in first]) < np.mean([ranks[i] for i in regular])
        study.close()
    for strategy in STRATEGIES:
        for base, chosen in zip(queues["random"], queues[strategy], strict=True):
            # The same items (overlap) and the same numbers of each control kind, in
            # another order.
            assert sorted(_regular(base)) == sorted(_regular(chosen))
            assert Counter(k for _, k in base) == Counter(k for _, k in chosen)
            assert _regular(base) != _regular(chosen)


def test_queue_is_reproducible_from_seed_and_stored_scores(
    scored_study: Path, tmp_path: Path
) -> None:
    orders = []
    for name in ("one", "two"):
        study = open_study(_copy(scored_study, tmp_path, name))
        _configure(study, seed=21, selection="disagreement")
        orders.append(_queue(study, "ann"))
        study.close()
    assert orders[0] == orders[1]
    # Another seed breaks ties and places controls differently.
    study = open_study(_copy(scored_study, tmp_path, "three"))
    _configure(study, seed=22, selection="disagreement")
    assert _queue(study, "ann") != orders[0]
    study.close()


def test_a_queue_does_not_depend_on_what_other_raters_answered(
    scored_study: Path, tmp_path: Path
) -> None:
    built = []
    for name, offset in (("calm", 0.0), ("wild", 60.0)):
        study = open_study(_copy(scored_study, tmp_path, name))
        _configure(study, seed=3, selection="disagreement", overlap_k=2, pool_size=2)
        first = _regular(_queue(study, "first"))
        # The first rater answers half their queue, very differently in the two copies.
        values = {i: (offset + 7 * k) % 100 for k, i in enumerate(first[: len(first) // 2])}
        add_ratings(study, "first", values)
        built.append(_queue(study, "second"))
        study.close()
    assert built[0] == built[1]


def test_selection_metrics_limit_what_the_selection_reads(
    scored_study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _copy(scored_study, tmp_path, "cli")
    assert (
        main(
            [
                "protocol",
                str(path),
                "--selection",
                "variance",
                "--selection-metrics",
                "bleu,chrf",
                "--json",
            ]
        )
        == 0
    )
    shown = json.loads(capsys.readouterr().out)
    assert shown["selection"] == "variance"
    assert shown["selection_metrics"] == ["bleu[refs=source]", "chrf[refs=source]"]
    study = open_study(path)
    with study.session() as s:
        st = load_settings(s)
        two = selection_ranks(s, st, 5)
        st.selection_metrics = None
        every = selection_ranks(s, st, 5)
    study.close()
    assert two != every
    assert main(["protocol", str(path), "--selection-metrics", "meteor"]) == 2
    assert "Selection metric 'meteor': no finished run" in capsys.readouterr().err
    # None is refused, and the message offers no "none for all".
    assert main(["protocol", str(path), "--selection-metrics", " , "]) == 2
    err = capsys.readouterr().err
    assert "--selection-metrics names no run" in err and "--all-selection-metrics" in err
    assert "none for all" not in err
    # Nothing was changed by the refused call.
    study = open_study(path)
    with study.session() as s:
        assert load_settings(s).selection_metrics == ["bleu[refs=source]", "chrf[refs=source]"]
    study.close()


def _rate_queues(study: Study, names: tuple[str, ...]) -> list[list[int]]:
    """Each rater rates their queue in its order; a rating depends on the item and the
    rater only (a hash of the item's texts, the rater's offset)."""
    orders = []
    with study.session() as s:
        texts = {i.id: (i.source, i.output) for i in s.scalars(select(Item))}
    for k, name in enumerate(names):
        regular = _regular(_queue(study, name))
        orders.append(regular)
        values = {i: float((sum(map(ord, texts[i][1])) * 7 + 13 * k) % 101) for i in regular}
        add_ratings(study, name, values)
    return orders


def test_the_same_ratings_give_the_same_correlations_whatever_the_selection(
    scored_study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tables = {}
    orders = {}
    for strategy in ("random", *STRATEGIES):
        path = _copy(scored_study, tmp_path, f"rated-{strategy}")
        study = open_study(path)
        _configure(study, seed=4, selection=strategy, overlap_k=2, pool_size=3)
        orders[strategy] = _rate_queues(study, ("ann", "bob", "cy"))
        study.close()
        capsys.readouterr()
        assert main(["correlate", str(path), "--boot", "0", "--json"]) == 0
        tables[strategy] = json.loads(capsys.readouterr().out)["metrics"]
    for strategy in STRATEGIES:
        assert orders[strategy] != orders["random"]  # the order did change...
        assert tables[strategy] == tables["random"]  # ...and the analysis did not
    assert len(tables["random"]) == 4


def test_the_command_line_offers_the_engines_strategies() -> None:
    from meaningbench.annotation.settings import SELECTIONS
    from meaningbench.commands.protocol import SELECTIONS as OFFERED

    assert tuple(SELECTIONS) == OFFERED


def test_mix_takes_disagreement_and_diversity_in_turn() -> None:
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(40, 3))
    groups = [f"s{i // 2}" for i in range(40)]
    first = selection.order("disagreement", scores, groups, seed=5)
    second = selection.order("diversity", scores, groups, seed=5)
    got = selection.order("mix", scores, groups, seed=5)
    assert sorted(got) == list(range(40))
    assert got[0] == first[0] and got[1] == (second[0] if second[0] != first[0] else got[1])
    # Every prefix holds at least half of each order's own prefix of that length.
    for k in range(2, 41, 2):
        head = set(got[:k])
        assert len(head & set(first[: k // 2])) == k // 2
        assert len(head & set(second[: k // 2])) == k // 2


def _prefix_counts_balanced(order: list[int], systems: list[str]) -> bool:
    """Whether every prefix holds as equal a number of each system's items as their sizes
    allow: a system not yet used up is at most one behind any other."""
    size = Counter(systems)
    seen: Counter[str] = Counter()
    for i in order:
        seen[systems[i]] += 1
        open_ = [seen[s] for s in size if seen[s] < size[s]]
        if open_ and max(seen[s] for s in size) - min(open_) > 1:
            return False
    return True


def test_balanced_takes_the_systems_in_turn_on_shared_sources_first() -> None:
    # Sizes 12, 7 and 3; sources s0-s2 hold all three systems, s3-s6 two, the rest one.
    systems, groups = [], []
    for k in range(12):
        for name, size in (("big", 12), ("mid", 7), ("small", 3)):
            if k < size:
                systems.append(name)
                groups.append(f"s{k}")
    scores = np.random.default_rng(0).random((len(systems), 3))
    got = selection.order("balanced", scores, groups, seed=4, systems=systems)
    assert sorted(got) == list(range(len(systems)))
    assert _prefix_counts_balanced(got, systems)
    # The first three rounds are the three sources that hold every system, one a round.
    for r in range(3):
        assert len({groups[i] for i in got[3 * r : 3 * r + 3]}) == 1
    assert {groups[i] for i in got[:9]} == {"s0", "s1", "s2"}
    # Then the sources of two systems, before the ones only "big" has.
    assert {groups[i] for i in got[9:17]} == {"s3", "s4", "s5", "s6"}
    # Seeded and deterministic; the scores are not read.
    assert got == selection.order("balanced", -scores, list(groups), 4, list(systems))
    assert got != selection.order("balanced", scores, groups, 5, systems)
    assert _prefix_counts_balanced(selection.order("balanced", scores, groups, 5, systems), systems)


def test_balanced_without_systems_is_the_random_order() -> None:
    scores = np.random.default_rng(1).random((20, 2))
    groups = [f"s{i // 2}" for i in range(20)]
    plain = selection.order("random", scores, groups, seed=8)
    for systems in (None, [None] * 20, [""] * 20, ["only"] * 10 + [None] * 10):
        assert selection.order("balanced", scores, groups, 8, systems) == plain
    # Items without a system among systems' items take their turn as one more.
    systems = ["a"] * 8 + ["b"] * 8 + [None] * 4
    got = selection.order("balanced", scores, groups, 8, systems)
    labels = ["" if s is None else s for s in systems]
    assert _prefix_counts_balanced(got, labels) and {labels[i] for i in got[:3]} == {"a", "b", ""}
    with pytest.raises(ValueError, match="one system label per item"):
        selection.order("balanced", scores, groups, 8, ["a", "b"])


def test_a_balanced_queue_on_a_real_study(scored_study: Path, tmp_path: Path) -> None:
    study = open_study(_copy(scored_study, tmp_path, "balanced"))
    _configure(study, seed=6, selection="balanced", selection_metrics=["meteor"])
    with study.session() as s:
        # It reads no score, so a selection metric that was never run does not matter.
        ranks = selection_ranks(s, load_settings(s), 17)
        system = {int(i): str(y) for i, y in s.execute(select(Item.id, Item.system))}
    study.close()
    ordered = sorted(ranks, key=ranks.__getitem__)
    assert _prefix_counts_balanced(list(range(len(ordered))), [system[i] for i in ordered])
    assert len(ordered) == 120
    # A rater's queue: the rule that keeps two outputs of one source apart moves an item
    # now and then, so a system is at most two behind another in any prefix.
    study = open_study(tmp_path / "balanced.mbstudy")
    queue = _regular(_queue(study, "ann"))
    study.close()
    seen: Counter[str] = Counter({name: 0 for name in ("sys0", "sys1", "sys2")})
    spread = []
    for i in queue:
        seen[system[i]] += 1
        spread.append(max(seen.values()) - min(seen.values()))
    assert len(queue) == 120 and max(spread) <= 2 and spread[-1] == 0


def test_balanced_is_refused_on_a_study_without_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "plain.csv"
    rng = random.Random(2)
    rows = [{"source": sentence(rng, 10) + f" {i}", "output": sentence(rng, 8)} for i in range(6)]
    pd.DataFrame(rows).to_csv(csv, index=False)
    path = tmp_path / "plain.mbstudy"
    assert main(["import", str(path), str(csv), "--dataset", "d"]) == 0
    capsys.readouterr()
    assert main(["protocol", str(path), "--selection", "balanced"]) == 2
    err = capsys.readouterr().err
    assert "Selection 'balanced' takes the study's systems in turn" in err
    assert "0 systems (none)" in err and "Choose random" in err
    study = open_study(path)
    with study.session() as s:
        assert load_settings(s).selection == "random"  # nothing was stored
    study.close()


def test_balanced_is_chosen_on_the_command_line(
    scored_study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _copy(scored_study, tmp_path, "cli-balanced")
    capsys.readouterr()
    assert main(["protocol", str(path), "--selection", "balanced"]) == 0
    line = capsys.readouterr().out
    assert "selection: balanced — the systems in turn" in line and "scores of" not in line
