"""What every metric is: a spec (name, family, scale, reference implementation, typed
options), a config with a stable hash, an availability check that explains itself, a batch
scorer returning a 0–100 value, the raw value and details, and an `explain` hook that says
how one score came about.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args, get_origin

from meaningbench.runtime import CancelToken

if TYPE_CHECKING:
    from meaningbench.metrics.explain import ExplainItem, Explanation
    from meaningbench.metrics.study_inputs import StudyInputs

ReferenceMode = Literal["source", "references"]
REFERENCE_MODES: tuple[str, ...] = get_args(ReferenceMode)


@dataclass(frozen=True, slots=True)
class Pair:
    """One item as a metric sees it. `references` is already resolved for the reference mode."""

    item_id: int
    source: str
    output: str
    references: tuple[str, ...]
    system: str | None = None


def pair_references(pair: Pair) -> tuple[str, ...]:
    """The references the job resolved; a pair built by hand without any uses its source."""
    return pair.references if pair.references else (pair.source,)


# The details key of a score deliberately not computed, with the reason as its value.
NOT_COMPUTED = "not_computed"


@dataclass
class ItemScore:
    value: float | None  # 0–100, higher = more meaning preserved (FKGL keeps its raw grade)
    raw: float | None  # the metric as its authors define it
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def not_computed(self) -> str | None:
        """Why the metric chose not to score this item (no value, and not a failure)."""
        reason = self.details.get(NOT_COMPUTED) if self.error is None else None
        return str(reason) if reason is not None else None


def too_long(label: str, words: int, max_words: int) -> ItemScore | None:
    """The long-text guard: a score "not computed" when a text has more than `max_words`.

    For metrics whose cost grows faster than the text (TER, ROUGE-L), so that one very long
    item cannot stall a battery; the limits are measured in resources/docs/input-rules.md.
    """
    if words <= max_words:
        return None
    reason = f"too long for {label}: {words:,} words (the limit is max_words={max_words})"
    return ItemScore(None, None, {NOT_COMPUTED: reason})


# What an unavailable metric lacks (Availability.needs): its weights, an optional extra
# (`pip install meaningbench[NAME]`), or an outside program named by an environment variable.
NEEDS_KINDS = ("weights", "extra", "environment")


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""
    needs: str = ""  # one of NEEDS_KINDS when not ok and the fix is known
    fix: str = ""  # the exact option, command or variable that makes it available

    def status(self) -> str:
        """`available`, `needs weights`, `needs an extra`, `needs environment` or `unavailable`."""
        if self.ok:
            return "available"
        return {
            "weights": "needs weights",
            "extra": "needs an extra",
            "environment": "needs environment",
        }.get(self.needs, "unavailable")


def not_defined(reason: str) -> ItemScore:
    """A score the metric's definition does not give for this item (FKGL of a text with no
    words): stored as "not computed" with the reason, never as a silent 0."""
    return ItemScore(None, None, {NOT_COMPUTED: f"not defined: {reason}"})


@dataclass(frozen=True)
class MetricInfo:
    name: str  # stable identifier used on the command line and in the study file
    label: str  # what tables and plots show
    family: str  # lexical | readability | neural | structural | trained
    description: str
    needs_references: bool = False  # uses references (falls back to the source)
    needs_model: bool = False
    value_range: tuple[float, float] = (0.0, 100.0)
    higher_is_better: bool = True
    # The public implementation or paper its scores follow (the tests' oracle), in words.
    reference: str = ""
    # The test that checks the scores against that reference or hand values: path::function.
    parity_test: str = ""


def option_choices(option_type: Any) -> tuple[Any, ...] | None:
    """The values a `Literal[...]` option type allows (through `X | None` too); None for a
    type that is not a closed set."""
    if get_origin(option_type) is Literal:
        return get_args(option_type)
    args = get_args(option_type)
    if args and type(None) in args:
        literal = [a for a in args if get_origin(a) is Literal]
        if literal:
            return (*get_args(literal[0]), None)
    return None


def option_type_text(option_type: Any) -> str:
    """An option type as the references print it: `"13a" | "intl" | "none"`, `bool`, `int`."""
    choices = option_choices(option_type)
    if choices is not None:
        return " | ".join("none" if c is None else f'"{c}"' for c in choices)
    if isinstance(option_type, type):
        return option_type.__name__
    return str(option_type).replace("typing.", "")


def resolve_references(source: str, references: Sequence[str], mode: str) -> tuple[str, ...]:
    """The references a reference-based metric compares against under a reference mode.

    In `references` mode an item without human references falls back to its source, as the
    MeaningBERT study scored every reference-based metric against the source.
    """
    if mode not in REFERENCE_MODES:
        raise ValueError(f"unknown reference mode {mode!r}; choose one of {REFERENCE_MODES}")
    refs = tuple(r for r in references if r and r.strip())
    if mode == "references" and refs:
        return refs
    return (source,)


def stable_hash(obj: Any, length: int = 16) -> str:
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:length]


def input_hash(source: str, output: str, references: Sequence[str] = ()) -> str:
    """A 32-hex-digit hash of exactly the texts a metric saw; a changed text makes it stale.

    The separator cannot occur in typed text, so ("a b", "c") and ("a", "b c") differ.
    """
    joined = "\x1f".join((source, output, *references))
    return hashlib.blake2b(joined.encode("utf-8"), digest_size=16).hexdigest()


def variant_input_hash(source: str, output: str, references: Sequence[str], extra: str) -> str:
    """The input hash of a score that also depends on study data (`Metric.extra_inputs`:
    SAMSA's scenes), folded in after a separator; without extra data, the plain hash."""
    if not extra:
        return input_hash(source, output, references)
    return input_hash(source, output, (*references, "\x1e", extra))


class Metric(ABC):
    """A configured metric. Subclasses set `info` and `defaults` and implement `score_batch`."""

    info: ClassVar[MetricInfo]
    defaults: ClassVar[dict[str, Any]] = {}
    # Bump when an implementation change alters scores, so cached scores become stale.
    implementation_version: ClassVar[int] = 1
    # Options that change how a metric runs but not what it computes: left out of the
    # config hash (a different batch size must not invalidate cached scores) and the label.
    runtime_options: ClassVar[frozenset[str]] = frozenset({"device", "batch_size"})
    # True for CPU-bound metrics without model state: the scoring job may then score large
    # runs in worker processes, rebuilding the metric there from its class and config.
    parallel_safe: ClassVar[bool] = False
    # True for metrics that sort and batch their inputs themselves (models): the scoring job
    # hands them large slices instead of small timed chunks, since a model's speed comes
    # from length-sorted batches, and follows their progress through `report_batch`.
    batches_itself: ClassVar[bool] = False
    # For such a metric that takes seconds per item (an LLM judge): the slice size instead,
    # since each slice is committed whole and Ctrl+C or a kill loses the one under way.
    slice_items: ClassVar[int | None] = None
    # Options added after scores existed: in the config hash only when they differ from
    # the default, so that scores computed before them stay cached.
    hashed_when_set: ClassVar[frozenset[str]] = frozenset()
    # The type of each option, where it says more than its default's: a `Literal[...]` for a
    # closed set of values (checked when the metric is configured, listed in the reference).
    # `reference_mode` is typed for every metric that has it (see `typed_options`).
    option_types: ClassVar[dict[str, Any]] = {}
    # True when `explain` can take an output apart from its texts alone, with no stored
    # score (lexical metrics): the compare view then offers it for every output.
    explains_live: ClassVar[bool] = False
    # What the metric reads of the study besides the texts (SAMSA's scenes, BLEU-SAMSA's
    # stored scores, BERTScore's references as idf corpus); None outside a study.
    study_inputs: StudyInputs | None = None
    # False for a metric that runs only when named (an LLM judge: seconds per item on a
    # CPU): `--metrics all` and the battery's "All available" leave it out, and the
    # battery's row says why (`not_in_all_why`).
    in_all: ClassVar[bool] = True
    not_in_all_why: ClassVar[str] = ""

    def __init__(self, **config: Any) -> None:
        unknown = set(config) - set(self.defaults)
        if unknown:
            raise ValueError(
                f"{self.info.name}: unknown option(s) {sorted(unknown)}; "
                f"known: {sorted(self.defaults)}"
            )
        self.config: dict[str, Any] = {**self.defaults, **config}
        for key, option_type in self.typed_options().items():
            choices = option_choices(option_type)
            if key in self.defaults and choices is not None and self.config[key] not in choices:
                shown = ", ".join(repr(c) for c in choices)
                raise ValueError(
                    f"{self.name}: {key} must be one of {shown}, not {self.config[key]!r}"
                )

    @classmethod
    def typed_options(cls) -> dict[str, Any]:
        """The type of every option that declares one, the common ones included."""
        common = {"reference_mode": ReferenceMode}
        return {k: v for k, v in {**common, **cls.option_types}.items() if k in cls.defaults}

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def reference_mode(self) -> str:
        return str(self.config.get("reference_mode", "source"))

    def score_config(self) -> dict[str, Any]:
        """The part of the config that can change a score (what the cache is keyed on)."""
        return {
            k: v
            for k, v in self.config.items()
            if k not in self.runtime_options
            and not (k in self.hashed_when_set and v == self.defaults.get(k))
        }

    def slice_size(self) -> int | None:
        """The slice the scoring job hands this metric (see `slice_items`); a metric whose
        options decide how many items it handles at once (a batch, requests in flight)
        says so here."""
        return self.slice_items

    def config_hash(self) -> str:
        return stable_hash(
            {
                "metric": self.name,
                "impl": self.implementation_version,
                "config": self.score_config(),
            }
        )

    def availability(self) -> Availability:
        return Availability(True)

    def versions(self) -> dict[str, str]:
        """Versions of the libraries that produce the scores, recorded with each run."""
        return {}

    def device(self) -> str | None:
        return None

    def model_id(self) -> str | None:
        return None

    def use_study(self, study: StudyInputs | None) -> None:
        """Read the study through `study` (the job that scores the metric hands it over; a
        metric never opens the study file itself)."""
        self.study_inputs = study

    def prepare(self, pairs: Sequence[Pair]) -> None:
        """See every pair of the study before scoring a part of it (e.g. an idf corpus).

        Called by the scoring job before the config is hashed, so what the metric learns
        here may enter its config hash.
        """
        return None

    def extra_inputs(self, pairs: Sequence[Pair]) -> list[str] | None:
        """Per pair, a fingerprint of study data other than the texts that the score depends
        on (SAMSA: the source's scenes); it is folded into the input hash, so changing that
        data makes the score stale. None: the texts are all."""
        return None

    def warm_up(self) -> None:
        """Load what scoring needs (libraries, dictionaries, models) ahead of the first item.

        The scoring job calls it before it forks worker processes, so that they start with
        it loaded instead of loading it each. Errors are left for scoring to report.
        """
        return None

    @abstractmethod
    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        """Score every pair; a pair that cannot be scored gets an ItemScore with `error`."""

    def corpus_score(self, pairs: Sequence[Pair]) -> float | None:
        """The metric's own corpus-level value for a set of pairs, when it has one."""
        return None

    def explain(self, item: ExplainItem) -> Explanation:
        """How this metric's score of one item came about (see `meaningbench.metrics.explain`).

        The default says there is nothing to show; a metric overrides it with one of the
        explanation kinds the compare view draws.
        """
        from meaningbench.metrics.explain import unexplained

        return unexplained(self.info.label, "its score is not built from parts one can show")
