"""``python -m cartograph``: the same command line as the ``cartograph`` script."""

from cartograph.cli import main

main(prog_name="cartograph")
