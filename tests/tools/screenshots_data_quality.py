"""Screenshots of the dashboard's Data quality tab (the label audit) in the main window.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_data_quality [OUT_DIR]

Imports the public CSMD labels (train + dev) and the raw SimpDA 2022 and QuestEval ratings
they were averaged from (the copies shipped with the tests) into a study in a temporary
data folder, and gives it a new rater of its own who rated nine of the labelled pairs in
the app. Saves resources/screenshots/data-quality.png: the audit against the imported
files, the new rater left out. OUT_DIR (default: a temporary folder) gets
data-quality-with-rater.png, the audit with the new rater chosen under "Compare with".
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "resources" / "screenshots"
SIZE = (1520, 960)


def build(folder: Path) -> Path:
    from meaningbench.datasets.importer import import_file
    from meaningbench.db.study import create_study
    from tests.analysis.studybuild import add_ratings
    from tests.conftest import unpack_datasets

    data = unpack_datasets(folder / "datasets")
    study = create_study(folder / "csmd.mbstudy")
    try:
        for name in ("train", "dev"):
            import_file(study, data / "csmd" / f"{name}.tsv", dataset="csmd")
        import_file(study, data / "simpda2022" / "simpDA_2022.csv", dataset="simpda")
        questeval = data / "csmd_sources" / "questeval_likert_ratings_cleaned.csv"
        import_file(study, questeval, dataset="questeval")
        from sqlalchemy import text

        with study.session() as s:
            labelled = [
                int(r[0])
                for r in s.execute(
                    text(
                        "SELECT i.id FROM item i JOIN dataset d ON d.id = i.dataset_id "
                        "WHERE d.name = 'csmd' ORDER BY i.id LIMIT 9"
                    )
                )
            ]
        # A new rater of the study, rating in the app (origin "ui").
        add_ratings(study, "ana", {i: 95.0 - 5 * k for k, i in enumerate(labelled)})
    finally:
        study.close()
    return study.path


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-dq-"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = tmp
        path = build(Path(tmp))
        from PySide6.QtCore import QPoint

        from meaningbench.ui.launch import create_application, start
        from tests.tools.screenshots import wait

        app = create_application()
        window = start([str(path)])
        window.move(QPoint(0, 0))
        window.resize(*SIZE)
        window.set_theme("light")
        wait(app, 60, lambda: window.context.study is not None)
        window.show_page("dashboard")
        dashboard = window.page("dashboard")
        panel = dashboard.data_quality
        dashboard.tabs.setCurrentWidget(panel)
        wait(app, 300, lambda: panel.view is not None and panel.table.isVisible())
        wait(app, 1.0)
        target = OUT / "data-quality.png"
        window.grab().save(str(target), "PNG", 9)
        print(f"  {target.relative_to(ROOT)}  {target.stat().st_size // 1024} KB")
        panel.against.setCurrentIndex(1)
        panel.against.activated.emit(1)
        wait(app, 300, lambda: panel.view is not None and panel.view.result is not None
             and panel.view.result.chosen_raters)  # fmt: skip
        wait(app, 1.0)
        shot = out / "data-quality-with-rater.png"
        window.grab().save(str(shot), "PNG")
        print(f"  {shot}")
        window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
