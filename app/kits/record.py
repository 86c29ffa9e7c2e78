"""What the lead's study keeps of its kits, and the signature that ties a kit to it.

The lead's study holds a secret (`kit_secret`, made with the first kit and never copied
into a kit) and, per kit, its rater, file name, when it was made and returned, and an
HMAC of the kit's identity: the study id, the kit id, the rater and every item the kit
holds (dataset, key, kind and texts). A returned kit whose items were added to or
changed, or whose ids were edited, no longer matches its HMAC; without the secret no one
can make a matching one. The kit itself carries its ids in the `kit` study setting (its
marker), never the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.models import Dataset, Item, StudySetting
from meaningbench.settings import KIT_SUFFIX

__all__ = ["KIT_SUFFIX", "MARKER_KEY", "KitMarker", "KitRecord", "read_marker"]

# Study settings: the lead's kits and secret; a kit's marker.
KITS_KEY = "kits"
SECRET_KEY = "kit_secret"
MARKER_KEY = "kit"


@dataclass
class KitRecord:
    """One kit as the lead's study remembers it."""

    kit_id: str
    rater: str
    file: str
    made_at: str
    items: int
    signature: str
    top_up: bool = False
    returns: list[str] = field(default_factory=list)
    # 0: the rater's queue; N: their N-th top-up. None: recorded before rounds were kept.
    round: int | None = None
    # The first key of the kit's log of ratings (`meaningbench.annotation.kit_log`), never in
    # any kit. None: a kit made before kits kept a log.
    log_key: str | None = None
    # The events in the log of the latest copy of the kit collected: an older copy (fewer)
    # collected after it must not take back what the rater revised or undid since.
    log_events: int = 0
    # The kit's log holds its practice answers too. False: a kit made before it did, whose
    # practice answers collect cannot check (the kit cannot say so itself: an edit could).
    log_practice: bool = False
    # A blind kit's key (`meaningbench.kits.blind`): each item's opaque key in the kit →
    # [its id in this study, its kind]. None: a kit made before kits were blind.
    blind: dict[str, list[Any]] | None = None
    # The practice items and pass mark the kit was made with (`meaningbench.kits.practice_made`),
    # which collect finds unchanged in it. None: a kit made before they were kept, not checked.
    practice: dict[str, Any] | None = None

    def round_key(self) -> int | str:
        """Which of the rater's rounds the kit belongs to: a kit made again for the same
        round (a remade queue kit) is the same round, so it is counted once."""
        if self.round is not None:
            return self.round
        return self.kit_id if self.top_up else 0

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> KitRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in raw.items() if k in known})


@dataclass(frozen=True)
class KitMarker:
    """What a kit says of itself (the `kit` setting of the kit file)."""

    study_id: str
    kit_id: str
    rater: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Any) -> KitMarker | None:
        if not isinstance(raw, dict):
            return None
        try:
            return cls(str(raw["study_id"]), str(raw["kit_id"]), str(raw["rater"]))
        except KeyError:
            return None


def _setting(session: Session, key: str) -> Any:
    row = session.get(StudySetting, key)
    return row.value if row is not None else None


def _put(session: Session, key: str, value: Any) -> None:
    row = session.get(StudySetting, key)
    if row is None:
        session.add(StudySetting(key=key, value=value))
    else:
        row.value = value


def read_marker(session: Session) -> KitMarker | None:
    """The kit marker of a study file; None for a study that is not a kit."""
    return KitMarker.from_json(_setting(session, MARKER_KEY))


def write_marker(session: Session, marker: KitMarker) -> None:
    _put(session, MARKER_KEY, marker.to_json())


def kit_records(session: Session) -> dict[str, KitRecord]:
    """The lead's kits by kit id, oldest first."""
    raw = _setting(session, KITS_KEY)
    if not isinstance(raw, dict):
        return {}
    return {k: KitRecord.from_json(v) for k, v in raw.items() if isinstance(v, dict)}


def store_records(session: Session, records: dict[str, KitRecord]) -> None:
    _put(session, KITS_KEY, {k: asdict(r) for k, r in records.items()})


def read_secret(session: Session) -> str | None:
    found = _setting(session, SECRET_KEY)
    return found if isinstance(found, str) and found else None


def ensure_secret(session: Session) -> str:
    found = read_secret(session)
    if found is not None:
        return found
    made = secrets.token_hex(32)
    _put(session, SECRET_KEY, made)
    return made


def item_identities(session: Session, item_ids: Iterable[int] | None = None) -> list[list[str]]:
    """Each item as [dataset, key, kind, digest of its texts], sorted: what a kit is made of,
    the same in the lead's study and in the kit (ids differ between files, these do not)."""
    query = select(Dataset.name, Item.pair_key, Item.kind, Item.source, Item.output).join(
        Dataset, Dataset.id == Item.dataset_id
    )
    if item_ids is not None:
        query = query.where(Item.id.in_(list(item_ids)))
    out = []
    for dataset, key, kind, source, output in session.execute(query):
        texts = hashlib.sha256(f"{source}\x1f{output}".encode()).hexdigest()
        out.append([str(dataset), str(key), str(kind), texts])
    return sorted(out)


def signature(secret: str, marker: KitMarker, identities: list[list[str]]) -> str:
    body = json.dumps([marker.to_json(), identities], sort_keys=True, ensure_ascii=False)
    return hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()


def signature_matches(
    secret: str, marker: KitMarker, identities: list[list[str]], want: str
) -> bool:
    return hmac.compare_digest(signature(secret, marker, identities), want)
