"""`python -m nicbench`: the same command line as `nicbench` (nicbench.cli)."""

from nicbench.cli import main

main(prog_name="nicbench")
