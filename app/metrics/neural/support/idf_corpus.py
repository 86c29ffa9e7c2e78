"""Where BERTScore's idf weights come from: the texts its `idf_from` option names.

By default the idf corpus is what the outputs are compared with (the references, or the
sources in source mode), as bert-score computes it. A study of long texts may want the
idf of its sources whatever the outputs are compared with (the GermEval-2020 study did),
of its outputs, of its human references, or of an outside corpus: a UTF-8 text file with
one document per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair, pair_references

if TYPE_CHECKING:
    from meaningbench.metrics.study_inputs import StudyInputs

IDF_CORPORA = ("sources", "references", "outputs")


def idf_from_problem(value: object) -> str | None:
    """Why an `idf_from` value cannot be used, or None when it can."""
    if value is None or value in IDF_CORPORA:
        return None
    path = Path(str(value)).expanduser()
    if not path.is_file():
        return (
            f"idf_from must be {', '.join(IDF_CORPORA)} or a text file; "
            f"{str(value)!r} is neither (no such file)"
        )
    return None


def idf_corpus(value: object, pairs: Sequence[Pair], study: StudyInputs | None = None) -> list[str]:
    """The documents of the idf corpus `value` names, for the study whose pairs are given."""
    if value is None:
        return [text for pair in pairs for text in pair_references(pair)]
    if value == "sources":
        return [pair.source for pair in pairs]
    if value == "outputs":
        return [pair.output for pair in pairs]
    if value == "references":
        return _study_references(study, pairs)
    return read_corpus_file(Path(str(value)).expanduser())


def read_corpus_file(path: Path) -> list[str]:
    """One document per non-empty line of a UTF-8 text file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UserError(f"{path}: no such idf corpus file") from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: the idf corpus is not UTF-8 text ({exc.reason})") from exc
    docs = [line.strip() for line in text.splitlines() if line.strip()]
    if not docs:
        raise UserError(f"{path}: the idf corpus file has no text (one document per line)")
    return docs


def _study_references(study: StudyInputs | None, pairs: Sequence[Pair]) -> list[str]:
    """The human references of the pairs' items, as the study holds them (pairs in source
    mode carry the source in their place)."""
    if study is None:
        raise UserError("idf_from=references reads the study's references: score a study")
    docs = study.references(sorted({pair.item_id for pair in pairs}))
    if not docs:
        raise UserError("idf_from=references: no item of the study has a human reference")
    return docs
