"""Helpers shared by the subcommands: study arguments, JSON output."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from meaningbench.core.json_values import clean_json
from meaningbench.errors import StudyNotFoundError

if TYPE_CHECKING:
    from meaningbench.db.study import Study
    from meaningbench.runtime import Job
    from meaningbench.runtime.changes import Wrote

T = TypeVar("T")


def add_command(
    subparsers: Any,
    name: str,
    run: Callable[[argparse.Namespace], Any],
    *,
    study: bool = True,
    **options: Any,
) -> argparse.ArgumentParser:
    """A subcommand's parser, `run` being what it does; with `study`, STUDY is its first
    argument. `options` go to argparse (help, description, epilog, formatter_class)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(name, **options)
    if study:
        add_study_argument(parser)
    parser.set_defaults(func=run)
    return parser


def add_study_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", type=Path, help="the study file (.mbstudy)")


def add_dimension_argument(parser: argparse.ArgumentParser) -> None:
    """The human rating dimension an analysis reads; "meaning" is what the study is about."""
    parser.add_argument("--dimension", default="meaning", help="human dimension (default: meaning)")


def add_labels_argument(parser: argparse.ArgumentParser) -> None:
    """Which aggregate label set stands in for unrated items (see `meaningbench.analysis.label_sets`)."""
    parser.add_argument(
        "--labels",
        default=None,
        metavar="SET",
        help="the aggregate label set to use (default: the study's chosen set, else the "
        "published labels); `meaningbench audit --fix` makes corrected sets",
    )


def number_option(text: str) -> float:
    """argparse `type` of every option that takes a number with a fraction: plain ASCII
    decimal, finite (`meaningbench.core.numbers`); argparse names the option in its message."""
    from meaningbench.core.numbers import NumberProblem, plain_number

    try:
        return plain_number(text)
    except NumberProblem as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def whole_number_option(text: str) -> int:
    """argparse `type` of every option that takes a count or a seed: ASCII digits with an
    optional sign (`meaningbench.core.numbers`); Python's int() also takes "1_000" and "１０"."""
    from meaningbench.core.numbers import NumberProblem, plain_whole_number

    try:
        return plain_whole_number(text)
    except NumberProblem as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def plain_number_options(parser: argparse.ArgumentParser) -> None:
    """Give every `type=int` or `type=float` option of `parser` and its subcommands the one
    number rule, so that no command can take `nan`, `inf`, `5_0` or `１０`."""
    for action in parser._actions:
        if action.type is int:
            action.type = whole_number_option
        elif action.type is float:
            action.type = number_option
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                plain_number_options(sub)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def open_existing_study(path: Path, *, reading: bool = False) -> Study:
    """Open a study that must already exist (only `import` creates one).

    `reading`: the command only reads, so a study it may not write (read-only file, folder
    or medium) is opened for reading only, with a note on stderr; writing commands are
    refused on such a study with a message saying it is read-only.
    """
    # Imported here: SQLAlchemy is not needed to print --help or to start the GUI.
    from meaningbench.db.study import open_study

    if not path.exists():
        raise StudyNotFoundError(
            f"{path}: no such study (create one with `meaningbench import {path} FILE`)"
        )
    study = open_study(path, allow_read_only=reading)
    if study.read_only:
        print(
            f"note: {path} is read-only ({study.read_only_reason}); opened for reading only",
            file=sys.stderr,
        )
    return study


def run_op(job: Job[T]) -> T:
    """Run the job of an op (meaningbench.ops), the screens' own write, here to its end.

    The first Ctrl+C sets its cancel token, as for every job of a command
    (meaningbench.interrupts); what the op logs for a screen's status bar goes nowhere."""
    from meaningbench.interrupts import cancelling
    from meaningbench.runtime import JobContext

    ctx = JobContext()
    with cancelling(ctx.cancel):
        return job(ctx)


def written(job: Job[Wrote[T]]) -> T:
    """What an op's write returns for its screen (a report, the kits made), run by `run_op`."""
    return run_op(job).value


@contextlib.contextmanager
def writing_output(path: Path) -> Iterator[None]:
    """Name `path`, the file (or folder) a command writes, when the system refuses the write
    (a full disk, a read-only folder): written aside and renamed when complete, the earlier
    output is still there, as the message says."""
    try:
        yield
    except OSError as exc:
        from meaningbench.db.faults import describe_fault

        fault = describe_fault(exc, path, output=True)
        if fault is None:
            raise
        raise fault from exc


def print_json(obj: Any) -> None:
    json.dump(clean_json(obj), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def parse_metric_names(values: list[str], study: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """(canonical name, metric, config) for metric names as any table prints them or a user
    writes them, through the one spec parser (models registered in `study` included)."""
    from meaningbench.jobs.metric_specs import configured_names
    from meaningbench.jobs.score_store import registered_models

    named = configured_names(values, registered_models(study))
    return [(n.name, n.metric, n.config) for n in named]
