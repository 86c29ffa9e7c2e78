"""The prompts of the LLM judge: text files a user can copy and edit, and how an answer is read.

A template file is a short header, a line `---`, and the prompt:

    scale: 0-100          the scores the answer may give (integers, both ends included)
    answer: score         `score`: a number; `spans`: error spans as JSON, then a number
    max_tokens: 8         how many tokens the judge may write (the `max_tokens` option wins)
    prefix: "Score: "     how a `score` answer begins: the score is read right after it
    ---
    ... {source} ... {output} ...

`{source}` and `{output}` are replaced by the item's texts; every other character is kept,
braces included. The built-in templates live in resources/judge/ (`da`, `likert`, `esa`);
`template=` takes their name or the path of a file in this format. The whole file text is
part of the metric's config hash, so an edited template never reuses old scores.

`prefix` (a JSON string when it has spaces at its ends; `Score: ` when absent) is the fixed
beginning of a `score` answer on the transformers backend: the score's probabilities are
read right after it, with no free answer (`judge_prefix`). `max_tokens` then only bounds the
free answers: `spans` templates, other backends, and a tokenizer that writes the scores
neither digit by digit nor as whole tokens.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError
from meaningbench.settings import resources_dir

ANSWER_KINDS = ("score", "spans")
# A number as the judge writes it: digits, optionally a decimal part ("1.15", "85") and an
# exponent, read whole: "1e999" is a number off every scale, not the 1 it starts with.
NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
# No tokenizer has a token this long: an answer's characters past max_tokens × this were not
# written within max_tokens (a server that ignores the limit); neither read nor stored.
CHARS_PER_TOKEN = 64
PLAIN_SUFFIX = "\n\nAnswer: "
DEFAULT_PREFIX = "Score: "


def templates_dir() -> Path:
    return resources_dir() / "judge"


def builtin_templates() -> dict[str, Path]:
    return {p.stem: p for p in sorted(templates_dir().glob("*.txt"))}


@dataclass(frozen=True)
class Template:
    name: str
    text: str  # the whole file: hashed with the config
    low: int
    high: int
    answer: str  # one of ANSWER_KINDS
    max_tokens: int
    body: str
    prefix: str = DEFAULT_PREFIX  # where a `score` answer's score is read (chat models)

    def render(self, source: str, output: str) -> str:
        # replace, not str.format: the ESA prompt shows JSON with braces.
        return self.body.replace("{source}", source).replace("{output}", output)

    def plain(self, source: str, output: str) -> str:
        """The prompt for a model without a chat template: the text, then `Answer: `."""
        return self.render(source, output).rstrip() + PLAIN_SUFFIX

    def to_100(self, score: float) -> float:
        """A score on the template's scale as 0–100 (1–5: (s − 1)·25)."""
        return 100.0 * (score - self.low) / (self.high - self.low)

    def describe(self) -> str:
        first = self.body.strip().splitlines()[0] if self.body.strip() else ""
        first = first if len(first) <= 72 else first[:71] + "…"
        return f"{self.name}: scale {self.low}–{self.high}, answer {self.answer}; {first}"


def load_template(name_or_path: str) -> Template:
    """A built-in template by name, or a template file by path; `UserError` naming the file
    and line when the header is wrong."""
    builtin = builtin_templates()
    path = builtin.get(name_or_path) or Path(name_or_path).expanduser()
    if not path.is_file():
        known = ", ".join(builtin)
        raise UserError(
            f"judge template {name_or_path!r} is neither a built-in ({known}) nor a file"
        )
    text = path.read_text(encoding="utf-8")
    return parse_template(path.stem if name_or_path in builtin else str(path), text, str(path))


def parse_template(name: str, text: str, where: str = "<template>") -> Template:
    head, sep, body = text.partition("\n---\n")
    if not sep:
        raise UserError(f"{where}: a judge template needs a header, a line '---', then the prompt")
    fields: dict[str, str] = {}
    for number, line in enumerate(head.splitlines(), start=1):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon:
            raise UserError(f"{where}, line {number}: expected 'key: value', got {line!r}")
        fields[key.strip()] = value.strip()
    try:
        low_text, _, high_text = fields.get("scale", "0-100").partition("-")
        low, high = int(low_text), int(high_text)
        max_tokens = int(fields.get("max_tokens", "8"))
    except ValueError as exc:
        raise UserError(
            f"{where}: scale must be 'LOW-HIGH' integers and max_tokens an integer"
        ) from exc
    answer = fields.get("answer", "score")
    if answer not in ANSWER_KINDS or not 0 <= low < high or max_tokens < 1:
        raise UserError(
            f"{where}: answer must be one of {ANSWER_KINDS}, the scale 0 ≤ LOW < HIGH, "
            "max_tokens at least 1"
        )
    if "{output}" not in body:
        raise UserError(f"{where}: the prompt never shows the output ({{output}})")
    prefix = _prefix(fields.get("prefix", json.dumps(DEFAULT_PREFIX)), where)
    return Template(name, text, low, high, answer, max_tokens, body, prefix)


def _prefix(value: str, where: str) -> str:
    """The header's `prefix`: a JSON string (to keep spaces at its ends) or the bare text."""
    if not value.startswith('"'):
        return value
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise UserError(f"{where}: prefix {value} is not a JSON string: {exc}") from exc
    if not isinstance(parsed, str):
        raise UserError(f"{where}: prefix {value} is not a JSON string")
    return parsed


@dataclass(frozen=True)
class Answer:
    """What a judge's answer says: its score (None: none found), where the score starts in
    the text, the error spans of an ESA answer, and why there is no score."""

    score: float | None
    start: int | None
    spans: list[Any] | None = None
    problem: str = ""


def kept_answer(text: str, max_tokens: int) -> str:
    """The part of an answer that is read and stored: what max_tokens tokens can hold."""
    return text[: max(1, max_tokens) * CHARS_PER_TOKEN]


def read_answer(text: str, template: Template) -> Answer:
    """The score of an answer: the first number (after the span list for `spans` answers),
    which must lie on the template's scale."""
    spans: list[Any] | None = None
    begin = 0
    if template.answer == "spans":
        spans, begin = _span_list(text)
    match = NUMBER.search(text, begin)
    if match is None:
        return Answer(None, None, spans, "the answer holds no number")
    score = float(match.group())
    if not template.low <= score <= template.high:  # inf ("1e999") included
        return Answer(
            None,
            None,
            spans,
            f"the answer's number {match.group()} is outside {template.low}–{template.high}",
        )
    return Answer(score, match.start(), spans)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Python's decoder takes NaN, Infinity and 1e999 (as inf): none of them may reach the stored
# details, which must stay JSON. A span list holding one is no span list.
_STRICT_JSON = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def _span_list(text: str) -> tuple[list[Any] | None, int]:
    """The JSON list of error spans an ESA answer starts with, and where it ends."""
    start = text.find("[")
    if start < 0:
        return None, 0
    try:
        value, end = _STRICT_JSON.raw_decode(text, start)
    except ValueError:
        return None, 0
    if not isinstance(value, list):
        return None, 0
    return [s for s in value if isinstance(s, dict)], end
