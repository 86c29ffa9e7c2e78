"""Blind kits: a kit opened with plain sqlite3 tells no control from a regular item and
names no system; collecting maps its ratings back through the lead's key."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from meaningbench.cli import main
from meaningbench.db.models import Item
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.blind import unblind
from meaningbench.kits.record import (
    KitMarker,
    item_identities,
    kit_records,
    read_marker,
    read_secret,
    signature,
    store_records,
)
from tests.kits.campaign_helpers import held_ratings, lead_keys, lead_study, rate_kit

SYSTEMS = ("system-0", "system-1")


def _made(tmp_path: Path, raters: str = "ana") -> tuple[Path, Path]:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=3).close()
    kits = tmp_path / "kits"
    assert main(["kit", str(lead), "--raters", raters, "--out", str(kits)]) == 0
    return lead, kits


def _control_ids(kit: Path, lead: Path) -> tuple[set[int], set[int]]:
    """The kit's item ids of its controls and of its regular items, by the lead's key."""
    keys = lead_keys(lead)
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?immutable=1", uri=True)
    try:
        rows = conn.execute("SELECT id, pair_key FROM item").fetchall()
    finally:
        conn.close()
    controls = {int(i) for i, k in rows if keys[k][1] != "regular"}
    return controls, {int(i) for i, _k in rows} - controls


def _schema(kit: Path) -> list[tuple[Any]]:
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?immutable=1", uri=True)
    try:
        return conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    finally:
        conn.close()


def _separates(control: list[Any], regular: list[Any]) -> str | None:
    """How a column's values tell controls from regular items, if they do: a value only
    controls hold shared by more than one of them, no value in common between the two
    where values repeat, or every control above (or below) every regular item."""
    if not control or not regular:
        return None
    everything = control + regular
    repeats = len({repr(v) for v in everything}) < len(everything)
    if repeats and not {repr(v) for v in control} & {repr(v) for v in regular}:
        return f"no value in common: {sorted(map(repr, control))[:3]}"
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in everything)
    if numbers and (min(control) > max(regular) or max(control) < min(regular)):
        return "ordered apart"
    return None


def test_a_kit_holds_no_column_value_or_order_that_tells_a_control(tmp_path: Path) -> None:
    lead, kits = _made(tmp_path)
    kit = kits / "ana.mbkit"
    controls, regular = _control_ids(kit, lead)
    assert len(controls) >= 5 and len(regular) >= 20  # the lead's queue mixes them in
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    found = []
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        checked = 0
        for table in tables:
            links = {
                str(fk[3])
                for fk in conn.execute(f'PRAGMA foreign_key_list("{table}")')
                if fk[2] == "item"
            }
            link = "id" if table == "item" else next(iter(links), None)
            if link is None:
                continue
            rows = conn.execute(f'SELECT rowid AS "__row", * FROM "{table}"').fetchall()
            for column in rows[0].keys() if rows else []:
                split: dict[bool, list[Any]] = defaultdict(list)
                for row in rows:
                    split[int(row[link]) in controls].append(row[column])
                why = _separates(split[True], split[False])
                if why is not None:
                    found.append(f"{table}.{column}: {why}")
                checked += 1
        assert checked > 10
        queue = [
            int(i) for (i,) in conn.execute("SELECT item_id FROM queue_entry ORDER BY position")
        ]
    finally:
        conn.close()
    assert found == []
    assert sorted(queue) == sorted(controls | regular)  # every item in the queue, none else
    text = kit.read_bytes()
    for name in SYSTEMS:
        assert name.encode() not in text
    # The schema names the kinds an item may have (every study's does); no row holds one.
    schema = "".join(str(sql) for (sql,) in _schema(kit)).encode()
    assert text.count(b"control-") == schema.count(b"control-")
    assert b"parent_system" not in text


def test_the_lead_keeps_each_kit_items_id_and_kind(tmp_path: Path) -> None:
    lead, kits = _made(tmp_path, "ana,ben")
    study = open_study(lead)
    try:
        with study.session() as s:
            records = list(kit_records(s).values())
            kinds = {int(i): str(k) for i, k in s.execute(select(Item.id, Item.kind))}
    finally:
        study.close()
    assert len(records) == 2
    for record in records:
        assert record.blind is not None and len(record.blind) == record.items
        assert all(kinds[i] == kind for i, kind in record.blind.values())
    ana, ben = (set(r.blind or {}) for r in records)
    assert not ana & ben  # each kit has keys of its own


def test_a_blind_kit_is_collected_through_the_leads_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, kits = _made(tmp_path)
    given = rate_kit(kits / "ana.mbkit", "ana", lead=lead)
    assert {kind for _a, _k, kind in given} > {"regular", "control-identical"}
    capsys.readouterr()
    assert main(["collect", str(lead), str(kits)]) == 0
    assert "not blind" not in capsys.readouterr().err
    study = open_study(lead)
    try:
        held, rows = held_ratings(study)
    finally:
        study.close()
    assert held == given and rows == len(given)


def _lead_rows(lead: Path) -> list[Any]:
    conn = sqlite3.connect(str(lead))
    try:
        return (
            conn.execute("SELECT * FROM rating ORDER BY id").fetchall()
            + conn.execute(
                "SELECT key, value FROM study_setting WHERE key != 'kits' ORDER BY key"
            ).fetchall()
        )
    finally:
        conn.close()


def test_a_kit_whose_key_was_edited_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, kits = _made(tmp_path)
    rate_kit(kits / "ana.mbkit", "ana", 6)
    study = open_study(lead)
    try:
        with study.session(write=True) as s:
            records = kit_records(s)
            (record,) = records.values()
            assert record.blind is not None
            first, second = list(record.blind)[:2]
            record.blind[first], record.blind[second] = record.blind[second], record.blind[first]
            store_records(s, records)
    finally:
        study.close()
    before = _lead_rows(lead)
    capsys.readouterr()
    main(["collect", str(lead), str(kits)])
    err = capsys.readouterr()
    assert "ana.mbkit" in err.out + err.err and "nothing was merged" in err.out + err.err
    assert _lead_rows(lead) == before

    # An opaque key edited in the kit itself is refused the same way.
    study = open_study(lead)
    try:
        with study.session(write=True) as s:
            records = kit_records(s)
            (record,) = records.values()
            assert record.blind is not None
            record.blind[first], record.blind[second] = record.blind[second], record.blind[first]
            store_records(s, records)
    finally:
        study.close()
    edited = tmp_path / "edited"
    edited.mkdir()
    copy_study(kits / "ana.mbkit", edited / "ana.mbkit")
    conn = sqlite3.connect(str(edited / "ana.mbkit"))
    with conn:
        conn.execute("UPDATE item SET pair_key = 'x' || pair_key WHERE id = 1")
    conn.close()
    capsys.readouterr()
    main(["collect", str(lead), str(edited)])
    err = capsys.readouterr()
    assert "ana.mbkit" in err.out + err.err and "nothing was merged" in err.out + err.err
    assert _lead_rows(lead) == before


def test_a_kit_from_before_blind_kits_is_collected_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, kits = _made(tmp_path)
    kit = kits / "ana.mbkit"
    # The kit as kits were made before: its items as the lead's, and a record with no key.
    study = open_study(lead)
    try:
        with study.session(write=True) as s:
            records = kit_records(s)
            (record,) = records.values()
            assert record.blind is not None
            unblind(kit, s, record.blind)
            kit_study = open_study(kit)
            try:
                with kit_study.session() as k:
                    identities = item_identities(k)
                    marker = read_marker(k)
            finally:
                kit_study.close()
            assert marker is not None
            secret = read_secret(s)
            assert secret is not None
            record.blind = None
            record.signature = signature(secret, marker, identities)
            store_records(s, records)
    finally:
        study.close()
    given = rate_kit(kit, "ana", 5)
    capsys.readouterr()
    assert main(["collect", str(lead), str(kits)]) == 0
    assert "made before kits were blind" in capsys.readouterr().err
    assert main(["collect", str(lead), str(kits), "--json"]) == 0  # again: nothing added
    assert json.loads(capsys.readouterr().out)["collected"][0]["blind"] is False
    study = open_study(lead)
    try:
        held, rows = held_ratings(study)
    finally:
        study.close()
    assert held == given and rows == len(given)


def test_the_controls_of_a_blind_kit_are_checked_at_collect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lead's key tells the collect which items were controls: the rater's checks see
    the identical controls (rated 100 here), which the kit itself does not name."""
    lead, kits = _made(tmp_path)
    rate_kit(kits / "ana.mbkit", "ana", lead=lead)
    capsys.readouterr()
    assert main(["collect", str(lead), str(kits), "--json"]) == 0
    (kit,) = json.loads(capsys.readouterr().out)["collected"]
    assert kit["blind"] is True and kit["controls"]["identical_pass"] == 1.0


def _kit_rows(kit: Path) -> tuple[list[Any], list[Any]]:
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?immutable=1", uri=True)
    try:
        items = conn.execute("SELECT id, pair_key, source, output FROM item ORDER BY id").fetchall()
        queue = conn.execute("SELECT item_id FROM queue_entry ORDER BY position").fetchall()
    finally:
        conn.close()
    return items, queue


def test_a_kit_is_shuffled_from_its_id_the_same_way_every_time(tmp_path: Path) -> None:
    from meaningbench.kits import making

    lead = tmp_path / "lead.mbstudy"
    study = lead_study(lead, seed=3)
    try:
        with study.session(write=True) as s:
            (plan,) = making._queue_plans(s, ["ana"], "study", {})
    finally:
        study.close()
    one, two = tmp_path / "one.mbkit", tmp_path / "two.mbkit"
    assert making._build_kit(lead, one, plan) == making._build_kit(lead, two, plan)
    assert _kit_rows(one) == _kit_rows(two)
    # Another kit of the same items (another id) is shuffled another way.
    again = replace(plan, marker=KitMarker(plan.marker.study_id, "another-kit", "ana"))
    three = tmp_path / "three.mbkit"
    making._build_kit(lead, three, again)
    texts = [(s_, o) for _i, _k, s_, o in _kit_rows(one)[0]]
    assert texts != [(s_, o) for _i, _k, s_, o in _kit_rows(three)[0]]
    assert sorted(texts) == sorted((s_, o) for _i, _k, s_, o in _kit_rows(three)[0])


def test_a_protocol_that_shows_systems_keeps_them_in_its_kits(tmp_path: Path) -> None:
    from meaningbench.annotation.settings import load_settings, save_settings

    lead = tmp_path / "lead.mbstudy"
    study = lead_study(lead, seed=3)
    try:
        with study.session(write=True) as s:
            cfg = load_settings(s)
            cfg.show_systems = True
            save_settings(s, cfg)
    finally:
        study.close()
    assert main(["kit", str(lead), "--raters", "ana", "--out", str(tmp_path / "kits")]) == 0
    conn = sqlite3.connect(str(tmp_path / "kits" / "ana.mbkit"))
    try:
        systems = {r[0] for r in conn.execute("SELECT system FROM item")}
    finally:
        conn.close()
    assert systems == set(SYSTEMS)  # a control shows its original's system
