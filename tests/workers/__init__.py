"""Durable runs: queue, workers, and the counting model server they are tested against."""
