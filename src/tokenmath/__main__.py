"""`python -m tokenmath …`: the same CLI as the `tokenmath` command."""

from tokenmath.cli.app import main

if __name__ == "__main__":
    main()
