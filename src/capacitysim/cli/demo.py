"""``capacitysim demo``: the main job on the bundled storm and a sample watershed."""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.workflows.demo import run_demo


@cli.command()
def demo():
    """Run the demonstration on the bundled storm and sample watershed and print the summary."""
    for line in run_demo():
        click.echo(line)
