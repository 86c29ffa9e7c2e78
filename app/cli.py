"""The `meaningbench` command. Each subcommand lives in its own module of `meaningbench.commands`.

Modules there define `register(subparsers)`; they keep heavy imports inside the function
that runs the command, so `meaningbench --help` and the GUI start without torch.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from meaningbench import __version__
from meaningbench.errors import UserError


def build_parser() -> argparse.ArgumentParser:
    import meaningbench.commands as commands_pkg

    parser = argparse.ArgumentParser(
        prog="meaningbench",
        description="Measure meaning preservation in text simplification: import rating "
        "data, run the metric battery, compare metrics with human ratings.",
    )
    parser.add_argument("--version", action="version", version=f"meaningbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = sorted(
        m.name for m in pkgutil.iter_modules(commands_pkg.__path__) if not m.name.startswith("_")
    )
    for name in modules:
        module = importlib.import_module(f"meaningbench.commands.{name}")
        module.register(sub)
    from meaningbench.commands._common import plain_number_options

    plain_number_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from meaningbench.interrupts import EXIT_INTERRUPTED, handled, leave_if_interrupted

    # From the first line: a Ctrl+C while the commands load ends the program as cleanly as
    # one while it works (see meaningbench.interrupts).
    with handled():
        try:
            code = _main(argv)
        except KeyboardInterrupt:
            print("meaningbench: interrupted", file=sys.stderr)
            code = EXIT_INTERRUPTED
        leave_if_interrupted(code)
        return code


def _main(argv: Sequence[str] | None) -> int:
    from meaningbench.interrupts import EXIT_INTERRUPTED, name_command

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    name_command(args.command)
    from meaningbench.db.errors import StudyFileError
    from meaningbench.runtime import Cancelled

    try:
        return int(args.func(args) or 0)
    except (UserError, StudyFileError) as exc:
        print(f"meaningbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Cancelled as exc:
        # The work says what a cancel left when it is not "what was finished".
        left = str(exc) or "finished work was kept"
        print(f"meaningbench {args.command}: cancelled; {left}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print(f"meaningbench {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`meaningbench info s | head`): not an error of ours.
        _silence_stdout()
        return 0
    except Exception as exc:
        # A full disk, a read-only or failing medium: the user's to fix, so a message
        # saying what happened and what to do, not a traceback. Anything else is a bug.
        from meaningbench.db.faults import describe_fault

        fault = describe_fault(exc, getattr(args, "study", None))
        if fault is None:
            raise
        print(f"meaningbench {args.command}: error: {fault}", file=sys.stderr)
        return 2


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    raise SystemExit(main())
