"""Where the screenshot programs write their pictures, and how they save a widget's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "resources" / "screenshots"


def save(widget: Any, name: str) -> Path:
    """`widget` as drawn now, once pending events are handled, as OUT/`name` (PNG)."""
    from PySide6.QtWidgets import QApplication

    for _ in range(5):
        QApplication.processEvents()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    widget.grab().save(str(path), "PNG", 9)
    print(f"  {path.relative_to(ROOT)}  {path.stat().st_size // 1024} KB")
    return path
