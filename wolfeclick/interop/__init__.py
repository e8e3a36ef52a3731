"""Recordings in and training data out: importers for foreign battle logs (``sniff.read_any``) and exporters."""
