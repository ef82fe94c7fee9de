"""The ``opsim`` command line.

Every sub-command lives in its own module that exposes ``register(subparsers, common)``;
``register`` adds a parser whose ``func(args) -> Output`` does the work.  This module owns
the conventions: ``--json`` (a plain flag: the document on stdout) and ``--json-file FILE``
(the document written to FILE, the table printed), exit codes (0 ok, 2 bad input, 1 other
failure, 130 interrupted, 143 SIGTERM) and error messages without tracebacks (set ``OPSIM_DEBUG=1`` to see
them).  No option takes an optional value: one could swallow the positional argument after
it (``--json before.json after.json``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys

from . import commands
from ._output import Output, atomic_write_text, check_writable_file, dumps
from ._version import __version__
from .errors import InputError, OpsimError
from .stopsignals import TermAsInterrupt, Terminated, interrupt_exit_code


def command_modules() -> list[str]:
    """Every module in ``opsim.commands`` is a command module (sorted, so --help is stable)."""
    return sorted(
        f"opsim.commands.{m.name}" for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")
    )


#: what argparse takes for a negative number (a value, not an option): with units and
#: percentages too, so ``--native -8MiB`` reaches the size check ("cannot be negative")
#: instead of failing as "expected one argument"
_NEGATIVE_VALUE = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-z%]*$")


class _ArgumentParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_VALUE

    def error(self, message):  # exit code 2 with a one-line message, like every input error
        self.print_usage(sys.stderr)
        sys.stderr.write(f"opsim: error: {message}\n")
        sys.exit(2)


def printable(message: str) -> str:
    """A message as one terminal-safe line: control characters (a NUL or an escape sequence
    from a user's file) are shown escaped, never written raw."""
    return "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in message)


def chosen_command(argv: list[str] | None) -> str | None:
    """The command ``argv`` names (its first word, when that is a command's name), or None: then every
    command is registered (``opsim --help``, a wrong name, the API's ``build_parser()``)."""
    if not argv or argv[0].startswith("-"):
        return None
    names = {m.rsplit(".", 1)[1] for m in command_modules()}
    return argv[0] if argv[0] in names else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``argv``, of the command it names only (the others are
    names without options).  Importing a command imports its implementation's rooms, and importing
    all of them is most of opsim's start-up (half a second here, ten seconds in an emulated guest):
    a command run pays for itself only."""
    common = _ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON document on stdout instead of the tables")
    common.add_argument(
        "--json-file",
        metavar="FILE",
        default=None,
        help="also write the JSON document to FILE (atomically) and print the tables",
    )
    parser = _ArgumentParser(
        prog="opsim",
        description="SSD over-provisioning: simulate, plan, measure.",
    )
    parser.add_argument("--version", action="version", version=f"opsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    sub.required = True
    chosen = chosen_command(argv)
    for name in command_modules():
        short = name.rsplit(".", 1)[1]
        if chosen is None or short == chosen:
            importlib.import_module(name).register(sub, common)
        else:
            sub.add_parser(short)  # a name for the choices: never parsed (argv names another command)
    return parser


def _subcommand_dests(parser: argparse.ArgumentParser) -> set[str]:
    """The names under which argparse stores the chosen sub-command (not paths)."""
    dests: set[str] = set()
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            dests.add(a.dest)
            for p in a.choices.values():
                dests |= _subcommand_dests(p)
    return dests


def given_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list:
    """Every value given on the command line but ``--json-file``'s own (inputs, ``-o``, ...):
    ``--json-file`` must not name a file the command reads or writes otherwise.  Values that
    name no file are ignored by the check."""
    skip = _subcommand_dests(parser) | {"json_file", "func"}
    return [v for k, v in vars(args).items() if k not in skip and isinstance(v, (str, list, tuple))]


def emit(out: Output, to_stdout: bool, json_file: str | None) -> None:
    if json_file:
        atomic_write_text(json_file, dumps(out.data))
    if to_stdout:
        sys.stdout.write(dumps(out.data) + "\n")
        return
    if out.text:
        sys.stdout.write(out.text.rstrip("\n") + "\n")
    if json_file:
        sys.stdout.write(f"JSON written to {json_file}\n")


def main(argv=None) -> int:
    # SIGTERM and SIGHUP end a command as Ctrl-C does: what was done is kept, exit 128 + signal.
    # The block opens before the parser is built (importing every command takes a moment).
    with TermAsInterrupt() as term:
        try:
            argv = sys.argv[1:] if argv is None else list(argv)
            parser = build_parser(argv)
            args = parser.parse_args(argv)
        except KeyboardInterrupt as e:
            sys.stderr.write("opsim: interrupted\n")
            return term.exit_code(interrupt_exit_code(e))
        return term.exit_code(_run(parser, args))


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    debug = os.environ.get("OPSIM_DEBUG") not in (None, "", "0")
    try:
        json_file = getattr(args, "json_file", None)
        if json_file is not None:
            check_writable_file(json_file, key="--json-file", inputs=given_values(parser, args))
        out = args.func(args)
        emit(out, bool(getattr(args, "json", False)), json_file)
        return out.exit_code
    except OpsimError as e:
        if debug:
            raise
        kind = "error" if isinstance(e, InputError) else "failed"
        sys.stderr.write(f"opsim: {kind}: {printable(str(e))}\n")
        return e.exit_code
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM/SIGHUP (Terminated)
        sys.stderr.write(f"opsim: interrupted{f' by {e}' if isinstance(e, Terminated) else ''}\n")
        return interrupt_exit_code(e)
    except BrokenPipeError:
        return 1
    except MemoryError:  # past the core's estimate: say so plainly, no traceback
        sys.stderr.write(
            "opsim: failed: out of memory (the process's limit or the machine's); "
            "a smaller model, a coarser series or fewer points needs less\n"
        )
        return 1
    except Exception as e:  # an opsim bug: say so plainly, exit 1
        if debug:
            raise
        sys.stderr.write(
            f"opsim: internal error: {type(e).__name__}: {printable(str(e))} (set OPSIM_DEBUG=1 for a traceback)\n"
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
