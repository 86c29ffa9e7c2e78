"""`meaningbench language STUDY [CODE]`: show or change the language of a study's texts."""

from __future__ import annotations

import argparse

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "language",
        run,
        help="show or change the language of a study's texts (ISO 639-1)",
        description="Show or change the language of a study's texts. The language chooses "
        "sacrebleu's tokenizer for BLEU, SARI and iBLEU (zh, ja-mecab, ko-mecab, else 13a), "
        "ROUGE stemming (English only), the readability formula (FKGL English, WSTF German) "
        "and whether METEOR and SAMSA can run (English only). It is part of each such "
        "metric's config: scores computed under the old language stay stored under their "
        "own config, and the next `score` computes the new ones.",
    )
    parser.add_argument("code", nargs="?", help="the new language (en, de, fr, zh, ...)")
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.datasets.language import study_language
    from meaningbench.metrics.languages import language_label
    from meaningbench.ops.settings import set_language

    study = common.open_existing_study(args.study, reading=args.code is None)
    try:
        if args.code is None:
            old = new = study_language(study)
        else:
            old, new = common.written(set_language(study, args.code))
    finally:
        study.close()
    if args.json:
        common.print_json({"study": str(args.study), "language": new, "previous": old})
    elif old == new:
        print(f"{args.study}: {language_label(new)}")
    else:
        print(
            f"{args.study}: {language_label(old)} → {language_label(new)}; metrics that "
            "depend on the language score under the new one from the next `score`"
        )
    return 0
