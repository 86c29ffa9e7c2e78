"""Blind kits: nothing in a kit tells a hidden control from a regular item.

A kit is made blind after it was cut down to its rater's queue (`meaningbench.kits.making`):
every item becomes a plain item (kind `regular`, no parent, no attributes, no external
id), takes an opaque key of its own in place of its pair key, and a new id; ids and the
queue's order are shuffled with a seed drawn from the kit's id, so the same kit is always
made the same way. The originals of controls that are not in the rater's queue leave the
kit, system names leave it unless the protocol shows them, and its settings hold no
quality-control mix, thresholds or seed of the lead's.

The lead's study keeps the key: per kit (its record, `KitRecord.blind`), each opaque key's
item in the lead's study and its kind. Collecting a blind kit maps its items back through
that key in the collect's private copy of it (`unblind`), so the merge sees the lead's
own items; a kit whose keys are not those of its record is refused.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.models import Dataset, Item
from meaningbench.errors import UserError

# Kit key → [lead item id, kind].
BlindKey = dict[str, list[Any]]


def kit_rng(kit_id: str) -> random.Random:
    """The kit's own shuffle: reproducible from its id, unrelated to the lead's seed."""
    return random.Random(int(hashlib.sha256(f"blind|{kit_id}".encode()).hexdigest(), 16))


def _item_columns(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(table, column) of every column that points at an item, found from the schema."""
    found = []
    tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    for (table,) in tables:
        for row in conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall():
            if row[2] == "item" and table != "item":
                found.append((str(table), str(row[3])))
    return found


def make_blind(conn: sqlite3.Connection, kit_id: str, *, show_systems: bool) -> BlindKey:
    """Make the kit open on `conn` blind (foreign keys off, inside a transaction); returns
    the key the lead's study keeps."""
    rng = kit_rng(kit_id)
    queued = {int(i) for (i,) in conn.execute("SELECT item_id FROM queue_entry")}
    _drop_items(conn, queued)
    rows = conn.execute(
        "SELECT id, kind, json_extract(meta, '$.parent_system'), source_group FROM item ORDER BY id"
    ).fetchall()
    ids = [int(r[0]) for r in rows]
    new_ids = list(range(1, len(ids) + 1))
    rng.shuffle(new_ids)
    key: BlindKey = {}
    groups: dict[str, str] = {}
    conn.execute("CREATE TEMP TABLE blind_id (old INTEGER PRIMARY KEY, new INTEGER)")
    for (old, kind, parent_system, group), new in zip(rows, new_ids, strict=True):
        opaque = f"{rng.getrandbits(128):032x}"
        key[opaque] = [int(old), str(kind)]
        group_token = groups.setdefault(str(group), f"{rng.getrandbits(64):016x}")
        system = "system" if show_systems else None
        # References go too: the rating screen never shows them, and the controls, made
        # without any, would stand apart from imported items that have them.
        conn.execute(
            "UPDATE item SET pair_key = ?, kind = 'regular', parent_id = NULL, meta = '{}', "
            "external_id = NULL, refs = '[]', source_group = ?, "
            "system = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(system, ?) END WHERE id = ?",
            (opaque, group_token, system, parent_system, old),
        )
        conn.execute("INSERT INTO blind_id VALUES (?, ?)", (old, new))
    _renumber(conn)
    _shuffle_queue(conn, rng)
    return key


def _drop_items(conn: sqlite3.Connection, queued: set[int]) -> None:
    """Only the queue's items stay: an original kept for its control would be one more item
    outside the queue, which only a control's original can be."""
    conn.execute("CREATE TEMP TABLE blind_keep (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO blind_keep VALUES (?)", [(i,) for i in sorted(queued)])
    keep = "(SELECT id FROM blind_keep)"
    gone = f"(SELECT id FROM rating WHERE item_id NOT IN {keep})"
    conn.execute(f"DELETE FROM rating_span WHERE rating_id IN {gone}")
    conn.execute(f"DELETE FROM span_proposal WHERE rating_id IN {gone}")
    for table, column in _item_columns(conn):
        conn.execute(f'DELETE FROM "{table}" WHERE "{column}" NOT IN {keep}')
    conn.execute(f"DELETE FROM item WHERE id NOT IN {keep}")
    conn.execute(
        "UPDATE rating SET supersedes_id = NULL WHERE supersedes_id NOT IN (SELECT id FROM rating)"
    )


def _renumber(conn: sqlite3.Connection) -> None:
    """Every item takes its new id, and every row pointing at it follows (through
    negative ids, so no two items ever share one on the way)."""
    columns = [("item", "id"), *_item_columns(conn)]
    for table, column in columns:
        conn.execute(
            f'UPDATE "{table}" SET "{column}" = -(SELECT new FROM blind_id WHERE old = "{column}") '
            f'WHERE "{column}" IN (SELECT old FROM blind_id)'
        )
    for table, column in columns:
        conn.execute(f'UPDATE "{table}" SET "{column}" = -"{column}" WHERE "{column}" < 0')


def _shuffle_queue(conn: sqlite3.Connection, rng: random.Random) -> None:
    entries = [int(i) for (i,) in conn.execute("SELECT id FROM queue_entry ORDER BY id")]
    order = list(range(len(entries)))
    rng.shuffle(order)
    for entry, position in zip(entries, order, strict=True):
        conn.execute("UPDATE queue_entry SET position = ? WHERE id = ?", (float(position), entry))
    # The rows' own ids follow the items' order, not the lead's.
    conn.execute("UPDATE queue_entry SET id = -id")
    conn.execute(
        "UPDATE queue_entry SET id = (SELECT COUNT(*) FROM queue_entry q "
        "WHERE q.position <= queue_entry.position)"
    )


def check_key(kit: Session, lead: Session, key: BlindKey, path: Path, merged: str) -> None:
    """Refuse a kit whose items are not those its key maps, or whose mapped items the
    lead's study no longer holds as they were."""
    held = set(kit.scalars(select(Item.pair_key)))
    if held != set(key):
        raise UserError(
            f"{path}: its items do not match the key this study keeps for it (edited?); {merged}"
        )
    ids = [int(v[0]) for v in key.values()]
    kinds = {int(i): k for i, k in lead.execute(select(Item.id, Item.kind).where(Item.id.in_(ids)))}
    for lead_id, kind in key.values():
        if kinds.get(int(lead_id)) != kind:
            raise UserError(
                f"{path}: item {lead_id} of its key is no longer in this study as it was; {merged}"
            )


def unblind(copy: Path, lead: Session, key: BlindKey) -> None:
    """Give the items of the collect's private `copy` of a blind kit their identities in
    the lead's study (pair key, kind, parent, attributes' control variant), by `key`."""
    ids = [int(v[0]) for v in key.values()]
    lead_items = {
        int(row.id): row
        for row in lead.execute(
            select(Item.id, Item.pair_key, Item.kind, Item.parent_id, Item.meta, Dataset.name)
            .join(Dataset, Dataset.id == Item.dataset_id)
            .where(Item.id.in_(ids))
        )
    }
    conn = sqlite3.connect(str(copy))
    try:
        conn.execute("PRAGMA journal_mode=DELETE")  # the merge reads it as an immutable file
        with conn:
            kit_ids = dict(conn.execute("SELECT pair_key, id FROM item").fetchall())
            by_lead = {int(v[0]): int(kit_ids[k]) for k, v in key.items()}
            for opaque, (lead_id, _kind) in key.items():
                it = lead_items[int(lead_id)]
                control = (it.meta or {}).get("control")
                conn.execute(
                    "UPDATE item SET pair_key = ?, kind = ?, parent_id = ?, meta = ? WHERE id = ?",
                    (
                        it.pair_key,
                        it.kind,
                        by_lead.get(it.parent_id) if it.parent_id is not None else None,
                        json.dumps({} if control is None else {"control": control}),
                        kit_ids[opaque],
                    ),
                )
    finally:
        conn.close()


def sealed(identities: list[list[str]], key: BlindKey | None) -> list[list[str]]:
    """What a kit's signature covers: its items and, for a blind kit, the lead's key to them
    (so an edit of the key in the lead's study fails the signature as an edit of the kit does)."""
    if key is None:
        return identities
    return [*identities, ["blind key", json.dumps(key, sort_keys=True)]]


def blind_identities(lead: Session, key: BlindKey) -> list[list[str]]:
    """The kit's items as `meaningbench.kits.record.item_identities` reads them in the kit
    (its opaque keys, every item plain), from the lead's study: what its signature seals."""
    by_id = {int(v[0]): opaque for opaque, v in key.items()}
    out = []
    query = (
        select(Item.id, Dataset.name, Item.source, Item.output)
        .join(Dataset, Dataset.id == Item.dataset_id)
        .where(Item.id.in_(list(by_id)))
    )
    for item_id, dataset, source, output in lead.execute(query):
        texts = hashlib.sha256(f"{source}\x1f{output}".encode()).hexdigest()
        out.append([str(dataset), by_id[int(item_id)], "regular", texts])
    return sealed(sorted(out), key)
