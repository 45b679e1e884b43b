from envgen.cli import main

main()
