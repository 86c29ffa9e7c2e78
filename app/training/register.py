"""Registering a trained model in the study, where the battery offers it as `meaningbert@NAME`
(a cross-encoder) or `sbert_cosine@NAME` and `bertscore@NAME` (a bi-encoder)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.models import RegisteredModel
from meaningbench.errors import UserError

METRIC = "meaningbert"
# Names become part of a metric spec (`meaningbert@NAME`) on command lines and in tables.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_model_name(name: str) -> str:
    if not _NAME.match(name):
        raise UserError(
            f"{name!r} cannot name a model: use letters, digits, '.', '_' and '-' "
            "(at most 100, starting with a letter or digit)"
        )
    return name


def default_model_name(folder: Path) -> str:
    """The output folder's name, with characters a metric spec cannot hold replaced."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(folder).resolve().name).strip("-._")
    return (cleaned or "model")[:100]


def register_model(
    session: Session, *, name: str, path: Path, card: dict[str, Any], metric: str = METRIC
) -> int:
    """Insert the model, or update it when the same name already points at the same folder
    (a re-run or a resume). Another model of that name is never overwritten."""
    path_text = str(Path(path).resolve())
    row = session.scalar(select(RegisteredModel).where(RegisteredModel.name == name))
    if row is not None:
        if Path(row.path).resolve() != Path(path_text):
            raise UserError(
                f"the study already has a model named {name!r} (at {row.path}); "
                "choose another name with --name"
            )
        row.metric = metric
        row.card = card
        session.flush()
        return row.id
    row = RegisteredModel(name=name, metric=metric, path=path_text, card=card)
    session.add(row)
    session.flush()
    return row.id


def registered_models(session: Session) -> list[RegisteredModel]:
    return list(session.scalars(select(RegisteredModel).order_by(RegisteredModel.id)))


def check_name_free(session: Session, *, name: str, path: Path) -> None:
    """Fail before training, not after an hour of it, when the name is taken."""
    row = session.scalar(select(RegisteredModel).where(RegisteredModel.name == name))
    if row is not None and Path(row.path).resolve() != Path(path).resolve():
        raise UserError(
            f"the study already has a model named {name!r} (at {row.path}); "
            "choose another name with --name"
        )
