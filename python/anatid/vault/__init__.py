"""Markdown vaults as anatid memory: notes become entities, their chunks memories
about them, and [[wikilinks]] the graph. See docs/vaults.md.

    from anatid import Anatid
    from anatid.vault import ingest_vault, VaultRecall
    db = Anatid.open("notes.anatid")
    ingest_vault(db, "~/vault", embedder="hashing")
    VaultRecall(db).ask("how do we deploy", mode="graph")
"""
from __future__ import annotations

from .embed import Embedder, HashingEmbedder, MiniLMEmbedder, get_embedder
from .ingest import IngestReport, ingest_vault

__all__ = ["Embedder", "HashingEmbedder", "MiniLMEmbedder", "get_embedder", "IngestReport", "ingest_vault"]


def __getattr__(name):  # the recall side is imported on first use
    if name in ("VaultRecall", "RecallResult", "MODES"):
        from . import recall
        return getattr(recall, name)
    raise AttributeError(name)
