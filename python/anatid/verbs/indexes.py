"""maintain_indexes(): build and publish new derived-index generations.

Minimal here (the lifecycle issue completes it): graph, text and vector, each in its own transaction. Each index
builds from the canonical tables, publishes its generation and absorbs the journal
rows it covered, in one transaction.
"""
from __future__ import annotations

from ..errors import ValidationError


def maintain_indexes(store, *, all_tenants: bool = False) -> dict:
    """{'graph': ..., 'text': ..., 'vector': ...} reports for the handle's tenant, or every
    tenant with all_tenants=True."""
    if not isinstance(all_tenants, bool):
        raise ValidationError("all_tenants", f"expected a bool, got {type(all_tenants).__name__}", "True or False")
    from ..indexes import graph, text, vector
    return {"graph": graph.maintain(store, all_tenants=all_tenants),
            "text": text.maintain(store, all_tenants=all_tenants),
            "vector": vector.maintain(store, all_tenants=all_tenants)}
