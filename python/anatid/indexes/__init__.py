"""Derived indexes: base generations plus journals written with every change.

Importing this package registers every index's journal hooks; anatid imports it
whether or not the native extension loads, so a SQL-only writer keeps the journals
a native reader depends on.
"""
from . import ann, graph, text, vector  # noqa: F401  (registers the journal hooks)
