"""`python -m runlens` runs the command line."""

from runlens.cli import main

if __name__ == "__main__":
    main()
