"""The ``capacitysim`` command line: thin; parse, call a workflow, print.

Every user error (:class:`capacitysim.errors.InputError`) becomes one line on stderr and exit
code 2; a refusal by the rules (:class:`~capacitysim.errors.RefusedError`) exits 3. Method
warnings (clamped inputs) are printed as ``warning:`` lines on stderr.
"""

from __future__ import annotations

import signal
import sys
import warnings

import click

from capacitysim.version import __version__
from capacitysim.errors import CapacitysimError, CapacitysimWarning


#: Which module registers each top-level command. Modules are imported only when their command
#: runs (``capacitysim bank ...`` does not pay for SWMM's or xarray's import); ``--help`` imports
#: them all. tests/cli/test_cli_registry.py keeps this map complete.
COMMANDS = {
    "storm": "hydrology",
    "runoff": "hydrology",
    "peak": "hydrology",
    "hydrograph": "hydrology",
    "demo": "demo",
    "spdes": "spdes",
    "detention": "detention",
    "bank": "bank",
    "credits": "credits",
    "capacity": "network",
    "basins": "network",
    "bench": "bench",
    "sweep": "sweep",
    "headroom": "headroom",
    "list": "listing",
    "serve": "serve",
    "users": "users",
    "report": "report",
}


def _import_command_module(name: str) -> None:
    import importlib

    importlib.import_module(f"capacitysim.cli.{name}")


class CapacitysimGroup(click.Group):
    """A click group that turns capacitysim's errors into one line and an exit code, and loads
    each command family's module on first use."""

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in COMMANDS:
            _import_command_module(COMMANDS[cmd_name])
            cmd = super().get_command(ctx, cmd_name)
        return cmd

    def list_commands(self, ctx):
        _register()
        return super().list_commands(ctx)

    def invoke(self, ctx):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CapacitysimWarning)
            try:
                return super().invoke(ctx)
            except CapacitysimError as exc:
                click.echo(f"error: {exc}", err=True)
                ctx.exit(exc.exit_code)
            except OSError as exc:  # a path the user gave cannot be read or written
                where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
                click.echo(f"error: {where}{exc.strerror or exc}", err=True)
                ctx.exit(2)
            finally:
                seen = set()
                for w in caught:
                    if issubclass(w.category, CapacitysimWarning) and str(w.message) not in seen:
                        seen.add(str(w.message))
                        click.echo(f"warning: {w.message}", err=True)


@click.group(cls=CapacitysimGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="capacitysim")
def cli():
    """capacitysim: prove a sewer system has room for new flow, with a simulation you can defend."""


#: Modules whose import registers their commands on :data:`cli` (one module per command family).
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def _register():
    """Import every command module (for --help and the registry test)."""
    for name in COMMAND_MODULES:
        _import_command_module(name)


#: Exit codes of a command stopped by a signal (128 + the signal number, as shells report them).
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class Interrupted(BaseException):
    """Raised in the main thread by SIGTERM/SIGINT: unwinds every ``finally`` (engine children stopped,
    temporary folders removed) before the process exits."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


def _on_signal(signum, frame):
    raise Interrupted(EXIT_SIGTERM if signum == signal.SIGTERM else EXIT_SIGINT)


def main(argv=None):
    """Console-script entry point: SIGTERM and Ctrl-C stop the engine runs, clean up, exit 143/130."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _on_signal)
    try:
        rv = cli.main(args=argv, prog_name="capacitysim", standalone_mode=False)
    except Interrupted as exc:
        _stop_children()
        click.echo("interrupted", err=True)
        sys.exit(exc.code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # usage errors: click's own message, exit 2
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(1)
    # without standalone mode click returns a command's exit code (ctx.exit) instead of exiting
    sys.exit(rv if isinstance(rv, int) else 0)


def _stop_children() -> None:
    if "capacitysim.network.engine" in sys.modules:
        sys.modules["capacitysim.network.engine"].terminate_children()
