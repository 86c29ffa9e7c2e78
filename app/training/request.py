"""What a training run is asked to do (`TrainRequest`) and what it hands back (`TrainResult`).

The request is a plain value object so the command line, the app's dialog and a resumed
run all describe a training the same way. Its "fingerprint" covers every field that changes
the trained weights; a resume refuses to continue a checkpoint written under another one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError

AUGMENTATIONS = ("identical", "unrelated", "swap")
DEFAULT_AUGMENT = AUGMENTATIONS
# What is trained: a MeaningBERT-style cross-encoder (the pair in, a 0–100 score out) or a
# Sentence-BERT bi-encoder (each text embedded alone, their cosine regressed on the rating).
CROSS_ENCODER = "cross-encoder"
BI_ENCODER = "bi-encoder"
KINDS = (CROSS_ENCODER, BI_ENCODER)
# A bi-encoder's cosine is symmetric and a text's cosine with itself is 1 by construction,
# so swapped and identical pairs teach it nothing; the Sentence-BERT recipe trains on the
# rated pairs alone.
DEFAULT_AUGMENT_BY_KIND = {CROSS_ENCODER: DEFAULT_AUGMENT, BI_ENCODER: ()}
# The shares of the training (and validation) examples that the identical and the unrelated
# pairs make up (`meaningbench.training.augment` says why one pair per source was too few).
# None: one identical and one unrelated pair per distinct source, the rule of models
# trained before the shares existed. The rated pairs keep at least MIN_RATED_SHARE.
DEFAULT_SANITY_SHARE = (0.6, 0.1)
MIN_RATED_SHARE = 0.1
# How a bi-encoder's label map reads a score between two of its rows (`--label-between`):
# it must be listed, or it is interpolated (`meaningbench.training.labels` says why).
BETWEEN_EXACT = "exact"
BETWEEN_LINEAR = "linear"
BETWEEN_MODES = (BETWEEN_EXACT, BETWEEN_LINEAR)
# Defaults chosen so that the whole CSMD (train + dev, ~950 pairs) trains on the embedded
# MiniLM on a 2-core laptop CPU within 20 minutes (before the sanity shares almost doubled
# the examples); see the training README section.
DEFAULT_EPOCHS = 2
DEFAULT_LR = 5e-5
DEFAULT_BATCH_SIZE = 16
DEFAULT_MAX_LENGTH = 512
DEVICES = ("auto", "cpu", "cuda", "mps")

# Fields that do not change what is learned: they may differ between a run and its resume.
_RUNTIME_FIELDS = frozenset(
    {"study", "out_dir", "device", "threads", "resume", "name", "register", "keep_checkpoints"}
)

REQUEST_FILE = "request.json"


@dataclass(frozen=True)
class TrainRequest:
    """Everything a training needs; defaults are the recipe the README documents."""

    study: Path
    out_dir: Path
    base_model: str | None = None  # None = the embedded MiniLM; else a local dir or hub id
    dimension: str = "meaning"
    # The aggregate label set that stands in for unrated items (None: the study's choice).
    labels: str | None = None
    # Train on per-annotator z-scores (item mean z), re-expressed on the study's 0–100 scale.
    z_scores: bool = False
    epochs: int = DEFAULT_EPOCHS
    learning_rate: float = DEFAULT_LR
    batch_size: int = DEFAULT_BATCH_SIZE
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    max_length: int = DEFAULT_MAX_LENGTH
    augment: tuple[str, ...] | None = None  # None: the kind's default (DEFAULT_AUGMENT_BY_KIND)
    sanity_share: tuple[float, float] | None = DEFAULT_SANITY_SHARE
    folds: int | None = None
    seeds: tuple[int, ...] = (0,)
    split_seed: int = 0
    val_fraction: float = 0.1
    test_fraction: float = 0.1
    # Validate every N optimizer steps as well as at each epoch's end (None: epochs only).
    eval_steps: int | None = None
    # Save a resumable checkpoint every N steps (and always at an epoch's end and on cancel).
    checkpoint_steps: int = 200
    # Stop a run after this many optimizer steps (tests, quick looks); None: all epochs.
    max_steps: int | None = None
    sanity_n: int | None = 200
    device: str = "auto"
    threads: int | None = None
    resume: bool = False
    name: str | None = None
    register: bool = True
    keep_checkpoints: bool = False
    kind: str = CROSS_ENCODER
    # Bi-encoder only: (score on the dimension's scale, cosine target in 0–1) rows; None
    # rescales the dimension's scale linearly to 0–1 (see `meaningbench.training.labels`).
    label_map: tuple[tuple[float, float], ...] | None = None
    # Bi-encoder only: how the table reads a score between two of its rows, "exact" (it
    # must be listed) or "linear" (interpolated); see `meaningbench.training.labels`.
    label_between: str = BETWEEN_EXACT

    def __post_init__(self) -> None:
        object.__setattr__(self, "study", Path(self.study))
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        augment = (
            DEFAULT_AUGMENT_BY_KIND.get(self.kind, ()) if self.augment is None else self.augment
        )
        object.__setattr__(self, "augment", tuple(augment))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        if self.sanity_share is not None:
            identical, unrelated = self.sanity_share
            object.__setattr__(self, "sanity_share", (float(identical), float(unrelated)))
        if self.label_map is not None:
            rows = tuple((float(a), float(b)) for a, b in self.label_map)
            object.__setattr__(self, "label_map", rows)

    def validate(self) -> None:
        """Raise UserError for a request that cannot be trained, before any work starts."""
        if self.kind not in KINDS:
            raise UserError(f"unknown model kind {self.kind!r}; choose {' or '.join(KINDS)}")
        if self.label_map is not None and self.kind != BI_ENCODER:
            raise UserError("--label-map is for --kind bi-encoder (a cross-encoder learns 0–100)")
        if self.label_map is not None and self.z_scores:
            raise UserError(
                "--label-map maps the rating scale's values; z-scores are not on that scale "
                "(leave out --z, or rescale linearly)"
            )
        self._validate_label_between()
        for _score, target in self.label_map or ():
            if not 0.0 <= target <= 1.0:
                raise UserError(f"label map: the target {target:g} is outside 0–1")
        unknown = [a for a in self.augment or () if a not in AUGMENTATIONS]
        if unknown:
            raise UserError(
                f"unknown augmentation {', '.join(unknown)}; choose from {', '.join(AUGMENTATIONS)}"
            )
        self._validate_sanity_share()
        if self.epochs < 1:
            raise UserError("--epochs must be at least 1")
        if self.batch_size < 1:
            raise UserError("--batch-size must be at least 1")
        if not self.learning_rate > 0:
            raise UserError("--lr must be positive")
        if self.max_length < 8:
            raise UserError("--max-length must be at least 8 tokens")
        if not self.seeds:
            raise UserError("give at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise UserError("the seeds must differ from each other")
        if self.folds is not None and self.folds < 2:
            raise UserError("--folds must be at least 2")
        if not 0 < self.val_fraction < 0.5 or (
            self.folds is None and not 0 < self.test_fraction < 0.5
        ):
            raise UserError("validation and test fractions must lie between 0 and 0.5")
        if not 0 <= self.warmup_ratio < 1:
            raise UserError("the warm-up ratio must lie in [0, 1)")
        if self.device not in DEVICES:
            raise UserError(f"unknown device {self.device!r}; choose from {', '.join(DEVICES)}")
        if self.max_steps is not None and self.max_steps < 1:
            raise UserError("--max-steps must be at least 1")
        if self.eval_steps is not None and self.eval_steps < 1:
            raise UserError("--eval-steps must be at least 1")
        if self.checkpoint_steps < 1:
            raise UserError("--checkpoint-steps must be at least 1")

    def _validate_sanity_share(self) -> None:
        if self.sanity_share is None:
            return
        identical, unrelated = self.sanity_share
        if not (0 <= identical < 1 and 0 <= unrelated < 1):
            raise UserError(
                f"--sanity-share {format_sanity_share(self.sanity_share)}: each share must lie "
                "in [0, 1)"
            )
        if identical + unrelated > 1 - MIN_RATED_SHARE + 1e-9:
            raise UserError(
                f"--sanity-share {format_sanity_share(self.sanity_share)}: the identical and "
                f"unrelated pairs may make up at most {1 - MIN_RATED_SHARE:g} of the examples "
                "together; the rated pairs are the rest"
            )

    def _validate_label_between(self) -> None:
        if self.label_between not in BETWEEN_MODES:
            raise UserError(
                f"unknown --label-between {self.label_between!r}; choose {' or '.join(BETWEEN_MODES)}"
            )
        if self.label_between != BETWEEN_EXACT and self.label_map is None:
            raise UserError(
                "--label-between reads a label map table between its rows; give --label-map "
                "SCORE=TARGET,… (linear rescaling has no rows to read between)"
            )

    def learning_config(self) -> dict[str, Any]:
        """The fields that decide the trained weights (the resume fingerprint)."""
        config = {
            f.name: _jsonable(getattr(self, f.name))
            for f in fields(self)
            if f.name not in _RUNTIME_FIELDS
        }
        # A cross-encoder's fingerprint stays what it was before bi-encoders existed, so
        # its checkpoints written then still resume.
        if self.kind == CROSS_ENCODER:
            config.pop("kind")
            config.pop("label_map")
        # An exact table is what every bi-encoder learned before the choice existed: leaving
        # the default out keeps their checkpoints' fingerprints, so they still resume.
        if config.get("label_between") == BETWEEN_EXACT:
            config.pop("label_between")
        # One pair per source is what every model learned before the share existed.
        if config.get("sanity_share") is None:
            config.pop("sanity_share")
        return config

    def to_json(self) -> dict[str, Any]:
        return {k: _jsonable(v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TrainRequest:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known}
        # A request saved before the share existed trained on one pair per source.
        values.setdefault("sanity_share", None)
        for key in ("augment", "seeds", "sanity_share"):
            if key in values and values[key] is not None:
                values[key] = tuple(values[key])
        if values.get("label_map") is not None:
            values["label_map"] = tuple(tuple(row) for row in values["label_map"])
        return cls(**values)

    def with_changes(self, **changes: Any) -> TrainRequest:
        return replace(self, **changes)


def format_sanity_share(shares: tuple[float, float] | None) -> str:
    """The shares as `--sanity-share` takes them: `0.6,0.1`, or `per-source`."""
    return "per-source" if shares is None else f"{shares[0]:g},{shares[1]:g}"


def parse_sanity_share(text: str) -> tuple[float, float] | None:
    """`--sanity-share IDENTICAL,UNRELATED` (e.g. 0.6,0.1), or `per-source` (None)."""
    if text.strip().lower() == "per-source":
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise UserError(
            f"--sanity-share {text!r}: give the identical and the unrelated share, such as "
            "0.6,0.1, or 'per-source'"
        ) from None


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def save_request(request: TrainRequest, checkpoints_dir: Path) -> None:
    checkpoints_dir.mkdir(parents=True, exist_ok=True)
    path = checkpoints_dir / REQUEST_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(request.to_json(), indent=2), encoding="utf-8")
    tmp.replace(path)


def load_request(out_dir: str | Path) -> TrainRequest:
    """The request a training in `out_dir` was started with (to resume it from a dialog)."""
    path = Path(out_dir) / "checkpoints" / REQUEST_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{out_dir}: no training to resume there (no {path.name})") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read the saved training request ({exc})") from exc
    return TrainRequest.from_json(raw)


@dataclass
class RunSummary:
    """One trained model of a training: a (fold, seed) pair."""

    name: str
    seed: int
    fold: int | None
    steps: int
    best_step: int
    best_val_loss: float
    elapsed_s: float
    test: dict[str, Any] = field(default_factory=dict)
    sanity: dict[str, Any] = field(default_factory=dict)
    curve: list[dict[str, Any]] = field(default_factory=list)
    split: dict[str, Any] = field(default_factory=dict)
    # The base encoder's figures on the same held-out items before training (bi-encoders:
    # its zero-shot cosine is a metric in its own right, the baseline the training must beat).
    test_before: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> RunSummary:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})


@dataclass(frozen=True)
class TrainResult:
    out_dir: Path
    model_dir: Path
    name: str
    registered: bool
    selected_run: str
    card: dict[str, Any]
    runs: list[RunSummary]

    @property
    def test(self) -> dict[str, Any]:
        return dict(self.card.get("test", {}))

    def to_json(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "model_dir": str(self.model_dir),
            "name": self.name,
            "registered": self.registered,
            "selected_run": self.selected_run,
            "kind": self.card.get("kind"),
            "metrics": self.card.get("metrics", []),
            "test": self.test,
            "test_before": self.card.get("test_before", {}),
            "sanity": self.card.get("sanity", {}),
            "runs": [r.to_json() for r in self.runs],
        }
