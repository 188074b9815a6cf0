"""Model providers behind one interface and one neutral message format."""
