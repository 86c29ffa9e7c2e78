"""Screenshots of the dashboard in the real main window.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_dashboard

Builds the demo study in a temporary folder, scores it with a few lexical metrics and
SBERT cosine through the scoring job, lets two more annotators rate their queues (hidden
control items included: one careful, one careless, so rater QC has a pass and a fail),
then saves resources/screenshots/dashboard.png (correlations), dashboard-sanity.png (the
sanity checks, run from the tab's button), dashboard-heatmap.png and
dashboard-agreement.png.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_dashboard which-metric

imports the QuestEval ratings shipped with the tests (its `simplification_type` column
becomes an item attribute), scores them with lexical metrics and saves the "Which metric"
tab as which-metric.png (light) and which-metric-dark.png.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_dashboard which-metric-wmt25

imports SimpDA 2022 (its raters' own ratings), scores it with lexical metrics and saves
the tab with the wmt25 preset chosen and its human rows as which-metric-wmt25.png (light)
and which-metric-wmt25-dark.png.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_dashboard which-metric-stability

imports CSMD dev (`--format csmd`), scores it with BLEU, SARI, chrF and BERTScore and
saves the tab with its stopping signal at 1280 × 720 as which-metric-stability.png (light)
and which-metric-stability-dark.png.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from tests.tools.shot_output import save

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SIZE = (1520, 960)
METRICS = ["bleu", "chrf", "ter", "rouge1", "rougel", "meteor", "sari", "edit_similarity"]
NEURAL = ["sbert_cosine"]


def build_study(folder: Path) -> Path:
    from meaningbench.datasets.demo import build_demo_study
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.runtime import JobContext

    path = build_demo_study(folder / "demo.mbstudy")
    request = ScoreRequest(path, METRICS + NEURAL, {"workers": 1, "pool": "never"})
    for summary in score_study(request, JobContext()):
        print(f"  {summary.metric}: {summary.status} ({summary.scored} items)")
    return path


def _rating_of(item_id: int, values: dict[int, float], rng: random.Random) -> float:
    return values.get(item_id, rng.uniform(20, 80))


def annotate(path: Path, name: str, *, careful: bool, seed: int) -> int:
    """Rate the annotator's whole queue like a careful or a careless rater would."""
    from sqlalchemy import select

    from meaningbench.annotation.session import AnnotationSession
    from meaningbench.db.models import Item, Rating
    from meaningbench.db.study import open_study

    rng = random.Random(seed)
    with open_study(path) as study:
        with study.session() as s:
            mean: dict[int, list[float]] = {}
            for item_id, value in s.execute(select(Rating.item_id, Rating.value)):
                mean.setdefault(int(item_id), []).append(float(value))
        truth = {k: sum(v) / len(v) for k, v in mean.items()}
        session = AnnotationSession(study, name)
        given: dict[int, float] = {}
        shown = session.next_item()
        count = 0
        clock = datetime(2026, 11, 20, 9, 0)
        while shown is not None:
            with study.session() as s:
                item = s.get(Item, shown.item_id)
                assert item is not None
                kind, parent = item.kind, item.parent_id
            base = given.get(parent or -1, _rating_of(parent or shown.item_id, truth, rng))
            if not careful:
                value = rng.uniform(35, 75)
                spent = rng.uniform(900, 2600)
            elif kind == "control-identical":
                value, spent = rng.uniform(93, 100), rng.uniform(3000, 7000)
            elif kind == "control-unrelated":
                value, spent = rng.uniform(0, 6), rng.uniform(2500, 5000)
            elif kind == "control-degraded":
                value, spent = max(0.0, base - rng.uniform(25, 45)), rng.uniform(6000, 12000)
            elif kind == "control-repeat":
                value, spent = base + rng.uniform(-5, 5), rng.uniform(4000, 9000)
            else:
                value = _rating_of(shown.item_id, truth, rng) + rng.gauss(0, 7)
                spent = rng.uniform(5000, 16000)
            value = float(min(100.0, max(0.0, round(value))))
            given[shown.item_id] = value
            end = clock + timedelta(milliseconds=spent)
            session.submit(shown.item_id, {"meaning": value}, shown_at=clock, submitted_at=end)
            clock = end + timedelta(seconds=1)
            count += 1
            shown = session.next_item()
    return count


def settle(app, done, timeout: float = 180.0) -> None:  # noqa: ANN001
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        app.processEvents()
        if done():
            break
        time.sleep(0.02)
    for _ in range(10):
        app.processEvents()
        time.sleep(0.02)


def open_dashboard(app, path: Path, size: tuple[int, int] = SIZE):  # noqa: ANN001, ANN201
    """The main window, light theme, on the study's Dashboard page."""
    from meaningbench.settings import UserPrefs
    from meaningbench.ui.main_window import MainWindow
    from meaningbench.ui.theme import ThemeManager

    theme = ThemeManager(app)
    theme.apply(choice="light")
    window = MainWindow(theme=theme, prefs=UserPrefs())
    window.resize(*size)
    window.show()
    assert window.studies.open_path(path)
    assert window.show_page("dashboard")
    return window


def main() -> int:
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = str(Path(tmp) / "home")
        path = build_study(Path(tmp))
        print(f"  careful rater: {annotate(path, 'careful-rater', careful=True, seed=1)} ratings")
        print(f"  careless rater: {annotate(path, 'hasty-rater', careful=False, seed=2)} ratings")

        app = QApplication(sys.argv)
        window = open_dashboard(app, path)
        page = window.page("dashboard")
        c = page.controller
        settle(app, lambda: c.boot is not None and c.qc is not None and not c.busy)
        tab = page.correlations
        tab.statistic.setCurrentIndex(tab.statistic.findData("pearson"))
        tab.metric_combo.setCurrentIndex(tab.metric_combo.findData("sbert_cosine"))
        settle(app, lambda: not c.busy)
        save(window, "dashboard.png")

        page.tabs.setCurrentWidget(page.heat_panel)
        save(window, "dashboard-heatmap.png")
        page.tabs.setCurrentWidget(page.quality)
        save(window, "dashboard-agreement.png")

        page.tabs.setCurrentWidget(page.sanity)
        page.sanity.count.setValue(100)
        page.sanity.run()
        settle(app, lambda: page.sanity.handle is None, timeout=600)
        save(window, "dashboard-sanity.png")
        window.close()
    return 0


WHICH_METRIC_METRICS = ["bleu", "chrf", "ter", "rouge1", "rougel", "sari", "edit_similarity"]


def build_scored_study(
    folder: Path, file: str, name: str, metrics: list[str], fmt: str = "auto"
) -> Path:
    """A study of one file of the shipped test data (`file` under it), scored."""
    from meaningbench.datasets.importer import import_file
    from meaningbench.db.study import create_study
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.runtime import JobContext
    from tests.conftest import unpack_datasets

    data = unpack_datasets(folder / "data")
    path = folder / f"{name}.mbstudy"
    with create_study(path) as study:
        import_file(study, data / file, fmt=fmt, dataset=name)
    request = ScoreRequest(path, metrics, {"workers": 1, "pool": "never"})
    for summary in score_study(request, JobContext()):
        print(f"  {summary.metric}: {summary.status} ({summary.scored} items)")
    return path


def build_questeval_study(folder: Path) -> Path:
    questeval = "csmd_sources/questeval_likert_ratings_cleaned.csv"
    return build_scored_study(folder, questeval, "questeval", WHICH_METRIC_METRICS)


def save_light_and_dark(app, window, stem: str) -> None:  # noqa: ANN001
    """`stem`.png in the light theme and `stem`-dark.png in the dark one."""
    save(window, f"{stem}.png")
    window.set_theme("dark")
    settle(app, lambda: True, timeout=1)
    save(window, f"{stem}-dark.png")
    window.set_theme("light")


def which_metric_main() -> int:
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = str(Path(tmp) / "home")
        path = build_questeval_study(Path(tmp))
        app = QApplication(sys.argv)
        window = open_dashboard(app, path)
        page = window.page("dashboard")
        tab = page.which_metric
        page.tabs.setCurrentWidget(tab)

        def shown() -> bool:
            r = tab.result
            settled = tab.stability is not None and tab.stability_job is None
            return r is not None and r.by is not None and not tab.computing and settled

        settle(app, shown, timeout=600)
        save_light_and_dark(app, window, "which-metric")
        window.close()
    return 0


def which_metric_wmt25_main() -> int:
    """The tab with the wmt25 preset chosen: acc*_eq per source, the pairwise test, and
    the human rows of the study's raters (each against the others, the one-rater row)."""
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = str(Path(tmp) / "home")
        simpda = "simpda2022/simpDA_2022.csv"  # its raters' own ratings: human rows
        path = build_scored_study(Path(tmp), simpda, "simpda", WHICH_METRIC_METRICS)
        app = QApplication(sys.argv)
        window = open_dashboard(app, path)
        page = window.page("dashboard")
        tab = page.which_metric
        page.tabs.setCurrentWidget(tab)
        settle(app, lambda: tab.result is not None and not tab.computing, timeout=600)
        tab.preset.setCurrentIndex(tab.preset.findData("wmt25"))

        def shown() -> bool:
            r = tab.result
            settled = tab.stability is not None and tab.stability_job is None
            return r is not None and r.options.preset == "wmt25" and not tab.computing and settled

        settle(app, shown, timeout=600)
        humans = tab.result.humans
        if humans is not None:
            print(
                f"  human rows: {[(h.label, h.value) for h in humans.rows]} {humans.reason or ''}"
            )
        save_light_and_dark(app, window, "which-metric-wmt25")
        window.close()
    return 0


STABILITY_METRICS = ["bleu", "sari", "chrf", "bertscore"]


def which_metric_stability_main() -> int:
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = str(Path(tmp) / "home")
        path = build_scored_study(Path(tmp), "csmd/dev.tsv", "csmd-dev", STABILITY_METRICS, "csmd")
        app = QApplication(sys.argv)
        window = open_dashboard(app, path, (1280, 720))
        page = window.page("dashboard")
        tab = page.which_metric
        page.tabs.setCurrentWidget(tab)

        def shown() -> bool:
            return tab.stability is not None and tab.stability_job is None and not tab.computing

        settle(app, shown, timeout=600)
        print(f"  {tab.stability_view.sentence.text()}")
        print(f"  {tab.stability_view.trend.text()}")
        save_light_and_dark(app, window, "which-metric-stability")
        window.close()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["which-metric"]:
        raise SystemExit(which_metric_main())
    if sys.argv[1:] == ["which-metric-wmt25"]:
        raise SystemExit(which_metric_wmt25_main())
    if sys.argv[1:] == ["which-metric-stability"]:
        raise SystemExit(which_metric_stability_main())
    raise SystemExit(main())
