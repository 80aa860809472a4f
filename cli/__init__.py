# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith's command line: `python -m bonesmith <command> ...` (headless).

One module per command (`add_parser`, `run`); what they share is in common.py. They call
the services of bridge/ as the operators do. bpy is imported only by the commands that
need it, so `--help` is instant.
"""
from __future__ import annotations

import argparse
import sys

from ..core.errors import BonesmithError
from . import batch, correctives, demo, skeleton, skin, train_skin

COMMANDS = (skeleton, skin, batch, demo, train_skin, correctives)   # in the order --help lists them

EXIT_BAD_INPUT = 2   # a BonesmithError: the input or the options need to change (as argparse's usage errors)
EXIT_FAILED = 1      # anything else: a bug or the machine (a disk full, a file locked)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bonesmith",
        description="Bonesmith: automatic skeletons and skin weights for characters, headless.",
    )
    parser.add_argument("--verbose", action="store_true",
                        help="print the traceback of an unexpected error (for a bug report)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv=None) -> int:
    """Run a command; errors are one line on stderr (--verbose: and the traceback)."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except BonesmithError as error:
        print(f"bonesmith: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        _print_unexpected(args, f"{error.strerror or error} ({error.filename or 'no file name'})", error)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - one line for the user, the rest with --verbose
        _print_unexpected(args, f"{type(error).__name__}: {error}", error)
        return EXIT_FAILED


def _print_unexpected(args, text: str, error: BaseException) -> None:
    if getattr(args, "verbose", False):
        import traceback
        traceback.print_exception(error, file=sys.stderr)
    print(f"bonesmith: error: {text}" + ("" if getattr(args, "verbose", False)
                                          else " (run with --verbose for the traceback)"), file=sys.stderr)
