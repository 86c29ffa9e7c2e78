"""The language of a study's texts: an ISO 639-1 code, and what each metric makes of it.

A study has one language, chosen at import (`meaningbench import --language de`, default
`en`) and changed with `meaningbench language`. The scoring job hands it to every metric
that declares a `language` option, so it is part of that metric's config: scores under
two languages are filed under two config hashes and never mix. What a language changes:

- BLEU, SARI, iBLEU: sacrebleu's tokenizer (`zh` for Chinese, `ja-mecab` for Japanese,
  `ko-mecab` for Korean, else `13a`), unless the spec names one;
- ROUGE: Porter stemming (rouge-score's stemmer is English) only for English, and a
  tokenizer that keeps every script's letters elsewhere;
- readability: FKGL and FKBLEU are English formulas; the Wiener Sachtextformel is German;
- METEOR (English WordNet and stemmer) and SAMSA (English lemmas and scenes) are
  unavailable for any other language, with that reason.
chrF (character n-grams), TER and the neural metrics (whose model the user chooses) do
not depend on it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from meaningbench.metrics.base import Availability, Metric

DEFAULT_LANGUAGE = "en"

_CODES = """\
aa Afar
ab Abkhazian
ae Avestan
af Afrikaans
ak Akan
am Amharic
an Aragonese
ar Arabic
as Assamese
av Avaric
ay Aymara
az Azerbaijani
ba Bashkir
be Belarusian
bg Bulgarian
bi Bislama
bm Bambara
bn Bengali
bo Tibetan
br Breton
bs Bosnian
ca Catalan
ce Chechen
ch Chamorro
co Corsican
cr Cree
cs Czech
cu Church Slavic
cv Chuvash
cy Welsh
da Danish
de German
dv Divehi
dz Dzongkha
ee Ewe
el Greek
en English
eo Esperanto
es Spanish
et Estonian
eu Basque
fa Persian
ff Fulah
fi Finnish
fj Fijian
fo Faroese
fr French
fy Western Frisian
ga Irish
gd Scottish Gaelic
gl Galician
gn Guarani
gu Gujarati
gv Manx
ha Hausa
he Hebrew
hi Hindi
ho Hiri Motu
hr Croatian
ht Haitian
hu Hungarian
hy Armenian
hz Herero
ia Interlingua
id Indonesian
ie Interlingue
ig Igbo
ii Sichuan Yi
ik Inupiaq
io Ido
is Icelandic
it Italian
iu Inuktitut
ja Japanese
jv Javanese
ka Georgian
kg Kongo
ki Kikuyu
kj Kuanyama
kk Kazakh
kl Kalaallisut
km Khmer
kn Kannada
ko Korean
kr Kanuri
ks Kashmiri
ku Kurdish
kv Komi
kw Cornish
ky Kyrgyz
la Latin
lb Luxembourgish
lg Ganda
li Limburgish
ln Lingala
lo Lao
lt Lithuanian
lu Luba-Katanga
lv Latvian
mg Malagasy
mh Marshallese
mi Maori
mk Macedonian
ml Malayalam
mn Mongolian
mr Marathi
ms Malay
mt Maltese
my Burmese
na Nauru
nb Norwegian Bokmål
nd North Ndebele
ne Nepali
ng Ndonga
nl Dutch
nn Norwegian Nynorsk
no Norwegian
nr South Ndebele
nv Navajo
ny Chichewa
oc Occitan
oj Ojibwa
om Oromo
or Oriya
os Ossetian
pa Punjabi
pi Pali
pl Polish
ps Pashto
pt Portuguese
qu Quechua
rm Romansh
rn Rundi
ro Romanian
ru Russian
rw Kinyarwanda
sa Sanskrit
sc Sardinian
sd Sindhi
se Northern Sami
sg Sango
si Sinhala
sk Slovak
sl Slovenian
sm Samoan
sn Shona
so Somali
sq Albanian
sr Serbian
ss Swati
st Southern Sotho
su Sundanese
sv Swedish
sw Swahili
ta Tamil
te Telugu
tg Tajik
th Thai
ti Tigrinya
tk Turkmen
tl Tagalog
tn Tswana
to Tonga
tr Turkish
ts Tsonga
tt Tatar
tw Twi
ty Tahitian
ug Uyghur
uk Ukrainian
ur Urdu
uz Uzbek
ve Venda
vi Vietnamese
vo Volapük
wa Walloon
wo Wolof
xh Xhosa
yi Yiddish
yo Yoruba
za Zhuang
zh Chinese
zu Zulu
"""
LANGUAGE_NAMES: dict[str, str] = dict(
    line.split(" ", 1) for line in _CODES.splitlines() if line.strip()
)


def normalize_language(code: Any) -> str:
    """The ISO 639-1 code `code` stands for (trimmed, lowercase); ValueError if it is none."""
    text = str(code or "").strip().lower()
    if text not in LANGUAGE_NAMES:
        raise ValueError(
            f"{code!r} is not an ISO 639-1 language code (two letters, e.g. en, de, fr, zh)"
        )
    return text


def language_label(code: str) -> str:
    """`de (German)`, as messages and the import dialog show a language."""
    name = LANGUAGE_NAMES.get(code)
    return f"{code} ({name})" if name else code


def is_english(code: str) -> bool:
    return code == "en"


def sacrebleu_tokenizer(code: str) -> str:
    """The sacrebleu tokenizer BLEU-type metrics use for a language, as sacrebleu's own
    defaults choose it for WMT language pairs (`13a` where words are spaced)."""
    return {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}.get(code, "13a")


class LanguageMetric(Metric):
    """A metric whose computation depends on the study's language (its `language` option,
    which the scoring job sets from the study). Put it first among a metric's bases."""

    # The languages the metric is defined for; None = every language.
    languages: ClassVar[frozenset[str] | None] = None
    # Why it is not defined for the others, in a few words.
    language_reason: ClassVar[str] = ""
    # Studies made before languages existed are English: their cached scores stay valid.
    hashed_when_set: ClassVar[frozenset[str]] = frozenset({"language"})

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        try:
            self.config["language"] = normalize_language(self.config.get("language"))
        except ValueError as exc:
            raise ValueError(f"{self.name}: language: {exc}") from None

    @property
    def language(self) -> str:
        return str(self.config["language"])

    def language_availability(self) -> Availability:
        """Unavailable, with the reason, for a language the metric is not defined for."""
        if self.languages is None or self.language in self.languages:
            return Availability(True)
        allowed = ", ".join(language_label(c) for c in sorted(self.languages))
        return Availability(
            False,
            f"{self.info.label} is defined for {allowed} texts only ({self.language_reason}); "
            f"this study's language is {language_label(self.language)}",
        )
