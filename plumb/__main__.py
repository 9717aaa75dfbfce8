from plumb.cli import main

main()
