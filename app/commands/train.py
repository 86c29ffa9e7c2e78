"""`meaningbench train`: fine-tune a MeaningBERT-style cross-encoder or a Sentence-BERT
bi-encoder on the study's ratings."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common
from meaningbench.settings import DEVICE_CHOICES
from meaningbench.training.request import (
    BETWEEN_EXACT,
    BETWEEN_LINEAR,
    BETWEEN_MODES,
    BI_ENCODER,
    CROSS_ENCODER,
    DEFAULT_BATCH_SIZE,
    DEFAULT_EPOCHS,
    DEFAULT_LR,
    DEFAULT_MAX_LENGTH,
    DEFAULT_SANITY_SHARE,
    KINDS,
    MIN_RATED_SHARE,
    format_sanity_share,
)

# Options that change what is learned: None means "not given", so that a resume can tell a
# repeated option from a conflicting one and fill the rest from the saved request.
_LEARNING_OPTIONS = {
    "kind": "kind",
    "label_map": "label_map",
    "label_between": "label_between",
    "base": "base_model",
    "dimension": "dimension",
    "labels": "labels",
    "z": "z_scores",
    "epochs": "epochs",
    "lr": "learning_rate",
    "batch_size": "batch_size",
    "max_length": "max_length",
    "augment": "augment",
    "sanity_share": "sanity_share",
    "folds": "folds",
    "seeds": "seeds",
    "split_seed": "split_seed",
    "val_fraction": "val_fraction",
    "test_fraction": "test_fraction",
    "warmup_ratio": "warmup_ratio",
    "eval_steps": "eval_steps",
    "max_steps": "max_steps",
    "checkpoint_steps": "checkpoint_steps",
}


def register(subparsers: Any) -> None:
    p = common.add_command(
        subparsers,
        "train",
        run,
        help="train a MeaningBERT-style or Sentence-BERT model on the study's ratings",
        description="Fine-tune a cross-encoder (the embedded MiniLM by default) to predict the "
        "study's human ratings, split by source sentence, with the MeaningBERT augmentation. "
        "Writes the model and its card to --out and registers it in the study, where the "
        "battery runs it as `meaningbert@NAME`. With --kind bi-encoder it fine-tunes a "
        "Sentence-BERT encoder instead (mean pooling, the cosine of the two texts regressed "
        "on the rating mapped to 0–1), which the battery runs as `sbert_cosine@NAME` and "
        "`bertscore@NAME`. Ctrl+C stops after the current step; --resume continues from the "
        "last checkpoint.",
    )
    _add_model_options(p)
    _add_schedule_options(p)
    _add_run_options(p)
    common.add_json_flag(p)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """What is trained, on which ratings."""
    p.add_argument("--out", type=Path, required=True, help="new or empty folder for the model")
    p.add_argument(
        "--kind",
        choices=KINDS,
        help=f"{CROSS_ENCODER} (MeaningBERT-style, the default) or {BI_ENCODER} (Sentence-BERT)",
    )
    p.add_argument(
        "--label-map",
        metavar="MAP",
        help="bi-encoder: rating → cosine target table, e.g. "
        "4=0.85,3.5=0.70,3=0.50,2.5=0.30,2=0.20,1.5=0.10,1=0.05, or 'linear' (the default: "
        "the dimension's scale rescaled to 0–1)",
    )
    p.add_argument(
        "--label-between",
        choices=BETWEEN_MODES,
        help=f"bi-encoder: how the --label-map table reads a score it does not list: "
        f"{BETWEEN_EXACT} (the default: such a score stops the training, naming its item) or "
        f"{BETWEEN_LINEAR} (interpolated between the two nearest listed scores, for continuous "
        "scores such as CSMD's 0–100 means; a score outside the listed range is still an "
        "error)",
    )
    p.add_argument(
        "--base", help="base encoder: a local folder or hub id (default: embedded MiniLM)"
    )
    p.add_argument("--dimension", help="rating dimension to learn (default: meaning)")
    p.add_argument(
        "--labels",
        metavar="SET",
        help="aggregate label set to learn where nobody rated (default: the study's chosen "
        "set, else the published labels)",
    )
    p.add_argument(
        "--z",
        action="store_const",
        const=True,
        help="learn per-annotator z-scores (item mean), re-expressed on 0–100",
    )


def _add_schedule_options(p: argparse.ArgumentParser) -> None:
    """How long and how it learns, and how the ratings are split."""
    p.add_argument("--epochs", type=int, help=f"epochs per run (default: {DEFAULT_EPOCHS})")
    p.add_argument(
        "--lr", type=common.number_option, help=f"peak learning rate (default: {DEFAULT_LR:g})"
    )
    p.add_argument(
        "--batch-size", type=int, help=f"examples per step (default: {DEFAULT_BATCH_SIZE})"
    )
    p.add_argument(
        "--max-length",
        type=int,
        help=f"tokens per pair, longest-first (default: {DEFAULT_MAX_LENGTH})",
    )
    p.add_argument(
        "--augment",
        help="comma list of identical,unrelated,swap (default: all three), or 'none'",
    )
    p.add_argument(
        "--sanity-share",
        metavar="I,U",
        help="the shares of the training examples that the identical pairs (I) and the "
        "unrelated pairs (U) make up, together at most "
        f"{1 - MIN_RATED_SHARE:g} (default: {format_sanity_share(DEFAULT_SANITY_SHARE)}); "
        "'per-source': one of each per distinct source, as models trained before this option "
        "learned",
    )
    p.add_argument("--folds", type=int, help="k-fold cross-validation by source group")
    p.add_argument("--seeds", type=int, nargs="+", help="one run per seed (default: 0)")
    p.add_argument("--split-seed", type=int, help="seed of the group split (default: 0)")
    p.add_argument(
        "--val-fraction", type=common.number_option, help="share of groups to validate (0.1)"
    )
    p.add_argument(
        "--test-fraction", type=common.number_option, help="share of groups to test (0.1)"
    )
    p.add_argument(
        "--warmup-ratio", type=common.number_option, help="share of steps to warm up (0.1)"
    )
    p.add_argument("--eval-steps", type=int, help="also validate every N steps")
    p.add_argument("--max-steps", type=int, help="stop each run after N steps")
    p.add_argument("--checkpoint-steps", type=int, help="checkpoint every N steps (200)")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """Where it runs and what becomes of the result."""
    p.add_argument("--device", choices=DEVICE_CHOICES, default="auto")
    p.add_argument("--threads", type=int, help="CPU threads (default: all usable cores)")
    p.add_argument("--name", help="registered name (default: the --out folder's name)")
    p.add_argument("--no-register", action="store_true", help="do not register in the study")
    p.add_argument(
        "--keep-checkpoints", action="store_true", help="keep every run's checkpoints and model"
    )
    p.add_argument("--resume", action="store_true", help="continue the training in --out")


def _augment(text: str) -> tuple[str, ...]:
    if text.strip().lower() == "none":
        return ()
    return tuple(part.strip().lower() for part in text.split(",") if part.strip())


def _given(args: argparse.Namespace) -> dict[str, Any]:
    given = {}
    for option, field in _LEARNING_OPTIONS.items():
        value = getattr(args, option)
        if value is None:
            continue
        if option == "augment":
            value = _augment(value)
        elif option == "sanity_share":
            from meaningbench.training.request import parse_sanity_share

            value = parse_sanity_share(value)
        elif option == "label_map":
            from meaningbench.training.labels import parse_label_map

            value = parse_label_map(value)
        elif option == "seeds":
            value = tuple(value)
        given[field] = value
    return given


def build_request(args: argparse.Namespace) -> Any:
    from meaningbench.errors import UserError
    from meaningbench.training.request import TrainRequest, load_request

    given = _given(args)
    runtime = {
        "study": args.study,
        "out_dir": args.out,
        "device": args.device,
        "threads": args.threads,
        "register": not args.no_register,
        "keep_checkpoints": args.keep_checkpoints,
        "resume": args.resume,
    }
    if not args.resume:
        return TrainRequest(**given, **runtime, name=args.name)
    saved = load_request(args.out)
    conflicts = sorted(k for k, v in given.items() if getattr(saved, k) != v)
    if conflicts:
        raise UserError(
            f"--resume continues the saved training; these options differ from it: "
            f"{', '.join(conflicts)} (leave them out)"
        )
    return saved.with_changes(**runtime, name=args.name or saved.name)


class _Display:
    """Progress on stderr: a step bar per run and one line per epoch."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._tqdm = tqdm
        self.bar: Any = None
        self.last_best = False

    def __call__(self, event: Any) -> None:
        from meaningbench.training import events as ev

        if isinstance(event, ev.RunStarted):
            self.close()
            self.bar = self._tqdm(
                total=event.total_steps,
                initial=event.start_step,
                desc=f"{event.run} ({event.index + 1}/{event.n_runs})",
                unit="step",
                file=sys.stderr,
                dynamic_ncols=True,
            )
        elif isinstance(event, ev.StepEnd) and self.bar is not None:
            self.bar.update(event.step - self.bar.n)
            self.bar.set_postfix_str(f"loss {event.train_loss:.0f}", refresh=False)
        elif isinstance(event, ev.Evaluated):
            self.last_best = event.best
            # An epoch's own validation is reported on its epoch line.
            if event.step == 0 or event.epoch != int(event.epoch):
                self._write(
                    f"{event.run} step {event.step}: validation MSE {event.val_loss:.1f}"
                    + (" (best, saved)" if event.best else "")
                )
        elif isinstance(event, ev.EpochEnd):
            self._write(
                f"{event.run} epoch {event.epoch}: train MSE {event.train_loss:.1f}, "
                f"validation MSE {event.val_loss:.1f}"
                + (" (best, saved)" if self.last_best else "")
                + f", {event.elapsed_s:.0f} s"
            )
        elif isinstance(event, ev.Phase):
            self._write(event.message + (f" ({event.run})" if event.run else ""))
        elif isinstance(event, ev.RunFinished):
            self.close()

    def _write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _print_summary(result: Any) -> None:
    test = result.test
    print(f"model: {result.model_dir}  ({result.selected_run}, card: model_card.json, README.md)")
    if result.registered:
        names = " and ".join(f"{m}@{result.name}" for m in result.card.get("metrics", []))
        print(f"registered in the study as {names}")

    def fmt(key: str) -> str:
        value = test.get(key)
        return "–" if value is None else f"{value:.3f}"

    print(
        f"test (n = {test.get('n')}): Pearson {fmt('pearson')}, Spearman {fmt('spearman')}, "
        f"R² {fmt('r2')}, RMSE {fmt('rmse')}"
    )
    before = result.card.get("test_before") or {}
    if before:
        test = before
        print(
            f"base encoder on the same items: Pearson {fmt('pearson')}, "
            f"Spearman {fmt('spearman')}, R² {fmt('r2')}, RMSE {fmt('rmse')}"
        )
    sanity = result.card.get("sanity") or {}
    if sanity:
        ident = (sanity.get("identical") or {}).get("95")
        unrel = (sanity.get("unrelated") or {}).get("5")
        print(
            f"sanity: identical ≥ 95 {'–' if ident is None else f'{ident:.0%}'}, "
            f"unrelated ≤ 5 {'–' if unrel is None else f'{unrel:.0%}'}"
        )


def run(args: argparse.Namespace) -> int:
    from meaningbench.ops.train import train_job
    from meaningbench.runtime import Cancelled, JobContext

    request = build_request(args)
    display = _Display()
    ctx = JobContext()

    def on_sigint(_signum: int, _frame: Any) -> None:
        # The first Ctrl+C stops cleanly after the current step (with a checkpoint); a second
        # one interrupts at once.
        ctx.cancel.cancel()
        print("\nstopping after this step; a second Ctrl+C interrupts", file=sys.stderr)
        signal.signal(signal.SIGINT, previous)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        result = train_job(request, ctx, display).value
    except Cancelled:
        display.close()
        print(
            f"training stopped; continue it with: meaningbench train {args.study} "
            f"--out {args.out} --resume",
            file=sys.stderr,
        )
        raise
    finally:
        display.close()
        signal.signal(signal.SIGINT, previous)
    if args.json:
        common.print_json(result.to_json())
    else:
        _print_summary(result)
    return 0
