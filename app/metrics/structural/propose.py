"""Propose scenes from a dependency parse, when spaCy and an English model are installed.

A proposal is a starting point for the annotator, not UCCA: every verb (and every
copular predicate) opens a scene; its subject, objects, prepositional and clausal
dependents become participants, each centred on its head noun (with compound parts and
conjuncts: "New York City", "John and Mary"). Rules read spaCy's English labels (ClearNLP)
and Universal Dependencies alike. The rules work on plain `DepToken`s, so they are tested
without spaCy; spaCy is only detected, never required.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from meaningbench.metrics.structural.scenes import Participant, SceneSpec

PREFERRED_MODELS = ("en_core_web_trf", "en_core_web_lg", "en_core_web_md", "en_core_web_sm")

# Dependents that are participants of their head's scene (time expressions are not: UCCA
# marks them T, outside the participants).
_CORE_ARGS = {
    "nsubj", "nsubjpass", "nsubj:pass", "csubj", "csubjpass", "dobj", "obj", "iobj",
    "dative", "attr", "oprd", "obl", "obl:agent", "ccomp", "xcomp",
}  # fmt: skip
_PREP_LIKE = {"prep", "agent"}  # spaCy: verb -prep-> "on" -pobj-> "mat"
_CENTRE_EXTRA = {"compound", "flat", "flat:name", "fixed", "conj"}
_NO_SCENE_DEPS = {"aux", "auxpass", "aux:pass", "amod", "compound", "cop"}
_RELATIVE_PRONOUNS = {"who", "whom", "which", "that", "whose"}


@dataclass(frozen=True)
class DepToken:
    text: str
    head: int  # index of the head token; the root points at itself
    dep: str
    pos: str  # universal POS tag (VERB, AUX, NOUN, PROPN, PRON, ADJ, ADP, PUNCT, ...)


def _children(tokens: Sequence[DepToken]) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in tokens]
    for i, t in enumerate(tokens):
        if t.head != i and 0 <= t.head < len(tokens):
            kids[t.head].append(i)
    return kids


def _subtree(i: int, kids: list[list[int]], tokens: Sequence[DepToken]) -> list[int]:
    out, stack = [], [i]
    while stack:
        j = stack.pop()
        if tokens[j].pos != "PUNCT":
            out.append(j)
        stack.extend(kids[j])
    return sorted(out)


def _centre(i: int, kids: list[list[int]], tokens: Sequence[DepToken]) -> list[int]:
    """The head word, its compound parts and its coordinated heads."""
    out, stack = [], [i]
    while stack:
        j = stack.pop()
        out.append(j)
        stack.extend(k for k in kids[j] if tokens[k].dep in _CENTRE_EXTRA)
    return sorted(out)


def _is_predicate(i: int, tokens: Sequence[DepToken], kids: list[list[int]]) -> bool:
    t = tokens[i]
    deps = {tokens[k].dep for k in kids[i]}
    if t.dep in _NO_SCENE_DEPS:
        return False
    if t.pos == "VERB":
        return True
    if "cop" in deps:  # UD: the predicate nominal or adjective heads the copula
        return True
    # spaCy: the copula heads "attr"/"acomp"
    return t.pos == "AUX" and bool(deps & {"attr", "acomp", "nsubj"})


def _participant(k: int, kids: list[list[int]], tokens: Sequence[DepToken]) -> Participant | None:
    dep = tokens[k].dep
    if dep in _PREP_LIKE:
        objects = [c for c in kids[k] if tokens[c].dep in ("pobj", "pcomp")]
        if not objects:
            return None
        centre = _centre(objects[0], kids, tokens)
    elif dep in ("ccomp", "xcomp", "csubj", "csubjpass"):
        centre = [k]  # a clausal participant is centred on its own main relation
    else:
        centre = _centre(k, kids, tokens)
    return Participant(tuple(_subtree(k, kids, tokens)), tuple(centre))


def propose_from_parse(tokens: Sequence[DepToken]) -> list[SceneSpec]:
    kids = _children(tokens)
    words = tuple(t.text for t in tokens)
    scenes: list[SceneSpec] = []
    subject_of: dict[int, Participant] = {}
    for i in range(len(tokens)):
        if not _is_predicate(i, tokens, kids):
            continue
        main = [i]
        # spaCy copula: "is tall" — the state is the adjective / noun, "is" a function word.
        if tokens[i].pos == "AUX":
            comp = [k for k in kids[i] if tokens[k].dep in ("acomp", "attr")]
            main = comp[:1] or main
        main += [k for k in kids[i] if tokens[k].dep in ("prt", "compound:prt")]
        participants: list[Participant] = []
        for k in kids[i]:
            dep = tokens[k].dep
            if k in main or not (dep in _CORE_ARGS or dep in _PREP_LIKE):
                continue
            if (
                tokens[i].dep in ("relcl", "acl:relcl")
                and tokens[k].text.lower() in _RELATIVE_PRONOUNS
            ):
                continue  # "who" stands for the noun the clause modifies, added below
            p = _participant(k, kids, tokens)
            if p is not None:
                participants.append(p)
                if dep.startswith("nsubj") or dep.startswith("csubj"):
                    subject_of[i] = p
        head = tokens[i].head
        if tokens[i].dep in ("relcl", "acl:relcl", "acl") and head != i:
            participants.append(
                Participant((head,), tuple(_centre(head, kids, tokens)), remote=True)
            )
        if tokens[i].dep == "conj" and i not in subject_of and head in subject_of:
            shared = subject_of[head]  # "The cat sat and purred": purring cat, written once
            participants.append(Participant(shared.tokens, shared.centre, remote=True))
        scenes.append(SceneSpec(words, tuple(sorted(set(main))), tuple(participants), "parser"))
    scenes.sort(key=lambda s: min(s.main_relation))
    return [s.with_position(n) for n, s in enumerate(scenes)]


@lru_cache(maxsize=1)
def parser_status() -> tuple[bool, str, str]:
    """(available, model name, message) for spaCy with an English pipeline."""
    if importlib.util.find_spec("spacy") is None:
        return (
            False,
            "",
            "scene proposal needs spaCy and an English model (pip install spacy, then "
            "install e.g. en_core_web_sm); annotate scenes by hand or import UCCA XML instead",
        )
    import spacy

    installed = set(spacy.util.get_installed_models())
    for name in PREFERRED_MODELS:
        if name in installed:
            return True, name, f"spaCy {spacy.__version__} with {name}"
    english = sorted(m for m in installed if m.startswith("en_"))
    if english:
        return True, english[0], f"spaCy {spacy.__version__} with {english[0]}"
    return (
        False,
        "",
        "spaCy is installed but no English model is (install e.g. en_core_web_sm)",
    )


@lru_cache(maxsize=1)
def _nlp() -> Any:
    ok, name, message = parser_status()
    if not ok:
        from meaningbench.errors import UserError

        raise UserError(message)
    import spacy

    return spacy.load(name, disable=["ner", "textcat", "lemmatizer"])


def propose_scenes(texts: Sequence[str]) -> list[list[SceneSpec]]:
    """Parse each text with spaCy and propose its scenes."""
    nlp = _nlp()
    out = []
    for doc in nlp.pipe(texts, batch_size=64):
        tokens = [DepToken(t.text, t.head.i, t.dep_, t.pos_) for t in doc]
        out.append(propose_from_parse(tokens))
    return out
