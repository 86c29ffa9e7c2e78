"""Real-window screenshot of the study settings' queue tab with a selection strategy chosen.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_selection
Writes resources/screenshots/settings-selection.png. Uses the demo study (its sentences
are written by this project), scored beforehand with a few lexical metrics.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tests.tools.screenshots import grab, wait

METRICS = ["bleu", "chrf", "sari", "meteor"]


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="mb-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    from meaningbench.datasets.demo import build_demo_study
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.runtime import JobContext

    study = build_demo_study(home / "demo.mbstudy")
    score_study(ScoreRequest(study_path=study, metrics=METRICS), JobContext())

    from PySide6.QtCore import QPoint, Qt

    from meaningbench.ui.dialogs.study_settings import StudySettingsDialog
    from meaningbench.ui.launch import create_application, start

    app = create_application()
    window = start([str(study)])
    window.resize(1300, 860)
    window.move(QPoint(40, 30))
    window.set_theme("light")
    wait(app, 30, lambda: window.context.study is not None)
    dialog = StudySettingsDialog(window.context, window)
    dialog.resize(900, 760)
    dialog.move(QPoint(240, 60))
    queues = dialog.sections["queues"]
    dialog.tabs.setCurrentWidget(queues)
    queues.selection.setCurrentIndex(queues.selection.findData("disagreement"))
    queues.selection_list.item(2).setCheckState(Qt.CheckState.Unchecked)
    dialog.show()
    grab(app, dialog, "settings-selection.png")
    dialog.reject()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
