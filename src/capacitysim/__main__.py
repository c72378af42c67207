"""``python -m capacitysim``: the same as the ``capacitysim`` command."""

from capacitysim.cli import main

main()
