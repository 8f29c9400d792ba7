"""The argument types of the public methods, named once (for readers and type checkers)."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, Mapping, Sequence, Tuple, Union

from numpy.typing import NDArray

Instant = Union[datetime, str]
"""An aware datetime, or ISO-8601 text with an offset; naive datetimes are refused."""

Id = Union[int, str]
"""A memory or episode id: int, or its decimal string (JSON clients send strings)."""

Names = Union[str, Sequence[str]]
"""One entity name, or several (blank names are refused; case-insensitive matching)."""

Kinds = Union[str, Sequence[str]]
"""One memory kind, or several: a read keeps memories of these kinds only."""

Embedding = Union[Sequence[float], NDArray[Any]]
"""A vector of the file's dimension: a list of floats or a 1-d numpy array."""

Weights = Dict[str, float]
"""Per-arm weights of hybrid recall, keys among 'vector', 'text', 'graph' (default 1.0 each)."""

Pair = Union[Tuple[str, str], Tuple[str, str, str], Tuple[str, str, str, float], Mapping[str, Any]]
"""An edge for relate_many: (a, b), (a, b, rel_kind), (a, b, rel_kind, weight) or a dict of those keys."""
