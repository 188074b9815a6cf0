"""Word lists and tables of the offline analyst (package data; see README.md)."""
