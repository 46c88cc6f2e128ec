from nicbench.cli import main

main()
