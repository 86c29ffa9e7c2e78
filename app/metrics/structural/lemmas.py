"""Lemmas for word alignment: "sat" and "sits" align, "mice" and "mouse" align.

WordNet's own lemmatiser (morphy: the exception lists plus the detachment rules, keeping
only forms that WordNet's index knows) run straight over WordNet's database files, found
where METEOR finds them (`nltk_data.wordnet_source_dir`). This is the algorithm NLTK's
WordNetLemmatizer runs; reading the files directly avoids NLTK's need for a `lexnames` file
and loads only the index (about 0.3 s, once). Without WordNet a suffix-stripping fallback
keeps the metric usable; `lemmatiser_name()` says which one ran.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

# WordNet's morphy detachment rules (wnintro(5WN) "morphy").
_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


def wordnet_dir() -> Path | None:
    """Where WordNet's database files are: the same folder METEOR uses."""
    from meaningbench.metrics.lexical.nltk_data import wordnet_source_dir

    path = wordnet_source_dir()
    if path is not None and (path / "noun.exc").is_file():
        return path
    return None


@dataclass(frozen=True)
class _WordNetForms:
    lemmas: dict[str, frozenset[str]]  # pos -> known lemmas
    exceptions: dict[str, dict[str, tuple[str, ...]]]  # pos -> inflected -> base forms


def _read_index(path: Path) -> frozenset[str]:
    out: set[str] = set()
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith(" "):  # the licence header lines start with spaces
                continue
            out.add(line.split(" ", 1)[0])
    return frozenset(out)


def _read_exceptions(path: Path) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    if not path.is_file():
        return out
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                out[parts[0]] = tuple(parts[1:])
    return out


@lru_cache(maxsize=1)
def _wordnet() -> _WordNetForms | None:
    root = wordnet_dir()
    if root is None:
        return None
    lemmas = {pos: _read_index(root / f"index.{name}") for pos, name in POS_FILES.items()}
    exceptions = {pos: _read_exceptions(root / f"{name}.exc") for pos, name in POS_FILES.items()}
    return _WordNetForms(lemmas, exceptions)


def morphy(word: str, pos: str) -> list[str]:
    """WordNet base forms of `word` for one part of speech ('n', 'v', 'a', 'r')."""
    wn = _wordnet()
    if wn is None:
        return []
    form = word.lower().replace(" ", "_")
    known = wn.lemmas[pos]
    found: list[str] = []

    def add(candidates: Iterable[str]) -> None:
        for c in candidates:
            if c in known and c not in found:
                found.append(c)

    # NLTK's order: an exception entry answers alone; otherwise the form itself and every
    # detachment rule, each kept only when the index knows it.
    exc = wn.exceptions[pos].get(form)
    if exc:
        add([form, *exc])
    else:
        add([form])
        add(form[: -len(old)] + new for old, new in _RULES[pos] if form.endswith(old))
    return found


_SUFFIXES = (
    ("ies", "y"),
    ("ied", "y"),
    ("sses", "ss"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("xes", "x"),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
)


def _strip_suffix(word: str) -> str:
    for old, new in _SUFFIXES:
        if word.endswith(old) and len(word) - len(old) >= 3:
            stem = word[: -len(old)] + new
            # "running" -> "runn" -> "run": undo a doubled final consonant.
            if old in ("ing", "ed") and len(stem) > 3 and stem[-1] == stem[-2]:
                stem = stem[:-1]
            return stem
    return word


@lru_cache(maxsize=65536)
def lemma_set(word: str) -> frozenset[str]:
    """Every base form the word may have; two words share a lemma when these sets meet."""
    low = word.casefold().replace("’", "'")
    if _wordnet() is None:
        return frozenset({low, _strip_suffix(low)})
    forms = {low}
    for pos in POS_FILES:
        forms.update(morphy(low, pos))
    return frozenset(forms)


def lemmatiser_name() -> str:
    root = wordnet_dir()
    return f"WordNet morphy ({root})" if root is not None else "suffix stripping"
