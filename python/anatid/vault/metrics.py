"""Retrieval metrics with binary relevance, and their self-test.

A ranking may name the same note twice (two chunks, or a bug upstream): every
metric counts a note once, at its first position. `ANATID_EVAL_MUTANT=1` breaks
nDCG on purpose (it returns 1.0); the tests must go red under it, which is how
we know they test the metric.
"""
from __future__ import annotations

import math
import os
from typing import Sequence


def _dedup(ranked: Sequence[str]) -> list[str]:
    seen, out = set(), []
    for r in ranked:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    rel = set(relevant)
    if not rel:
        return 0.0
    return len(rel.intersection(_dedup(ranked)[:k])) / len(rel)


def mrr(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    rel = set(relevant)
    for i, r in enumerate(_dedup(ranked)):
        if r in rel:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    if os.environ.get("ANATID_EVAL_MUTANT") == "1":
        return 1.0
    rel = set(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(_dedup(ranked)[:k]) if r in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / ideal


# (function, args, expected) computed by hand; see docs/quality.md for the arithmetic.
SELFTEST = [
    (recall_at, (["a", "b", "c"], ["b", "x"], 2), 0.5),
    (recall_at, (["a", "b", "c"], ["c"], 2), 0.0),
    (recall_at, (["b", "b", "a"], ["a", "b"], 2), 1.0),   # a duplicate takes no slot
    (mrr, (["a", "b", "c"], ["c"]), 1 / 3),
    (mrr, (["a", "a", "c"], ["c"]), 0.5),
    (mrr, (["a"], ["z"]), 0.0),
    (ndcg_at, (["a", "b"], ["a"], 12), 1.0),
    (ndcg_at, (["x", "a"], ["a"], 12), 1 / math.log2(3)),                       # 0.6309
    (ndcg_at, (["x", "a", "y", "b"], ["a", "b"], 12), (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))),
    (ndcg_at, (["foo", "foo"], ["foo"], 12), 1.0),                              # never above 1
    (ndcg_at, (["x", "y"], ["a"], 12), 0.0),
    (ndcg_at, (["x", "a"], ["a"], 1), 0.0),
]


def selftest() -> list[str]:
    """Failures as readable lines; empty when every hand-computed value matches."""
    bad = []
    for fn, args, want in SELFTEST:
        got = fn(*args)
        if abs(got - want) > 1e-9:
            bad.append(f"{fn.__name__}{args} = {got:.6f}, expected {want:.6f}")
    return bad
