"""The lazy command registry stays complete: every command a module registers is in the map."""

from __future__ import annotations

import subprocess
import sys

from capacitysim import cli as cli_module


def test_every_registered_command_is_mapped_to_its_module():
    cli_module._register()
    registered = set(cli_module.cli.commands)
    assert registered == set(cli_module.COMMANDS), registered ^ set(cli_module.COMMANDS)
    for name, module in cli_module.COMMANDS.items():
        assert cli_module.cli.commands[name].callback.__module__ == f"capacitysim.cli.{module}", name


def test_help_lists_all_commands(run_cli):
    r = run_cli("--help")
    assert r.exit_code == 0
    for name in cli_module.COMMANDS:
        assert name in r.stdout


def test_a_light_command_does_not_import_swmm_or_xarray():
    code = (
        "import sys; from capacitysim.cli import main\n"
        "try:\n    main(['spdes', 'phosphorus', '--permitted-gpd', '60000', '--watershed'])\n"
        "except SystemExit:\n    pass\n"
        "print('\\nHEAVY', sorted(m for m in ('swmmio', 'pyswmm', 'numba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip().splitlines()[-1] == "HEAVY []"
