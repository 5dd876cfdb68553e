"""`python3 tm.py ARGS` = `tokenmath ARGS` where the package is on PYTHONPATH but not installed (the device tool)."""
from tokenmath.cli.app import main

main()
