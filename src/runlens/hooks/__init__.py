"""Hooks on runtime events, and the built-in Stop validators."""
