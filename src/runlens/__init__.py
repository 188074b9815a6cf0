"""RunLens: an agent runtime whose runs complete only when their deliverables hold up."""

__version__ = "0.1.0"
