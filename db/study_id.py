"""A study's identity, so results scored elsewhere go back into the study they came from.

A random id kept in the `study_setting` table (key `study_id`), made by the first export; a
copy of the study file shares it (the copy holds the same items under the same ids).
"""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from meaningbench.db.models import StudySetting
from meaningbench.db.study import Study

KEY = "study_id"


def read_study_id(study: Study) -> str | None:
    with study.session() as s:
        row = s.get(StudySetting, KEY)
        return str(row.value) if row is not None and row.value else None


def ensure_study_id(study: Study) -> str:
    found = read_study_id(study)
    if found is not None:
        return found
    with study.session(write=True) as s:
        return study_id_in(s)  # another export may have made it meanwhile


def study_id_in(session: Session) -> str:
    """The study's id, made in `session` (a write transaction) when it has none: a write that
    is refused later in the transaction leaves no id behind either."""
    row = session.get(StudySetting, KEY)
    if row is not None and row.value:
        return str(row.value)
    made = uuid.uuid4().hex
    session.add(StudySetting(key=KEY, value=made))
    return made
