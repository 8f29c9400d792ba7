"""The conversational ruler: load seeded conversations through the public API, ask every
question with `recall()`, score the evidence turns per question class.

The load is the one a new user writes from the README: one tenant per conversation,
every turn one memory through `remember_many` (content "<speaker>: <text>", entities =
the speaker plus the capitalised names in the turn, the session stored once with
`episode()` and passed as each turn's `episode`, `valid_from` = the session's date, an
embedding when an embedder is given), `maintain_indexes()`, then one
`recall(question, embedding=..., k=k)` per question with default settings unless a
configuration says otherwise. Metrics are the vault ruler's (anatid.vault.metrics), so
its mutant switch (ANATID_EVAL_MUTANT=1) breaks this ruler's nDCG too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from ..vault.metrics import mrr, ndcg_at, recall_at
from .synth import CLASSES, Conversation, generate

# Capitalised words that open a sentence in the generator's templates are not names.
_NAME = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_NOT_NAMES = frozenset("""Hey Hi Good Morning Busy I Pretty Haha That Work We Thanks The Same Oh Honestly How
Everyone Music Talk Bye Gotta See Wait Tell So It Exhausting Loved Yesterday Just A Big My Did Time Time What
Would Which When According Long""".split())


def names_in(text: str) -> list[str]:
    """Capitalised names in a turn: runs of capitalised words, minus sentence words."""
    out = []
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        while words and words[0] in _NOT_NAMES:
            words = words[1:]
        if words:
            name = " ".join(words)
            if name not in out:
                out.append(name)
    return out


@dataclass
class Loaded:
    conversation: Conversation
    tenant: int
    ids: list[int]          # memory id of each turn


def load(db_factory, conversations: Sequence[Conversation], embedder=None, *, batch: int = 5000,
         maintain: bool = True) -> list[Loaded]:
    """Write every conversation into its own tenant (db_factory(tenant) -> an open Anatid);
    `maintain`: build the index generations after each (False leaves everything in the journals)."""
    loaded = []
    for t, conv in enumerate(conversations):
        db = db_factory(t)
        vecs = embedder.embed([turn.content for turn in conv.turns]) if embedder is not None else None
        sessions: dict[int, int] = {}
        for s, date in enumerate(conv.session_dates):
            text = "\n".join(turn.content for turn in conv.turns if turn.session == s)
            sessions[s] = db.episode(f"session {s + 1} on {date:%d %B %Y}\n{text}").episode_id
        items = []
        for i, turn in enumerate(conv.turns):
            ents = [turn.speaker] + [n for n in names_in(turn.text) if n != turn.speaker]
            item = {"content": turn.content, "entities": ents, "episode": sessions[turn.session],
                    "valid_from": turn.date}
            if vecs is not None:
                item["embedding"] = vecs[i]
            items.append(item)
        ids = []
        for start in range(0, len(items), batch):
            ids += [int(m) for m in db.remember_many(items[start:start + batch])]
        if maintain:
            db.maintain_indexes()
        loaded.append(Loaded(conv, t, ids))
    return loaded


@dataclass
class ClassScore:
    cls: str
    n: int
    r5: float
    r10: float
    ndcg10: float
    mrr: float


def score(db_factory, loaded: Sequence[Loaded], embedder=None, *, k: int = 10,
          recall_kwargs: Callable[[object], dict] | dict | None = None) -> list[ClassScore]:
    """Per-class means of R@5, R@10, nDCG@10 and MRR over every question."""
    sums: dict[str, list[float]] = {c: [0, 0.0, 0.0, 0.0, 0.0] for c in CLASSES}
    for item in loaded:
        db = db_factory(item.tenant)
        qs = item.conversation.questions
        qvecs = embedder.embed([q.question for q in qs]) if embedder is not None else [None] * len(qs)
        for q, qv in zip(qs, qvecs):
            kw = dict(recall_kwargs or {})
            if qv is not None:
                kw["embedding"] = qv
            hits = db.recall(q.question, k=max(k, 10), **kw)
            ranked = [str(h.memory_id) for h in hits]
            rel = [str(item.ids[i]) for i in q.evidence]
            s = sums[q.cls]
            s[0] += 1
            s[1] += recall_at(ranked, rel, 5)
            s[2] += recall_at(ranked, rel, 10)
            s[3] += ndcg_at(ranked, rel, 10)
            s[4] += mrr(ranked, rel)
    return [ClassScore(c, int(v[0]), *(x / v[0] for x in v[1:])) for c, v in sums.items() if v[0]]


def overall(scores: Sequence[ClassScore]) -> ClassScore:
    n = sum(s.n for s in scores)
    avg = [sum(getattr(s, f) * s.n for s in scores) / n for f in ("r5", "r10", "ndcg10", "mrr")]
    return ClassScore("all", n, *avg)


def format_table(rows: dict[str, list[ClassScore]]) -> str:
    """A markdown table: one row per configuration, R@10 per class, then all-class R@10 and nDCG@10."""
    classes = [c for c in CLASSES if any(s.cls == c for v in rows.values() for s in v)]
    lines = ["| configuration | " + " | ".join(classes) + " | all R@10 | all nDCG@10 |",
             "|---|" + "---|" * (len(classes) + 2)]
    for name, scores in rows.items():
        by = {s.cls: s for s in scores}
        o = overall(scores)
        lines.append(f"| {name} | " + " | ".join(f"{by[c].r10:.3f}" if c in by else "-" for c in classes)
                     + f" | {o.r10:.3f} | {o.ndcg10:.3f} |")
    return "\n".join(lines)


__all__ = ["generate", "load", "score", "overall", "format_table", "names_in", "ClassScore", "Loaded"]
