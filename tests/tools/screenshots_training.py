"""Screenshots of the training dialog during and after a short real training.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_training
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_training --bi-encoder

Imports the public CSMD ratings (train + dev, from ../shared/datasets, read in place) into a
study in a temporary data folder and fine-tunes the embedded MiniLM on them with the
default recipe, stopped after a few dozen steps and validated every few, then saves
real-window PNGs to resources/screenshots/: training-running.png while it trains,
training.png once the model card is in. With --bi-encoder it trains the Sentence-BERT kind
(CSMD's 0–100 means rescaled linearly to cosine targets) and saves training-bi-encoder.png.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from tests.tools.shot_output import ROOT, save

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

CSMD = ROOT.parent / "shared" / "datasets" / "csmd"
SIZE = (1360, 860)
MAX_STEPS = 60
EVAL_STEPS = 5
RUNNING_AT_STEP = 32
TIMEOUT_S = 1500


def wait(app, until, timeout_s: float) -> bool:  # noqa: ANN001
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        app.processEvents()
        if until():
            return True
        time.sleep(0.02)
    return False


def build_study(folder: Path) -> Path:
    from meaningbench.datasets.importer import import_file
    from meaningbench.db.study import create_study

    study = create_study(folder / "csmd.mbstudy")
    try:
        for part in ("train", "dev"):
            import_file(study, CSMD / f"{part}.tsv", dataset=f"csmd-{part}")
        from meaningbench.datasets.info import study_info

        print(f"  study: {study_info(study).items} items")
    finally:
        study.close()
    return folder / "csmd.mbstudy"


def main(bi_encoder: bool = False) -> int:
    from PySide6.QtWidgets import QApplication

    global CSMD
    with tempfile.TemporaryDirectory() as tmp:
        if not (CSMD / "train.tsv").is_file():  # a checkout beside no ../shared: the fixtures
            from tests.conftest import unpack_datasets

            CSMD = unpack_datasets(Path(tmp) / "datasets") / "csmd"
        os.environ["MEANINGBENCH_HOME"] = tmp
        app = QApplication(sys.argv)
        from meaningbench.ui.theme import ThemeManager

        ThemeManager(app).apply(choice="light")
        from meaningbench.db.study import open_study
        from meaningbench.ui.context import StudyContext
        from meaningbench.ui.training.dialog import TrainingDialog

        path = build_study(Path(tmp))
        context = StudyContext()
        context.runner.show_error_dialogs = False
        context.set_study(open_study(path))
        dialog = TrainingDialog(context)
        dialog.resize(*SIZE)
        dialog.show()
        form = dialog.form
        if bi_encoder:
            form.kind.setCurrentIndex(form.kind.findData("bi-encoder"))
        form.max_steps.setValue(MAX_STEPS)
        form.eval_steps.setValue(EVAL_STEPS)
        form.show_more(True)
        form.name.setText("csmd-minilm-sbert" if bi_encoder else "csmd-minilm")
        job = dialog.start()
        if job is None:
            print("the training did not start:", dialog.error_notice.text())
            return 1
        print("  training the embedded MiniLM on CSMD…")
        started = time.monotonic()
        running = wait(app, lambda: dialog.monitor.step >= RUNNING_AT_STEP, TIMEOUT_S)
        if running and dialog.running and not bi_encoder:
            dialog.refresh_view()
            dialog.curves.refresh(dialog.monitor)
            save(dialog, "training-running.png")
        if not wait(app, lambda: not dialog.running, TIMEOUT_S):
            print("the training did not finish in time")
            dialog.job.cancel()
            wait(app, lambda: not dialog.running, 120)
            return 1
        if dialog.trained is None:
            print("the training failed:", dialog.error_notice.text())
            return 1
        print(f"  trained in {time.monotonic() - started:.0f} s")
        form.show_more(False)
        save(dialog, "training-bi-encoder.png" if bi_encoder else "training.png")
        dialog.close()
        context.set_study(None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(bi_encoder="--bi-encoder" in sys.argv[1:]))
