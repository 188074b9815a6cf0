"""Tests of the web UI: the server, its API, its pages and a real browser."""
