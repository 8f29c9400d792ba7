"""Typed errors. Every message says what was wrong and what is accepted."""
from __future__ import annotations


class AnatidError(Exception):
    """Base class of every error anatid raises on purpose."""


class ValidationError(AnatidError, ValueError):
    """An argument was rejected before anything was written."""

    def __init__(self, argument: str, problem: str, accepted: str | None = None):
        self.argument = argument
        self.problem = problem
        self.accepted = accepted
        msg = f"{argument}: {problem}"
        if accepted:
            msg += f" (accepted: {accepted})"
        super().__init__(msg)


class EmbeddingDimensionError(ValidationError):
    """An embedding's length does not match the file's embedding dimension."""


class NotFoundError(AnatidError, LookupError):
    """An id or name does not exist in this tenant."""


class ConflictError(AnatidError):
    """A write lost a race or contradicts the current state.

    `retryable` says whether running the same callback again (after a fresh
    read) can succeed: `atomic()` retries only those.
    """

    def __init__(self, message: str, *, retryable: bool):
        self.retryable = retryable
        hint = "retryable: re-read and try again, or wrap the work in db.atomic()" if retryable \
            else "not retryable: the request contradicts the stored state"
        super().__init__(f"{message} ({hint})")


class StorageError(AnatidError):
    """The file could not be written or opened (disk full, file-size limit, permissions, an
    I/O error): not a conflict, so `atomic()` does not retry it. A failed write's transaction
    was rolled back and the file keeps its last committed state; `path` names the file."""

    def __init__(self, path: str, detail: str, *, opening: bool = False):
        self.path = path
        self.detail = detail
        if opening:
            super().__init__(f"could not open {path}: {detail} (not retryable: check that the folder exists, "
                             "its permissions and the free disk space)")
        else:
            super().__init__(f"could not write {path}: {detail} (not retryable: the transaction was rolled back "
                             "and the file keeps its last committed writes; free disk space or raise the "
                             "file-size limit, then run the write again)")


class BruteForceCeilingError(AnatidError):
    """An exact vector scan would exceed BRUTE_FORCE_CEILING rows."""


class SchemaVersionError(AnatidError):
    """The file was written by a newer (or unknown) anatid schema."""


class DatabaseLocked(AnatidError):
    """Another process holds the file for writing."""


class ReadOnlyError(AnatidError):
    """A write verb was called on a handle opened read-only."""
