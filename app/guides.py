"""The user guides in resources/docs: which exist, in what order, with what titles.

The app's Help ▸ User guide and the README list the same guides; a test keeps them equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from meaningbench.settings import resources_dir

# Reading order: the README's documentation table follows it.
GUIDE_ORDER = (
    "install.md",
    "data.md",
    "ratings.md",
    "audit.md",
    "input-rules.md",
    "rating.md",
    "app.md",
    "scoring.md",
    "cluster.md",
    "neural.md",
    "compare.md",
    "analysis.md",
    "dashboard.md",
    "training.md",
    "figures.md",
    "cli-reference.md",
    "metric-reference.md",
    "plugins.md",
    "development.md",
)


@dataclass(frozen=True)
class Guide:
    title: str
    path: Path


def docs_dir() -> Path:
    return resources_dir() / "docs"


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").capitalize()


def guides() -> list[Guide]:
    """Every guide on disk: the ordered ones first, then any other, by name."""
    folder = docs_dir()
    present = {p.name: p for p in folder.glob("*.md")}
    names = [n for n in GUIDE_ORDER if n in present]
    names += sorted(n for n in present if n not in GUIDE_ORDER)
    return [Guide(_title(present[n]), present[n]) for n in names]
