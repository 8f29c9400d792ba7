"""The upkeep methods of Anatid (a mixin of anatid.db.Anatid): derived indexes, stats and
doctor. Each forwards to its function (the index verbs in anatid.verbs.indexes, with the
same parameters: test/test_public_surface.py)."""
from __future__ import annotations

import inspect
from functools import partial
from typing import TYPE_CHECKING, Callable, Sequence

from .hints import Instant
from .indexes.ann import DEFAULT_EF_CONSTRUCTION, DEFAULT_EF_SEARCH, DEFAULT_M
from .indexes.policy import MaintenancePolicy
from .verbs import indexes as index_verbs

if TYPE_CHECKING:
    from .doctor import DoctorReport
    from .store import Store


class UpkeepVerbs:
    """maintain_indexes, rebuild_fts_index, build_ann_index, index_health, stats, doctor."""

    _store: Store

    def maintain_indexes(self, *, policy: MaintenancePolicy | None = None, all_tenants: bool = False,
                         force: bool = False, indexes: Sequence[str] = index_verbs.INDEXES,
                         progress: Callable[[int, int, str], object] | None = None) -> dict:
        """Build, validate and publish the derived-index generations that are due, absorbing
        their journals; one transaction per index. docs/indexes.md says when to call it.

        Args:
            policy: when a journal is due to be folded (default: any pending journal row).
            all_tenants: maintain every tenant of the file, not only this handle's.
            force: rebuild even what is not due.
            indexes: a subset of ("graph", "text", "vector").
            progress: called as progress(step, steps, label) before each index and at the end.

        Returns:
            ``{"graph": ..., "text": ..., "vector": ...}``: what was built, or skipped and why.

        Raises:
            ValidationError: a bad argument.
            IndexValidationError: a new generation disagreed with the SQL oracle (nothing published).
            ReadOnlyError: the handle was opened with read_only=True.

        Example: ``db.maintain_indexes(policy=anatid.MaintenancePolicy(max_journal_rows=1000))``
        """
        return index_verbs.maintain_indexes(self._store, policy=policy, all_tenants=all_tenants, force=force,
                                            indexes=indexes, progress=progress)

    def rebuild_fts_index(self) -> dict:
        """Rebuild and validate the text index of this handle's tenant, due or not: the
        maintain_indexes() report of the text index.

        Raises:
            IndexValidationError: the new generation disagreed with the SQL oracle.
            ReadOnlyError: the handle was opened with read_only=True.

        Example: ``db.rebuild_fts_index()["built"]``
        """
        return index_verbs.rebuild_fts_index(self._store)

    def build_ann_index(self, *, m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION,
                        ef_search: int | None = DEFAULT_EF_SEARCH, use_when: str = "above_ceiling",
                        all_tenants: bool = False) -> dict:
        """Opt this tenant into the approximate (HNSW) vector index and build it now, with the
        vector generation it covers (docs/indexes.md, ANN); the vector index's report.

        Args:
            m: HNSW links per node, 2 to 256.
            ef_construction: the build's search width.
            ef_search: the search width; None uses the width the build calibrated.
            use_when: "above_ceiling" (only where an exact scan would be refused) or "always".
            all_tenants: every tenant of the file, not only this handle's.

        Raises:
            ValidationError: a bad argument.
            AnnUnavailableError: the native extension is not loaded.
            ReadOnlyError: the handle was opened with read_only=True.

        Example: ``db.build_ann_index(use_when="always")``
        """
        return index_verbs.build_ann_index(self._store, m=m, ef_construction=ef_construction, ef_search=ef_search,
                                           use_when=use_when, all_tenants=all_tenants)

    def index_health(self, *, all_tenants: bool = False, policy: MaintenancePolicy | None = None,
                     as_of: Instant | None = None, deep: bool = True) -> list[dict]:
        """Per index (graph, text, vector, ann) and tenant: one reason (`fresh`,
        `stale_generation`, `unvalidated`, `historical_query`, `rebuild_in_progress`,
        `load_failure`, `damaged_base`, `absent`), counts and whether maintenance is due. Read-only.

        Args:
            all_tenants: every tenant of the file, not only this handle's.
            policy: what counts as due (default: any pending journal row).
            as_of: report for a read at this instant (`historical_query`: the SQL oracle answers).
            deep: also reconcile each base and journal with the canonical tables (slower).

        Raises:
            ValidationError: a bad argument.

        Example: ``[e["reason"] for e in db.index_health()]``
        """
        return index_verbs.index_health(self._store, all_tenants=all_tenants, policy=policy, as_of=as_of, deep=deep)

    def stats(self) -> dict:
        """The file's path and schema version, this tenant's counts (entities, memories,
        current_memories, open_relations, episodes, embeddings), the embedding dimension and
        whether the native extension is loaded. Read-only.

        Example: ``db.stats()["memories"]``
        """
        from .stats import stats
        with self._store.settling():
            return stats(self._store)

    def doctor(self) -> DoctorReport:
        """Read-only integrity and upkeep checks of the whole file (every tenant): a
        DoctorReport whose `ok` is False when a check found an error (docs/doctor.md).

        Example: ``assert db.doctor().ok``
        """
        from .doctor import doctor
        health: Callable[..., list[dict]] = self.index_health
        # the doctor covers every tenant (unwrap: a pooled handle wraps index_health in its call count)
        if inspect.unwrap(getattr(health, "__func__", health)) is UpkeepVerbs.index_health:
            health = partial(health, all_tenants=True)
        with self._store.settling():
            return doctor(self._store, health)
