"""Screenshots of the comparison view, the BERTScore matching, SARI and SAMSA views.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_compare

Builds a small study in a temporary folder (two sources, several systems, three raters,
UCCA scenes for one source and hand-drawn scenes for the other), scores it with the metrics
of the battery that are installed, and saves real-window PNGs to resources/screenshots/.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.tools.shot_output import ROOT, save

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

UCCA = ROOT / "tests" / "metrics" / "structural" / "data" / "storm.xml"
SIZE = (1520, 960)


def build_study(folder: Path):
    from meaningbench.core.keys import source_group_key
    from meaningbench.db.study import create_study
    from meaningbench.jobs.scene_import import import_ucca
    from meaningbench.jobs.scene_store import replace_scenes
    from meaningbench.metrics.registry import metric_classes
    from meaningbench.metrics.structural.scenes import Participant, SceneSpec
    from meaningbench.metrics.structural.tokens import words
    from tests.ui.compare import studies as demo_data

    study = create_study(folder / "compare-demo.mbstudy")
    demo = demo_data.DemoStudy(study)
    demo_data.add_source(
        demo,
        demo_data.STORM,
        demo_data.STORM_OUTPUTS,
        demo_data.STORM_RATINGS,
        demo_data.STORM_REFS,
    )
    demo_data.add_source(
        demo, demo_data.COMMITTEE, demo_data.COMMITTEE_OUTPUTS, demo_data.COMMITTEE_RATINGS
    )
    with study.session() as s:
        import_ucca(s, [UCCA])
        t = tuple(words(demo_data.COMMITTEE))
        # met(committee); approved(committee, budget); objections(from several members)
        scenes = [
            SceneSpec(t, (4,), (Participant((0, 1), (1,), remote=True),)),
            SceneSpec(t, (8,), (Participant((0, 1), (1,)), Participant((9, 10, 11), (11,)))),
            SceneSpec(t, (14,), (Participant((15, 16, 17), (17,)),)),
        ]
        assert (t[4], t[8], t[14], t[17]) == ("met", "approved", "objections", "members")
        replace_scenes(s, source_group_key(demo_data.COMMITTEE), scenes, origin="manual")

    classes = metric_classes()
    pairs = demo.pairs(refs=True)
    wanted = [
        ("bleu", {"reference_mode": "references"}),
        ("sari", {"reference_mode": "references"}),
        ("bertscore", {"reference_mode": "source"}),
        ("sbert_cosine", {}),
        ("samsa", {"study": str(study.path)}),
        ("samsa_abl", {"study": str(study.path)}),
    ]
    for name, config in wanted:
        if name not in classes:
            print(f"  ({name} is not in this build: skipped)")
            continue
        cls = classes[name]
        metric = cls(**{k: v for k, v in config.items() if k in cls.defaults})
        if not metric.availability().ok:
            print(f"  ({name}: {metric.availability().reason})")
            continue
        mode = metric.config.get("reference_mode", "source")
        use = [
            p
            if mode == "references"
            else p.__class__(p.item_id, p.source, p.output, (p.source,), p.system)
            for p in pairs
        ]
        scores = metric.score_batch(use)
        demo_data.store_scores(study, metric, use, scores)
        print(f"  scored {name}")
    return study, demo


def main() -> int:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication(sys.argv)
    from meaningbench.ui.theme import ThemeManager

    ThemeManager(app).apply(choice="light")
    from meaningbench.ui.compare import CompareView
    from meaningbench.ui.compare.page import TAB_EXPLAIN, TAB_SCENES
    from tests.ui.compare import studies as demo_data

    with tempfile.TemporaryDirectory() as tmp:
        study, demo = build_study(Path(tmp))
        window = QMainWindow()
        window.setWindowTitle("Compare — MeaningBench")
        view = CompareView(study)
        window.setCentralWidget(view)
        window.resize(*SIZE)
        window.show()
        QTest.qWaitForWindowExposed(window)

        view.show_item(demo.items[(demo_data.STORM, "Paraphraser")])
        mean_column = next(i for i, c in enumerate(view.model.columns) if c.key == "mean")
        view.table.sortByColumn(mean_column, Qt.SortOrder.DescendingOrder)
        view.tabs.setCurrentIndex(0)
        save(window, "compare.png")

        explain = view.explain
        view.tabs.setCurrentIndex(TAB_EXPLAIN)
        explain.choose("bertscore[refs=source]")
        matching = explain.matching
        if matching.alignment is not None:
            box = matching.box("cand", 5 if len(matching.boxes) > 12 else 1).rect
            QTest.mouseMove(matching, QPoint(int(box.center().x()), int(box.center().y())))
            save(window, "matching.png")
            QTest.mouseMove(matching, QPoint(2, 2))
            save(window, "matching-all.png")
            # On a 1024-px screen the sentence is wider than the view: it scrolls (bar and
            # wheel), shown at its end. Looked at, not in the docs: written to a temp folder.
            window.resize(1024, 640)
            scroll = explain.matching_scroll
            for _ in range(5):
                QApplication.processEvents()
            scroll.horizontalScrollBar().setValue(scroll.horizontalScrollBar().maximum())
            narrow = Path(tempfile.mkdtemp(prefix="mb-matching-")) / "matching-1024.png"
            for _ in range(5):
                QApplication.processEvents()
            window.grab().save(str(narrow), "PNG")
            print(f"  {narrow}")
            window.resize(*SIZE)
        else:
            print("  (no BERTScore scores: matching screenshots skipped)")

        view.select_item(demo.items[(demo_data.STORM, "Paraphraser")])
        explain.choose("sari[refs=references]")
        save(window, "sari.png")

        explain.choose("bleu[refs=references]")
        save(window, "ngrams.png")

        view.show_item(demo.items[(demo_data.STORM, "Splitter")])
        explain.choose("samsa")
        save(window, "samsa.png")

        view.show_item(demo.items[(demo_data.COMMITTEE, "Truncator")])
        view.tabs.setCurrentIndex(TAB_SCENES)
        editor = view.scene_editor
        editor.scene_list.setCurrentRow(1)
        editor.part_list.setCurrentRow(1)
        save(window, "samsa-scenes.png")
        window.close()
        study.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
