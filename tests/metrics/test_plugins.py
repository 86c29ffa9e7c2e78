"""Metric plugins: a separate distribution declaring a `meaningbench.metrics` entry point is
listed by `meaningbench metrics` with the package it comes from and scored by
`meaningbench score`; a broken one is reported by name, module and error while the rest of
the battery works.

The plugin is the complete example of resources/docs/plugins.md, built as a real
distribution from the page's own pyproject.toml and module, and installed by pip (no index,
no dependencies) into a folder the commands find on their PYTHONPATH. The commands run as
separate processes, as a user would run them.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "resources" / "docs" / "plugins.md"

# A second module of the same package whose import fails, declared beside the example's.
BROKEN_MODULE = """raise ImportError("this plugin needs the package 'nonexistent-lab-lib'")\n"""
BROKEN_ENTRY_POINT = 'lab_broken = "mblab_metrics.broken:Metric"\n'
# And one whose import ends the program, as a script-like module would.
EXITING_MODULE = "import sys\n\nsys.exit(7)\n"
EXITING_ENTRY_POINT = 'lab_exits = "mblab_metrics.exits:Metric"\n'


def _example(language: str) -> str:
    """The documentation's example file written in a ```language block (the only one)."""
    (block,) = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return block


ITEMS = (
    "source,output,system\n"
    "The old bridge was closed for repairs.,The bridge was closed.,a\n"
    "Rain fell all day in the valley.,It rained all day.,a\n"
)


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the installed plugin distribution (its code and .dist-info)."""
    root = tmp_path_factory.mktemp("plugin")
    project = root / "project"
    package = project / "mblab_metrics"
    package.mkdir(parents=True)
    # The example's `dependencies = ["meaningbench"]` is installed already: --no-deps.
    pyproject = _example("toml").replace(
        'kept_words = "mblab_metrics.kept:KeptWordsMetric"\n',
        'kept_words = "mblab_metrics.kept:KeptWordsMetric"\n'
        + BROKEN_ENTRY_POINT
        + EXITING_ENTRY_POINT,
    )
    assert BROKEN_ENTRY_POINT in pyproject
    (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "kept.py").write_text(_example("python"), encoding="utf-8")
    (package / "broken.py").write_text(BROKEN_MODULE, encoding="utf-8")
    (package / "exits.py").write_text(EXITING_MODULE, encoding="utf-8")
    site = root / "site"
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
            "--no-build-isolation", "--target", str(site), str(project),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    assert (site / "mblab_metrics-0.3.1.dist-info" / "entry_points.txt").is_file()
    return site


def _command(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_an_installed_plugin_is_listed_with_its_package_and_a_broken_one_is_reported(
    plugin_site: Path,
) -> None:
    done = _command(plugin_site, "metrics", "--json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    by_name = {m["name"]: m for m in listing["metrics"]}
    plugin = by_name["kept_words"]
    assert plugin["package"] == "mblab-metrics"
    assert plugin["origin"] == "mblab-metrics 0.3.1 (mblab_metrics.kept:KeptWordsMetric)"
    assert plugin["available"] and plugin["options"] == {"case": "fold"}
    # the battery is still all there, from the project itself
    assert by_name["bleu"]["package"] == "meaningbench"
    assert by_name["sari"]["origin"].startswith("meaningbench ")
    broken, exits = listing["broken_plugins"]
    assert exits["name"] == "lab_exits" and exits["module"] == "mblab_metrics.exits:Metric"
    assert exits["package"] == "mblab-metrics"
    assert exits["error"] == "SystemExit: its module called sys.exit(7) while loading"
    assert broken["name"] == "lab_broken"
    assert broken["module"] == "mblab_metrics.broken:Metric"
    assert broken["package"] == "mblab-metrics"
    assert "nonexistent-lab-lib" in broken["error"] and "ImportError" in broken["error"]

    text = _command(plugin_site, "metrics")
    assert text.returncode == 0, text.stderr
    rows = {line.split()[0]: line for line in text.stdout.splitlines()[1:]}
    assert "mblab-metrics" in rows["kept_words"] and "available" in rows["kept_words"]
    assert "sari" in rows  # the others work
    assert (
        "mblab-metrics  unavailable: the plugin failed to load (mblab_metrics.broken:Metric): "
        "ImportError: this plugin needs the package 'nonexistent-lab-lib'"
    ) in rows["lab_broken"]


def test_meaningbench_score_runs_the_plugin(plugin_site: Path, tmp_path: Path) -> None:
    data = tmp_path / "items.csv"
    data.write_text(ITEMS, encoding="utf-8")
    study = tmp_path / "s.mbstudy"
    done = _command(plugin_site, "import", str(study), str(data))
    assert done.returncode == 0, done.stderr
    done = _command(
        plugin_site, "score", str(study), "--metrics", "kept_words,kept_words[case=keep]", "--json"
    )
    assert done.returncode == 0, done.stderr
    runs = {r["label"]: r for r in json.loads(done.stdout)["runs"]}
    assert set(runs) == {"kept_words", "kept_words[case=keep]"}
    assert all(r["scored"] == 2 for r in runs.values())
    with sqlite3.connect(study) as db:
        stored = dict(
            db.execute(
                "SELECT i.output, s.value FROM score s JOIN metric_run m ON m.id = s.run_id "
                "JOIN item i ON i.id = s.item_id WHERE m.label = 'kept_words'"
            ).fetchall()
        )
    # "the", "bridge", "was" of the source's 7 words ("closed." is not "closed"), and "all"
    assert stored["The bridge was closed."] == pytest.approx(100 * 3 / 7)
    assert stored["It rained all day."] == pytest.approx(100 * 1 / 7)

    refused = _command(plugin_site, "score", str(study), "--metrics", "kept_words[case=upper]")
    assert refused.returncode != 0
    assert "case must be one of 'fold', 'keep', not 'upper'" in refused.stderr

    broken = _command(plugin_site, "score", str(study), "--metrics", "lab_broken")
    assert broken.returncode != 0
    assert "installed but broken" in broken.stderr and "nonexistent-lab-lib" in broken.stderr

    exits = _command(plugin_site, "score", str(study), "--metrics", "lab_exits")
    assert exits.returncode == 2, exits.stderr
    assert (
        "the metric 'lab_exits' is installed but broken: lab_exits from mblab-metrics "
        "(mblab_metrics.exits:Metric): SystemExit: its module called sys.exit(7) while loading"
    ) in exits.stderr

    # `all` scores every metric that loads, and says which plugins did not.
    # (Exit 1: metrics whose models would be downloaded cannot run offline.)
    every = _command(plugin_site, "score", str(study), "--metrics", "all", "--json")
    assert every.returncode in (0, 1), every.stderr
    status = {r["label"]: r["status"] for r in json.loads(every.stdout)["runs"]}
    assert status["fkgl"] == "done" and status["kept_words"] == "cached"
    assert "lab_exits" not in status
    assert (
        "plugin metric lab_exits from mblab-metrics (mblab_metrics.exits:Metric) did not "
        "load: SystemExit: its module called sys.exit(7) while loading; scoring the others"
    ) in every.stderr
