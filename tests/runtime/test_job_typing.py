"""`Job[T]` ties what a job returns to whoever takes its result: mypy, run on code that uses
the real `JobRunner`, `in_child_process` and `run_with_progress_bar`, reports exactly the
lines whose handler or variable does not take the job's result, and no other line."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]

# Every line marked `# wrong` must be reported, and no other line.
USES = """
from pathlib import Path

from meaningbench.jobs.terminal import run_with_progress_bar
from meaningbench.ops.child_process import in_child_process
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote
from meaningbench.ui.workers import JobRunner


def count(ctx: JobContext) -> int:
    return 3


def report(ctx: JobContext, path: Path, *, rows: int = 0) -> Wrote[str]:
    return Wrote(f"{rows} rows to {path}", StudyChanges(settings=True))


def changed(ctx: JobContext) -> StudyChanges:
    return StudyChanges(settings=True)


def reporting(path: Path) -> Job[Wrote[str]]:
    return lambda ctx: report(ctx, path)


def takes_int(value: int) -> None: ...


def takes_text(value: str) -> None: ...


def takes_changes(value: StudyChanges) -> None: ...


def uses(runner: JobRunner, path: Path) -> None:
    runner.start(count, title="", on_result=takes_int)
    runner.start(count, title="", on_result=lambda n: print(n + 1))
    runner.start(count, title="")
    runner.start(count, title="", on_result=takes_text)  # wrong
    runner.start(count, title="", on_result=lambda n: print(n + "!"))  # wrong
    # A write's Wrote(value, changes) reaches its handler as the value.
    runner.start(reporting(path), title="", on_result=takes_text)
    runner.start(reporting(path), title="", on_result=takes_int)  # wrong
    runner.start(changed, title="", on_result=takes_changes)
    runner.start(changed, title="", on_result=takes_text)  # wrong
    # A child process's job returns what its target returns, and checks its arguments.
    runner.start(in_child_process(report, path, rows=2), title="", on_result=takes_text)
    runner.start(in_child_process(report, path), title="", on_result=takes_int)  # wrong
    runner.start(in_child_process(report, "not a path"), title="")  # wrong
    runner.start(in_child_process(report, path, rows="2"), title="")  # wrong
    said: str = runner.run_now(reporting(path))
    counted: int = runner.run_now(count)
    wrong: int = runner.run_now(reporting(path))  # wrong
    shown: int = run_with_progress_bar(count, description="")
    unwrapped: str = run_with_progress_bar(reporting(path), description="")  # wrong
    print(said, counted, wrong, shown, unwrapped)


def wrong_result() -> Job[str]:
    return count  # wrong
"""


def test_mypy_reports_exactly_the_results_taken_as_the_wrong_type(tmp_path: Path) -> None:
    source = tmp_path / "uses.py"
    source.write_text(textwrap.dedent(USES), encoding="utf-8")
    out, err, status = api.run(
        [
            "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(tmp_path / "cache"),
            "--follow-imports", "silent",
            "--no-error-summary",
            str(source),
        ]
    )  # fmt: skip
    assert status in (0, 1), err  # 2: mypy itself failed
    reported = {int(n) for n in re.findall(rf"^{re.escape(str(source))}:(\d+): error", out, re.M)}
    lines = source.read_text(encoding="utf-8").splitlines()
    marked = {i for i, line in enumerate(lines, 1) if line.endswith("# wrong")}
    assert len(marked) == 10
    assert reported == marked, out
