"""A screenshot of the Run metrics dialog saying which backend runs each encoder, the models
registered in the study included.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_battery_backends

Builds the demo study in a temporary data folder and registers two tiny sentence encoders
in it, built from a config (random weights, the embedded MiniLM's tokenizer; no download):
`my-encoder`, a BERT, which ONNX Runtime runs, and `albert-encoder`, an ALBERT, a model type
the ONNX export does not take, which torch runs. Saves
resources/screenshots/battery-backends.png: the dialog scrolled to the registered models,
with the ALBERT row's tooltip (why torch) open.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tests.tools.screenshots import OUT_DIR, open_browser, wait

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SIZE = (1360, 860)
DIALOG_SIZE = (900, 760)


def study_with_encoders(home: Path) -> Path:
    from meaningbench.datasets.demo import build_demo_study
    from meaningbench.db.study import open_study
    from meaningbench.training.register import register_model
    from tests.ui.tiny_models import save_tiny_albert, save_tiny_bert

    path = build_demo_study(home / "demo.mbstudy")
    bert = save_tiny_bert(home / "models" / "my-encoder")
    albert = save_tiny_albert(home / "models" / "albert-encoder")
    study = open_study(path)
    with study.session(write=True) as s:
        register_model(s, name="my-encoder", path=bert, card={}, metric="sbert_cosine")
        register_model(s, name="albert-encoder", path=albert, card={}, metric="sbert_cosine")
    study.close()
    return path


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="mb-backend-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    study = study_with_encoders(home)

    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QToolTip

    app, window = open_browser(study, SIZE, detail_width=400)
    dialog = window.show_battery_dialog()
    dialog.resize(*DIALOG_SIZE)
    wait(app, 300, lambda: bool(dialog.metrics))
    items = {i.data(0, Qt.ItemDataRole.UserRole + 1): i for i in dialog._metric_items()}
    for name, item in sorted(items.items()):
        print(f"  {name}: {item.text(2)}")
    albert = items["sbert_cosine@albert-encoder"]
    dialog.tree.scrollToItem(items["bertscore@albert-encoder"])
    dialog.tree.scrollToItem(items["sbert_cosine"])
    dialog.tree.scrollToItem(items["sbert_cosine@my-encoder"])
    wait(app, 0.6)
    # Just under the row (Qt puts a tooltip about a cursor's height below the point given),
    # from the first column, so the whole line fits inside the dialog's picture.
    rect = dialog.tree.visualItemRect(albert)
    at = dialog.tree.viewport().mapToGlobal(rect.topLeft()) + QPoint(40, 0)
    QToolTip.showText(at, albert.toolTip(2), dialog.tree.viewport())
    wait(app, 0.8)
    geo = dialog.frameGeometry()
    shot = OUT_DIR / "battery-backends.png"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    app.primaryScreen().grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height()).save(
        str(shot), "PNG"
    )
    print(f"wrote {shot} ({shot.stat().st_size // 1024} KB)")
    dialog.close()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
