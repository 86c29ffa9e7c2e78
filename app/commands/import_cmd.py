"""`meaningbench import STUDY FILE`: load a rating file into a study (created if missing)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.commands import _common as common

if TYPE_CHECKING:
    from meaningbench.datasets.report import ImportReport
    from meaningbench.runtime import JobContext

FORMATS = ("auto", "csv", "tsv", "jsonl", "pairs", "csmd", "long", "wide")
from meaningbench.datasets.plan import RATINGS_CHOICES  # noqa: E402  (light: no pandas)

EPILOG = """\
shapes (detected from the columns unless --format names one):
  pairs  one row per (source, output): source, output [, system, references, id]
  csmd   original, simplification, label (label = mean meaning rating 0-100, kept as an
         aggregate rating of the dataset)
  long   one row per rating: source, output, system, [annotator,] dimension, rating
  wide   one row per (item, annotator), one rating column per dimension, e.g. SimpDA 2022:
         WorkerId, Input.original, Input.simplified, Input.system, Answer.adequacy, ...
         (adequacy is meaning)

kinds of ratings (shown in the summary; --ratings overrides what is inferred):
  per-rater  named: a rater column; every row is that rater's rating (SimpDA 2022)
  anonymous  a long file without a rater column: every row is one rating by an unknown
             person; identical rows are two people who agreed (QuestEval)
  aggregate  one published label per item, e.g. a mean (CSMD's label)
  An item's human score averages each rater's ratings of it first, then the raters.
  Rows with and without rater ids in one file are refused (exit 2, with the lines);
  --ratings anonymous imports every row as an anonymous rating instead.

--map FIELD=COLUMN (repeatable) names the column of a field: source, output, system,
  references (repeat it, or a JSON list of columns), annotator, dimension, rating, label,
  id, kind, dataset. A dimension name maps a wide rating column (meaning=Answer.adequacy);
  a new name creates that dimension. dimension.NAME=VALUE says a long file's VALUE means
  dimension NAME.

item attributes: a column no field reads (SimpEval's sentence_type, QuestEval's
  simplification_type) is kept as an attribute of each item, a category that `info` counts,
  `export` writes, the browser filters by and analyses break results down by. Every row of
  an item must give it the same value. --drop-column COLUMN (repeatable) drops one;
  --drop-column '*' drops them all.

examples:
  meaningbench import my.mbstudy train.tsv
  meaningbench import my.mbstudy simpDA_2022.csv --dataset simpda
  meaningbench import my.mbstudy questeval_likert_ratings_cleaned.csv   # anonymous
  meaningbench import germeval.mbstudy train.csv --language de
  meaningbench import my.mbstudy ratings.csv --map source=complex --map output=simple \\
      --map meaning=adequacy_score --map annotator=rater
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "import",
        run,
        help="import a rating file (CSV, TSV, JSONL) into a study, creating the study if needed",
        description="Import a rating file into a study. All or nothing: a bad row stops the "
        "import with its file, row and column, and the study is left as it was.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", type=Path, help="the data file (.csv, .tsv, .jsonl)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="container (csv, tsv, jsonl) or shape (pairs, csmd, long, wide); default: detect",
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="the column holding a field (repeatable; see below)",
    )
    parser.add_argument("--dataset", help="dataset name (default: the file name without suffix)")
    parser.add_argument("--system", help="system name for rows that do not name one")
    parser.add_argument("--encoding", default="utf-8", help="text encoding (default: utf-8)")
    parser.add_argument(
        "--ratings",
        choices=RATINGS_CHOICES,
        default=None,
        help="what the file's ratings are: per-rater (a rater column), anonymous (one rating "
        "per row, raters unknown) or aggregate (one published label per item); default: "
        "inferred from the columns",
    )
    parser.add_argument(
        "--language",
        metavar="CODE",
        default=None,
        help="the language of the study's texts, an ISO 639-1 code (en, de, fr, zh, ...); it "
        "chooses tokenizers, stemming and readability formulas (see `meaningbench language`); "
        "default: the study's, en for a new study",
    )
    parser.add_argument(
        "--drop-column",
        action="append",
        default=None,
        metavar="COLUMN",
        dest="drop_column",
        help="do not keep this unmapped column as an item attribute (repeatable; '*': none "
        "of them)",
    )
    parser.add_argument(
        "--same-raters",
        action="store_true",
        help="a rater id already in the study from another file is the same person (without "
        "it, such an import is refused by name: raters numbered from 0 in two corpora are "
        "not the same people)",
    )
    parser.add_argument(
        "--rater-prefix",
        metavar="PREFIX",
        default=None,
        help="put PREFIX before every rater id of this file (e.g. asset: gives asset:0), so "
        "its raters are its own",
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.errors import InputError
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.importing import import_job

    data_file: Path = args.file
    if not data_file.exists():
        raise InputError("no such file", file=str(data_file))
    target: Path = args.study
    # A new study is built aside and named only once the import committed (see the op).
    created = not target.exists()

    def job(ctx: JobContext) -> ImportReport:
        return import_job(
            _in_percent(ctx),
            target,
            data_file,
            args.format,
            args.map,
            args.dataset,
            args.system,
            args.ratings,
            args.language,
            args.drop_column,
            encoding=args.encoding,
            new=created,
            same_raters=args.same_raters,
            rater_prefix=args.rater_prefix or "",
        ).value

    quiet = bool(args.json) or not sys.stderr.isatty()
    report = run_with_progress_bar(job, description="import", quiet=quiet)
    if args.json:
        common.print_json({"study": str(args.study), "created": created, **report.to_dict()})
    else:
        if created:
            print(f"created study {args.study}")
        print("\n".join(report.summary_lines()))
    return 0


def _in_percent(ctx: JobContext) -> JobContext:
    """The job's context with its progress (bytes of the file read) told in percent, the
    unit of the terminal's bar."""
    from meaningbench.runtime import JobContext, Progress

    def report(p: Progress) -> None:
        percent = int(100 * p.done / p.total) if p.total else 0
        ctx.progress(min(percent, 100), 100, p.message)

    return JobContext(cancel=ctx.cancel, report=report, on_notice=ctx.on_notice, min_interval_s=0)
