from nicbench.cli import main

main(prog_name="nicbench")
