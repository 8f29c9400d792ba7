"""anatid: embedded bitemporal graph memory for AI agents, on DuckDB."""
from ._version import __version__
from .db import Anatid, AsOf
from .indexes.policy import MaintenancePolicy
from .errors import (AnatidError, BruteForceCeilingError, ConflictError, DatabaseLocked,
                     EmbeddingDimensionError, NotFoundError, ReadOnlyError, SchemaVersionError, StorageError,
                     ValidationError)
from .models import Edge, Entity, Episode, Hit, Memory, Provenance, RecallHits
from .pool import DatabasePool  # noqa: F401
from .store import BRUTE_FORCE_CEILING, SCAN_CEILING
from .timeutil import utcnow
from . import indexes, native_graph, native_hybrid  # noqa: F401,E402  journal hooks; the native engines

__all__ = ["Anatid", "AsOf", "AnatidError", "BruteForceCeilingError", "ConflictError", "DatabaseLocked",
           "EmbeddingDimensionError", "NotFoundError", "ReadOnlyError", "SchemaVersionError", "StorageError",
           "ValidationError",
           "Edge", "Entity", "Episode", "Hit", "Memory", "Provenance", "RecallHits", "BRUTE_FORCE_CEILING",
           "SCAN_CEILING", "utcnow", "__version__", "MaintenancePolicy"]
