"""Long German-like texts and edited copies with a known edit script, for the long-text tests
and benchmarks.

The words follow German's shape: a few function words make up a large share of every text
(der, die, und, ...), content words repeat now and then, and sentences end in full stops —
what makes a word diff slow (repeated words) and what makes it hard (the same short word
everywhere). The edit script says which source words were kept, so a diff can be checked
against it without asking another diff algorithm.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


def _words(text: str) -> list[str]:
    return text.split()


FUNCTION = _words(
    "der die das und in den von zu mit sich des auf für ist im dem nicht ein eine als auch "
    "es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über "
    "einen so zum war haben nur oder aber vor zur bis mehr durch man sein wurde"
)
NOUNS = _words(
    "Stadt Regierung Bevölkerung Entwicklung Wirtschaft Jahrhundert Gemeinde Verwaltung "
    "Universität Forschung Ergebnis Bericht Mitglieder Gesellschaft Jahre Zeit Menschen Land "
    "Teil Beispiel Grund Bereich Frage Arbeit Schule Kinder Familie Wasser Straße Brücke "
    "Kirche Rathaus Markt Fluss Hafen Bahnhof Museum Bibliothek Krankenhaus Gericht Bürger "
    "Handel Industrie Landwirtschaft Verkehr Energie Umwelt Klima Wald Berg Tal Insel Küste "
    "Grenze Krieg Frieden Vertrag Gesetz Steuer Haushalt Mehrheit Wahl Partei Verein Zeitung "
    "Sprache Literatur Musik Theater Kunst Geschichte Zukunft Ausstellung Sammlung Denkmal "
    "Gebäude Turm Mauer Platz Garten Park Feld Dorf Region Provinz Hauptstadt Einwohner "
    "Arbeiter Händler Lehrer Schüler Studenten Ärzte Richter Minister Präsident Bürgermeister "
    "Rat Ausschuss Behörde Unternehmen Fabrik Werkstatt Maschine Technik Wissenschaft Methode"
)
ADJECTIVES = _words(
    "wichtige bekannte große neue alte deutsche erste letzte kleine hohe lange starke "
    "öffentliche politische wirtschaftliche soziale kulturelle historische moderne ländliche "
    "städtische zentrale regionale wesentliche schwierige einfache sichere genaue frühe späte"
)
VERBS = _words(
    "baute gründete verlor gewann beschloss förderte prägte veränderte erweiterte verband "
    "trennte schützte führte leitete verwaltete beschrieb untersuchte zeigte entwickelte "
    "erreichte verließ besuchte eröffnete schloss erneuerte verkaufte kaufte plante"
)
PUNCT_AFTER = (",", ",", ";", ":")


def german_like_text(n_words: int, seed: int = 0) -> str:
    """About `n_words` words of sentence-shaped German, in paragraphs."""
    rng = random.Random(seed)
    sentences: list[str] = []
    count = 0
    while count < n_words:
        length = rng.randint(8, 24)
        words = []
        for k in range(length):
            pick = rng.random()
            if pick < 0.45:
                w = rng.choice(FUNCTION)
            elif pick < 0.75:
                w = rng.choice(NOUNS)
            elif pick < 0.88:
                w = rng.choice(ADJECTIVES)
            else:
                w = rng.choice(VERBS)
            if k and k < length - 1 and rng.random() < 0.06:
                w += rng.choice(PUNCT_AFTER)
            words.append(w)
        words[0] = words[0][:1].upper() + words[0][1:]
        sentences.append(" ".join(words) + ".")
        count += length
    paragraphs, k = [], 0
    while k < len(sentences):
        step = rng.randint(4, 8)
        paragraphs.append(" ".join(sentences[k : k + step]))
        k += step
    return "\n\n".join(paragraphs)


@dataclass(frozen=True)
class Edited:
    source: str
    output: str
    kept_source_words: frozenset[int]  # indices into source.split() carried over unchanged
    kept_output_words: frozenset[int]  # where those words stand in output.split()


def edit_text(source: str, rate: float = 0.15, seed: int = 0, fresh: bool = False) -> Edited:
    """The source with about `rate` of its words deleted, replaced or followed by an insertion.

    `fresh`: inserted words are new tokens no source word equals (w1234x), so the only
    correct diff is the edit script itself."""
    rng = random.Random(seed)
    vocab = FUNCTION + NOUNS + ADJECTIVES + VERBS
    src = source.split()
    out: list[str] = []
    kept_s: set[int] = set()
    kept_o: set[int] = set()

    def new_word() -> str:
        return f"neu{rng.randrange(10**6)}x" if fresh else rng.choice(vocab)

    for i, word in enumerate(src):
        r = rng.random()
        if r < rate / 3:
            continue  # deleted
        if r < 2 * rate / 3:
            out.append(new_word())  # replaced
            continue
        kept_s.add(i)
        kept_o.add(len(out))
        out.append(word)
        if r < rate:
            out.append(new_word())  # inserted after it
    return Edited(source, " ".join(out), frozenset(kept_s), frozenset(kept_o))
