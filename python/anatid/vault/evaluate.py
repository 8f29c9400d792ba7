"""`anatid eval run`: score every gold question in every mode, per class, and
append the numbers to anatid_eval_runs so a later run can be compared with this one.
It calls the same VaultRecall.ask the agent calls: what is measured is what runs."""
from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from ..timeutil import utcnow
from . import tables
from .gold import CLASSES
from .metrics import mrr, ndcg_at, recall_at
from .recall import MODES, VaultRecall


@dataclass
class Score:
    mode: str
    query_class: str
    n: int
    recall: float
    mrr: float
    ndcg: float
    above_outdated: float | None = None


def above_outdated(ranked: list[str], replacement: str, outdated: str, k: int) -> bool:
    """The replacement is in the top k and ranks above the outdated note (or the outdated note is absent)."""
    top = ranked[:k]
    if replacement not in top:
        return False
    return outdated not in top or top.index(replacement) < top.index(outdated)


def run_eval(db, gold: list[dict], *, modes=MODES, k: int = 12, recaller: VaultRecall | None = None,
             as_of=None) -> list[Score]:
    rec = recaller or VaultRecall(db)
    vectors = rec.embedder.embed([q["query"] for q in gold]) if gold else []
    scores = []
    for mode in modes:
        per = {c: [] for c in CLASSES}
        for q, vec in zip(gold, vectors):
            ranked = rec.ask(q["query"], mode=mode, k=k, embedding=vec, as_of=as_of).paths
            rel = q["relevant"]
            above = above_outdated(ranked, rel[0], q["outdated"], k) if q["class"] == "temporal" else None
            per[q["class"]].append((recall_at(ranked, rel, k), mrr(ranked, rel), ndcg_at(ranked, rel, k), above))
        for c in CLASSES:
            rows = per[c]
            if not rows:
                continue
            n = len(rows)
            ab = [r[3] for r in rows if r[3] is not None]
            scores.append(Score(mode, c, n, sum(r[0] for r in rows) / n, sum(r[1] for r in rows) / n,
                                sum(r[2] for r in rows) / n, (sum(ab) / len(ab)) if ab else None))
    return scores


def record_run(db, scores: list[Score], *, gold_path: str, gold_text: bytes, embedder: str, k: int) -> str:
    run_id = uuid.uuid4().hex[:12]
    cur = db.connection
    tables.ensure(cur)
    at = utcnow().replace(tzinfo=None)
    sha = hashlib.sha256(gold_text).hexdigest()
    with db.transaction():
        for s in scores:
            cur.execute("INSERT INTO anatid_eval_runs VALUES ($r, $at, $g, $sha, $e, $m, $c, $n, $k, $rec, $mrr, "
                        "$ndcg, $ab)", {"r": run_id, "at": at, "g": gold_path, "sha": sha, "e": embedder,
                                        "m": s.mode, "c": s.query_class, "n": s.n, "k": k, "rec": s.recall,
                                        "mrr": s.mrr, "ndcg": s.ndcg, "ab": s.above_outdated})
    return run_id


def format_table(scores: list[Score], k: int) -> str:
    lines = [f"| class | mode | n | Recall@{k} | MRR | nDCG@{k} | replacement above outdated |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    order = {c: i for i, c in enumerate(CLASSES)}
    for s in sorted(scores, key=lambda s: (order[s.query_class], MODES.index(s.mode))):
        ab = "" if s.above_outdated is None else f"{s.above_outdated:.3f}"
        lines.append(f"| {s.query_class} | {s.mode} | {s.n} | {s.recall:.3f} | {s.mrr:.3f} | {s.ndcg:.3f} | {ab} |")
    return "\n".join(lines)
