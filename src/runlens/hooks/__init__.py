"""Hooks on runtime events: the hook manager and external command hooks."""
