"""Drives a rating screen in its own process, for the kill -9 durability test.

    python -m tests.ui.annotation.durable_driver STUDY N

Rates N items through the keyboard (a digit, then Enter), printing "submitted ITEM_ID"
after each commit, then "done", then waits to be killed.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(study_path: str, n: int) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from meaningbench.db.study import open_study
    from meaningbench.ui.annotation.screen import AnnotationScreen

    app = QApplication(sys.argv[:1])
    study = open_study(study_path)
    screen = AnnotationScreen(study, "durable")
    screen.submitted.connect(lambda item_id: print(f"submitted {item_id}", flush=True))
    screen.show()
    app.processEvents()
    for i in range(n):
        target = QApplication.focusWidget() or screen
        QTest.keyClicks(target, str(1 + i % 9))
        QTest.keyClick(QApplication.focusWidget() or screen, Qt.Key.Key_Return)
        app.processEvents()
    print("done", flush=True)
    time.sleep(600)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], int(sys.argv[2])))
