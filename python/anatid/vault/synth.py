"""A seeded synthetic vault: anyone can regenerate the notes the quality numbers
were measured on (`anatid eval synth DIR --seed 7`).

What it contains, on purpose:
* notes in topic folders, each with its own few signature words, so a note's
  first paragraph finds the note itself but not what it links to;
* wikilinks within a topic and across topics (bridges), some inline in the
  first paragraph, most further down, with aliases and heading anchors;
* chains A -> B -> C across three topics (multi-hop bridges);
* supersessions: an outdated note whose front matter says
  `superseded_by: "[[newer]]"`, and its rewrite with a near-identical title;
* near-duplicate names: the same file name in two folders, titles that differ
  by one word;
* the traps a real vault has: a BOM, a link inside a code fence, a dot-folder,
  a sync-conflict copy, a note titled only by front matter or only by its file name.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

TOPICS = {
    "databases": "index query planner table column row transaction lock replica shard vacuum checkpoint "
                 "journal cursor schema join partition snapshot isolation backup",
    "gardening": "tomato compost soil seedling mulch pruning trellis basil irrigation greenhouse aphid "
                 "fertilizer harvest perennial bulb hedge orchard rose weeding",
    "cooking": "dough yeast oven braise stock sauce knife skillet caramel simmer marinade pastry broth "
               "spice roast ferment butter vinegar garlic",
    "networking": "router packet latency firewall subnet gateway socket handshake bandwidth switch dns "
                  "proxy tunnel route mtu vlan certificate port",
    "music": "chord melody rhythm tempo scale harmony guitar piano drum lyric chorus bridge verse "
             "octave tuning amplifier metronome cadence",
    "finance": "budget invoice ledger tax dividend interest loan savings expense receipt pension mortgage "
               "portfolio inflation forecast payroll audit",
    "travel": "passport itinerary luggage train hostel visa ferry airport map border hike trail "
              "camping souvenir currency timetable reservation",
    "health": "sleep running stretching protein vitamin posture injury recovery heart breathing "
              "hydration meditation fatigue strength cardio physio",
    "writing": "draft outline chapter editor manuscript paragraph metaphor narrator plot dialogue "
               "revision essay citation footnote voice pacing",
    "deploy": "pipeline container rollout canary release image cluster manifest rollback secret "
              "registry artifact staging probe sidecar quota",
    "reading": "novel author library bookmark review genre series poetry biography translation "
               "anthology archive shelf catalogue borrow chapterbook",
    "photography": "lens aperture shutter exposure tripod sensor flash portrait landscape focus "
                   "histogram filter zoom darkroom negative print",
}
ADJECTIVES = ("quick slow stable fragile hidden obvious careful noisy quiet early late cheap costly "
              "simple tricky fresh stale shared local remote").split()
VERBS = ("affects depends on replaces feeds limits explains shapes follows precedes protects "
         "complicates improves").split()
TEMPLATES = [
    "The {a} {v} the {b} when the {c} is {adj}.",
    "A {adj} {a} usually means the {b} needs attention before the {c}.",
    "We learned that {a} and {b} interact through the {c}.",
    "Check the {a} first; the {b} only matters once the {c} is {adj}.",
    "Notes on {a}: keep the {b} {adj} and watch the {c}.",
]
SUFFIXES = ["notes", "checklist", "basics", "pitfalls", "log", "ideas", "plan", "review"]


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _sentence(rng: random.Random, words: list[str]) -> str:
    a, b, c = rng.sample(words, 3)
    return rng.choice(TEMPLATES).format(a=a, b=b, c=c, v=rng.choice(VERBS), adj=rng.choice(ADJECTIVES))


def generate(out: str | Path, *, notes: int = 300, seed: int = 7) -> dict:
    """Write a vault of `notes` notes (200-500 is the intended range) under `out`. Returns a summary."""
    if not 20 <= notes <= 5000:
        raise ValueError("notes must be between 20 and 5000")
    rng = random.Random(seed)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    vocab = {t: w.split() for t, w in TOPICS.items()}
    topics = list(vocab)
    n_super = max(2, notes // 15)
    n_base = notes - n_super
    specs, titles = [], set()
    while len(specs) < n_base:
        topic = topics[len(specs) % len(topics)]
        w1, w2 = rng.sample(vocab[topic], 2)
        title = f"{w1.capitalize()} {w2}"
        if rng.random() < 0.25:
            title += f" {rng.choice(SUFFIXES)}"
        if title.lower() in titles:
            continue
        titles.add(title.lower())
        signature = rng.sample(vocab[topic], 6)
        specs.append({"title": title, "topic": topic, "folder": topic, "signature": signature,
                      "links": [], "inline": [], "supersedes": None})
    # near-duplicate names: one word apart, and the same file name in another folder
    for i in range(0, len(specs), 37):
        j = (i + 5) % len(specs)
        if specs[j]["topic"] != specs[i]["topic"]:
            specs[j]["folder"] = specs[i]["topic"] if rng.random() < 0.5 else specs[j]["folder"]
    for i in range(3, len(specs), 53):
        twin = dict(specs[i], folder="archive", links=[], inline=[], signature=rng.sample(vocab[specs[i]["topic"]], 6))
        twin["title"] = specs[i]["title"]
        twin["dup_of"] = i
        specs.append(twin)
    # links: two to four per note, about one in three across topics
    by_topic = {t: [i for i, s in enumerate(specs) if s["topic"] == t] for t in topics}
    for i, s in enumerate(specs):
        for _ in range(rng.randint(2, 4)):
            same = rng.random() < 0.65
            pool = by_topic[s["topic"]] if same else by_topic[rng.choice([t for t in topics if t != s["topic"]])]
            j = rng.choice(pool)
            if j != i and j not in s["links"]:
                s["links"].append(j)
        if s["links"] and rng.random() < 0.3:
            s["inline"].append(s["links"][0])
    # multi-hop bridges: A -> B -> C across three topics
    for _ in range(len(specs) // 10):
        a, b, c = (rng.choice(by_topic[t]) for t in rng.sample(topics, 3))
        if b not in specs[a]["links"] and b != a:
            specs[a]["links"].append(b)
        if c not in specs[b]["links"] and c != b:
            specs[b]["links"].append(c)
    # supersessions: rewrites of existing notes, with a near-identical title
    olds = rng.sample(range(n_base), n_super)
    for k in olds:
        old = specs[k]
        new = {"title": f"{old['title']} 2025", "topic": old["topic"], "folder": old["folder"],
               "signature": old["signature"][:4] + rng.sample(vocab[old["topic"]], 2),
               "links": list(old["links"][:2]), "inline": [], "supersedes": k}
        specs.append(new)
        old["superseded_by"] = len(specs) - 1
    # file names: slug of the title; the archive twins share their original's file name
    paths = []
    for i, s in enumerate(specs):
        base = _slug(s["title"])
        paths.append(f"{s['folder']}/{base}.md")
    seen = set()
    for i, p in enumerate(paths):
        while p in seen:
            p = p[:-3] + "-b.md"
        seen.add(p)
        paths[i] = p
    stems = [p.rsplit("/", 1)[-1][:-3] for p in paths]
    ambiguous = {st for st in stems if stems.count(st) > 1}

    def link(j: int, style: int) -> str:
        target = paths[j][:-3] if stems[j] in ambiguous else stems[j]
        if style == 1:
            return f"[[{target}|{specs[j]['title'].lower()}]]"
        if style == 2:
            return f"[[{target}#Details]]"
        return f"[[{target}]]"

    for i, s in enumerate(specs):
        words = s["signature"]
        first = " ".join(_sentence(rng, words) for _ in range(3))
        if s["inline"]:
            first += f" It builds on {link(s['inline'][0], rng.randint(0, 2))}."
        parts = []
        front = []
        style = i % 10
        if style == 0:
            front.append(f"title: {s['title']}")
        if s.get("superseded_by") is not None:
            front.append(f'superseded_by: "{link(s["superseded_by"], 0)}"')
        if front:
            parts.append("---\n" + "\n".join(front) + "\ntags: [synthetic]\n---")
        if style not in (0, 9):
            parts.append(f"# {s['title']}")
        parts.append(first)
        parts.append("## Details\n\n" + " ".join(_sentence(rng, words) for _ in range(4)))
        rest = [j for j in s["links"] if j not in s["inline"]]
        if rest:
            parts.append("See also: " + ", ".join(link(j, rng.randint(0, 2)) for j in rest) + ".")
        if s["supersedes"] is not None:
            parts.append(f"This rewrite replaces {link(s['supersedes'], 0)}.")
        if i % 17 == 0:
            parts.append("```\nexample [[not-a-note]] inside a fence\n```")
        text = "\n\n".join(parts) + "\n"
        path = root / paths[i]
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        if i % 23 == 0:
            data = b"\xef\xbb\xbf" + data
        path.write_bytes(data)
    # traps that must be skipped
    (root / ".obsidian").mkdir(exist_ok=True)
    (root / ".obsidian" / "workspace.md").write_text("[[ghost]] settings, not a note\n", encoding="utf-8")
    conflict = root / (paths[1][:-3] + ".sync-conflict-20250101-120000-ABCDEFG.md")
    conflict.write_text("# A stale copy\n\nSync left this behind.\n", encoding="utf-8")
    return {"notes": len(specs), "superseded": n_super, "seed": seed, "path": str(root)}
