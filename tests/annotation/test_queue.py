"""Per-annotator queues on real study files: order, QC items, overlap, growth."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.ordering import back_to_back, repeat_gap
from meaningbench.annotation.queue import ensure_queue, get_or_create_annotator
from meaningbench.annotation.settings import QCMix, load_settings, save_settings
from meaningbench.core import controls
from meaningbench.db.models import Item, QueueEntry
from meaningbench.db.study import Study, create_study
from tests.annotation.factories import add_items


def _configure(study: Study, **changes) -> None:
    with study.session() as s:
        st = load_settings(s)
        for key, value in changes.items():
            setattr(st, key, value)
        save_settings(s, st)


def _queue(study: Study, name: str) -> list[Item]:
    """The annotator's queue (built on first call) as items, in order."""
    with study.session() as s:
        annotator = get_or_create_annotator(s, name)
        ensure_queue(s, annotator)
        rows = s.execute(
            select(Item)
            .join(QueueEntry, QueueEntry.item_id == Item.id)
            .where(QueueEntry.annotator_id == annotator.id)
            .order_by(QueueEntry.position)
        ).scalars()
        return list(rows)


def _study(tmp_path: Path, name: str, n_sources: int = 40, per_source: int = 2, **cfg) -> Study:
    study = create_study(tmp_path / f"{name}.mbstudy")
    add_items(study, n_sources, per_source)
    _configure(study, seed=cfg.pop("seed", 42), **cfg)
    return study


def _signature(items: list[Item]) -> list[tuple[str, str, str]]:
    return [(i.kind, i.source, i.output) for i in items]


def test_same_seed_same_queue_in_two_copies(tmp_path: Path) -> None:
    a = _study(tmp_path, "a")
    b = _study(tmp_path, "b")
    qa, qb = _queue(a, "alice"), _queue(b, "alice")
    assert _signature(qa) == _signature(qb)
    # Another annotator and another seed each give another order of the same items.
    other = _queue(a, "bob")
    assert _signature(other) != _signature(qa)
    c = _study(tmp_path, "c", seed=43)
    assert _signature(_queue(c, "alice")) != _signature(qa)
    for s in (a, b, c):
        s.close()


def test_queue_is_built_once_and_kept(new_study) -> None:
    add_items(new_study, 30)
    _configure(new_study, seed=5)
    first = [i.id for i in _queue(new_study, "alice")]
    _configure(new_study, seed=6)  # a later seed change does not reshuffle a started queue
    assert [i.id for i in _queue(new_study, "alice")] == first


def test_no_two_items_of_one_source_back_to_back(tmp_path: Path) -> None:
    study = _study(tmp_path, "s", n_sources=60, per_source=4)
    queue = _queue(study, "alice")
    assert back_to_back(queue, lambda i: i.source_group) == 0
    study.close()


def test_back_to_back_allowed_when_the_study_asks(tmp_path: Path) -> None:
    # A plain shuffle of 4 outputs per source puts some neighbours together (about 3 pairs
    # per 240 items expected); over five seeds at least one queue must show it.
    found = 0
    for seed in range(5):
        study = _study(
            tmp_path,
            f"s{seed}",
            n_sources=60,
            per_source=4,
            seed=seed,
            same_source_back_to_back=True,
            qc_enabled=False,
        )
        found += back_to_back(_queue(study, "alice"), lambda i: i.source_group)
        study.close()
    assert found > 0


def test_appraise_mix_of_control_items(tmp_path: Path) -> None:
    study = _study(tmp_path, "s", n_sources=40, per_source=2)  # 80 regular items
    queue = _queue(study, "alice")
    kinds = Counter(i.kind for i in queue)
    assert kinds == {
        "regular": 80,
        "control-degraded": 10,
        "control-identical": 5,
        "control-repeat": 5,
    }
    assert len({i.id for i in queue}) == len(queue) == 100
    study.close()


def test_control_items_are_made_as_specified(tmp_path: Path) -> None:
    study = _study(
        tmp_path,
        "s",
        n_sources=35,
        per_source=2,
        qc=QCMix(degraded=10, identical=5, repeat=5, unrelated=5, word_soup=5),
    )
    queue = _queue(study, "alice")
    pos = {i.id: n for n, i in enumerate(queue)}
    with study.session() as s:
        parents = {i.id: s.get(Item, i.parent_id) for i in queue if i.kind != "regular"}
    gap = repeat_gap(len(queue))
    seen = Counter()
    for item in queue:
        if item.kind == "regular":
            assert item.parent_id is None
            continue
        parent = parents[item.id]
        seen[item.meta["control"]] += 1
        assert parent.kind == "regular" and parent.id in pos, "the original is in the queue"
        assert item.source == parent.source
        assert item.source_group == parent.source_group
        assert item.system is None
        assert item.pair_key != parent.pair_key
        if item.kind == "control-identical":
            assert item.output == parent.source
        elif item.kind == "control-repeat":
            assert item.output == parent.output
            assert pos[item.id] - pos[parent.id] > gap
        elif item.kind == "control-degraded":
            _check_degraded(parent.output, item.output)
        elif item.meta["control"] == "word_soup":
            own = {w.lower() for w in controls.words(item.source)}
            soup = item.output.split()
            assert soup and not own & {w.lower() for w in soup}
            assert len(soup) == len(controls.words(item.source))
        else:
            assert controls.under_overlap_bar(item.source, item.output)
    # Shares of 5 per 100 with 70 normal items: round(70·5/70) = 5 of each.
    assert seen["degraded"] == 10 and seen["identical"] == 5 and seen["repeat"] == 5
    assert seen["unrelated"] + seen["word_soup"] == 10
    study.close()


def _phrase_len(n: int) -> int:
    # annotation.md: ≤5 → 2, 6–8 → 3, 9–15 → 4, 16–20 → 5, > 20 → 6.
    return 2 if n <= 5 else 3 if n <= 8 else 4 if n <= 15 else 5 if n <= 20 else 6


def _check_degraded(original: str, degraded: str) -> None:
    a, b = original.split(), degraded.split()
    assert len(a) == len(b)
    diff = [k for k in range(len(a)) if a[k] != b[k]]
    assert diff, "something was replaced"
    length = _phrase_len(len(a))
    assert diff[-1] - diff[0] < length  # within one phrase of the right length
    if len(a) >= length + 2:
        assert a[0] == b[0] and a[-1] == b[-1]  # away from the first and the last token


def test_controls_are_shared_between_annotators(tmp_path: Path) -> None:
    study = _study(tmp_path, "s", n_sources=10, per_source=2)
    _queue(study, "alice")
    _queue(study, "bob")
    with study.session() as s:
        rows = s.execute(select(Item.kind, Item.parent_id).where(Item.kind != "regular")).all()
    counts = Counter(rows)
    assert max(counts.values()) == 1, "one control per (kind, parent) in the study"
    study.close()


def test_overlap_k_of_n(tmp_path: Path) -> None:
    study = _study(tmp_path, "s", n_sources=60, per_source=1, overlap_k=2, pool_size=3)
    _configure(study, qc_enabled=False)
    queues = {name: {i.id for i in _queue(study, name)} for name in ("a1", "a2", "a3", "a4")}
    with study.session() as s:
        regular = set(s.scalars(select(Item.id).where(Item.kind == "regular")))
    per_item = Counter(i for name in ("a1", "a2", "a3") for i in queues[name])
    assert set(per_item) == regular
    assert set(per_item.values()) == {2}, "each item goes to exactly k of the pool"
    for name in ("a1", "a2", "a3"):
        assert 20 <= len(queues[name]) <= 60
    assert queues["a4"] == queues["a1"], "the fourth annotator takes slot 0 again"
    study.close()


def test_items_added_later_are_appended(new_study) -> None:
    add_items(new_study, 20, dataset="first")
    _configure(new_study, seed=1)
    before = [i.id for i in _queue(new_study, "alice")]
    added = set(add_items(new_study, 10, dataset="second", seed=9))
    after = [i.id for i in _queue(new_study, "alice")]
    assert after[: len(before)] == before
    tail = after[len(before) :]
    with new_study.session() as s:
        tail_regular = {i for i in tail if s.get(Item, i).kind == "regular"}
    assert tail_regular == added


def test_dataset_filter_and_qc_off(new_study) -> None:
    keep = set(add_items(new_study, 10, dataset="keep"))
    add_items(new_study, 10, dataset="other", seed=3)
    _configure(new_study, seed=2, datasets=["keep"], qc_enabled=False)
    assert {i.id for i in _queue(new_study, "alice")} == keep


@pytest.mark.parametrize("n_sources", [1, 2, 3])
def test_tiny_studies_still_get_a_queue(new_study, n_sources: int) -> None:
    add_items(new_study, n_sources, 1)
    queue = _queue(new_study, "alice")
    assert sum(i.kind == "regular" for i in queue) == n_sources
