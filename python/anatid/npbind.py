"""Many rows into one statement through registered numpy arrays, not bound lists.

Binding a Python list of lists as a statement parameter costs about 70 us per 64-d
vector here (5,000 vectors: ~360 ms); the same rows from a registered numpy matrix
cost ~26 ms in all. The values are the same: the Python floats rounded to float32
once, as CAST(... AS FLOAT[]) rounds them.
"""
from __future__ import annotations

import itertools
import threading
from contextlib import contextmanager
from typing import Iterator

import numpy as np

_serial = itertools.count()


def uniform(vectors) -> bool:
    """Whether the vectors can form one matrix (same length, at least one)."""
    return bool(vectors) and len({len(v) for v in vectors}) == 1 and len(vectors[0]) > 0


@contextmanager
def rows(cur, columns: dict[str, np.ndarray], vectors=None, vector_name: str = "embedding") -> Iterator[str]:
    """A SQL relation (in parentheses) with one row per position of the 1-d `columns`
    and, if given, the FLOAT[] column `vector_name` from the equally long `vectors`."""
    tag = f"{threading.get_ident()}_{next(_serial)}"
    names, selects = [], []
    try:
        for k, (col, values) in enumerate(columns.items()):
            name = f"anatid_np_{tag}_{k}"
            cur.register(name, np.ascontiguousarray(np.asarray(values).reshape(1, -1)))
            names.append(name)
            selects.append(f"{name}.column0 AS {col}")
        if vectors is not None:
            mat = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32).T)
            name = f"anatid_np_{tag}_v"
            cur.register(name, mat)
            names.append(name)
            selects.append("[" + ", ".join(f"{name}.column{i}" for i in range(mat.shape[0]))
                           + f"]::FLOAT[] AS {vector_name}")
        yield f"(SELECT {', '.join(selects)} FROM {' POSITIONAL JOIN '.join(names)})"
    finally:
        for name in names:
            cur.unregister(name)
