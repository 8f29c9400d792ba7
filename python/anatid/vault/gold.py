"""Gold questions from the vault itself, with no labelling: the wikilinks the
author wrote are the relevance labels (weak supervision, and it says so).

Four classes, each a different part of the pipeline:
* title: a note's title should find the note;
* body: its first prose paragraph should find it;
* bridge: that paragraph should surface the notes it links to;
* temporal: an outdated note's title should surface its replacement.

Outdated notes are only temporal sources: for them the right answer to their
own title is the replacement, so they would contradict the title class.
The sample is seeded; freeze the file and reuse it, because rebuilding the
gold between two runs makes them incomparable.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from . import notes as nt

CLASSES = ("title", "body", "bridge", "temporal")


def build_gold(vault, *, n_per_class: int = 60, seed: int = 0) -> list[dict]:
    root = Path(vault)
    paths = nt.scan(root)
    parsed = {p: nt.read_note(root, p) for p in paths}
    resolve = nt.Resolver(paths)
    replaced = {}
    for p, note in parsed.items():
        if note.superseded_by:
            dst = resolve(note.superseded_by)
            if dst and dst != p:
                replaced[p] = dst
    titles = {}
    for p, note in parsed.items():
        titles.setdefault(note.title.casefold(), []).append(p)
    rng = random.Random(seed)
    current = [p for p in paths if p not in replaced]
    out = []

    def pick(candidates):
        c = list(candidates)
        return rng.sample(c, min(n_per_class, len(c)))

    # a title two notes share has no single right answer: leave it out
    for p in pick(p for p in current if len(titles[parsed[p].title.casefold()]) == 1):
        out.append({"class": "title", "query": parsed[p].title, "relevant": [p], "source": p})
    for p in pick(p for p in current if len(parsed[p].first_paragraph.split()) >= 8):
        out.append({"class": "body", "query": parsed[p].first_paragraph, "relevant": [p], "source": p})
    bridges = []
    for p in current:
        targets = [t for t in dict.fromkeys(resolve(x) for x in parsed[p].links) if t and t != p]
        if targets and len(parsed[p].first_paragraph.split()) >= 8:
            bridges.append((p, targets))
    for p, targets in rng.sample(bridges, min(n_per_class, len(bridges))):
        out.append({"class": "bridge", "query": parsed[p].first_paragraph, "relevant": targets, "source": p})
    for p in pick(sorted(replaced)):
        out.append({"class": "temporal", "query": parsed[p].title, "relevant": [replaced[p]], "source": p,
                    "outdated": p})
    counters = {c: 0 for c in CLASSES}
    for q in out:
        counters[q["class"]] += 1
        q["id"] = f"{q['class']}-{counters[q['class']]:03d}"
    return out


def write_gold(questions: list[dict], path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False, sort_keys=True) + "\n")


def read_gold(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
