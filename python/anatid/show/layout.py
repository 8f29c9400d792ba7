"""Where `anatid show` puts each card: a tree by hop that fits a fixed width.

The seed's card spans the top. Below it, in a shaded group, the entities one
hop out; an entity with neighbours further out has them in a group of its own
to its right, and entities with none sit in a grid. Every group holds at most
a few cards and folds the rest into one "+N more" card, and every card shows
at most a few relations and memories, saying how many it left out, so forty
entities fit 1,120 px across and a few screens down.

Relations are not drawn as labelled curves (forty of them overprint each
other): each one is a row in the card of its endpoint further from the seed,
written as a sentence ("Ada —works_with→ Babbage"), and the group a card sits
in says whose neighbours they are. Text is cut to what its box holds, by a
width estimate per character that errs wide.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .gather import Belief, Link, Neighbourhood, Node

WIDTH = 1120          # the drawing's width; the page scales it down in narrower windows
MARGIN = 16
GAP_X = 28            # between a card and the group of its neighbours
GAP_Y = 12            # between stacked cards and grid rows
GRID_GAP = 12
BRANCH_W = 290        # a card whose neighbours sit to its right
MIN_W = 260           # narrowest card in a grid
MAX_W = 400
PAD = 10              # inside a group, around its cards
CAPTION_H = 18

HEAD_H = 40           # name and meta lines
REL_H = 16
MEM_H = 34
NOTE_H = 16

SEED_KIDS = 12        # cards in the seed's group, the "+N more" card included
KIDS = 6              # cards in any other group
RELS = 3              # relation rows per card
MEMS = 2              # memory rows per card (the seed's card shows every one gathered)
FOLD_ROWS = 6         # names a "+N more" card lists


def text_px(text: str, size: float, *, bold: bool = False) -> float:
    """An upper-end estimate of the width of `text` in the page's sans-serif at `size` px."""
    per = 0.6 if bold else 0.56
    return sum(size * (per * 1.25 if ch.isupper() or ch in "mwMW—…" else per) for ch in text)


def fit(text: str, width: float, size: float, *, bold: bool = False) -> str:
    """`text` with runs of white space collapsed, cut with an ellipsis to fit `width` px."""
    text = " ".join(text.split())
    if text_px(text, size, bold=bold) <= width:
        return text
    while text and text_px(text + "…", size, bold=bold) > width:
        text = text[:-1]
    return text.rstrip() + "…"


@dataclass
class Card:
    node: Node
    x: float
    y: float
    w: float
    h: float = 0
    rels: list[Link] = field(default_factory=list)
    more_rels: int = 0
    mems: list[Belief] = field(default_factory=list)   # oldest first
    more_mems: int = 0
    further: int = 0                                   # entities beyond this one left undrawn
    mem_cols: int = 1
    seed: bool = False


@dataclass
class Fold:
    """The "+N more" card of a group: the entities it folds, the first few by name."""

    x: float
    y: float
    w: float
    listed: list[Node]
    total: int
    further: int
    h: float = 0


@dataclass
class Group:
    x: float
    y: float
    w: float
    h: float
    depth: int
    caption: str


@dataclass
class Layout:
    cards: list[Card]
    folds: list[Fold]
    groups: list[Group]
    connectors: list[tuple[float, float, float, float]]   # straight lines x0, y0, x1, y1
    width: int
    height: int


class _Tree:
    """Each entity's parent: its first neighbour (in the gathered order) one hop nearer."""

    def __init__(self, hood: Neighbourhood, links: list[Link]):
        self.order = {n.entity_id: i for i, n in enumerate(hood.nodes)}
        self.nodes = {n.entity_id: n for n in hood.nodes}
        self.seed = hood.seed.entity_id
        near: dict[int, set[int]] = {}
        for l in links:
            if l.src_id in self.order and l.dst_id in self.order:
                near.setdefault(l.src_id, set()).add(l.dst_id)
                near.setdefault(l.dst_id, set()).add(l.src_id)
        self.parent: dict[int, int] = {}
        self.kids: dict[int, list[int]] = {n.entity_id: [] for n in hood.nodes}
        for n in hood.nodes[1:]:
            up = [m for m in near.get(n.entity_id, ()) if self.nodes[m].hop == n.hop - 1]
            # no nearer neighbour among the kept relations (the relation cap cut it): under the seed
            p = min(up, key=self.order.__getitem__) if up else self.seed
            self.parent[n.entity_id] = p
            self.kids[p].append(n.entity_id)
        # each relation is a row in the card of its endpoint further out (later in the order on a tie)
        self.rels: dict[int, list[Link]] = {}
        for l in links:
            if l.src_id in self.order and l.dst_id in self.order:
                owner = max(l.src_id, l.dst_id, key=lambda e: (self.nodes[e].hop, self.order[e]))
                self.rels.setdefault(owner, []).append(l)
        for owner, rows in self.rels.items():
            p = self.parent.get(owner)
            rows.sort(key=lambda l: (p not in (l.src_id, l.dst_id), l.edge_id))

    def descendants(self, e: int) -> int:
        return sum(1 + self.descendants(k) for k in self.kids[e])


def layout(hood: Neighbourhood, beliefs: list[Belief], links: list[Link]) -> Layout:
    """Place every card, group and "+N more" card; `beliefs` in gather's order (the ones the
    picture's instant shows first, then the newest), so a card keeps its most telling rows."""
    tree = _Tree(hood, links)
    mine: dict[int, list[Belief]] = {}
    for b in beliefs:
        mine.setdefault(b.entity_id, []).append(b)
    out = Layout([], [], [], [], WIDTH, 0)

    def card(e: int, x: float, y: float, w: float, *, seed: bool = False, further: int = 0) -> Card:
        c = Card(tree.nodes[e], x, y, w, seed=seed, further=further)
        rels = tree.rels.get(e, [])
        c.rels, c.more_rels = rels[:RELS], max(0, len(rels) - RELS)
        mems = mine.get(e, [])
        keep = mems if seed else mems[:MEMS]
        c.mems = sorted(keep, key=lambda b: (b.memory_id, b.version))
        c.more_mems = len(mems) - len(keep)
        c.mem_cols = 2 if seed and len(keep) > 4 and w >= 700 else 1
        rows = math.ceil(len(keep) / c.mem_cols)
        c.h = (HEAD_H + len(c.rels) * REL_H + (NOTE_H if c.more_rels else 0)
               + (rows * MEM_H if keep else NOTE_H + 4) + (NOTE_H if c.more_mems else 0)
               + (NOTE_H if further else 0) + 6)
        out.cards.append(c)
        return c

    def group(kids: list[int], x: float, y: float, avail: float, limit: int, depth: int) -> float:
        """Lay out `kids` in the box from (x, y), `avail` wide; the bottom of what it drew."""
        shown, folded = (kids, []) if len(kids) <= limit else (kids[: limit - 1], kids[limit - 1:])
        inner = avail - BRANCH_W - GAP_X - 2 * PAD
        branch = [k for k in shown if tree.kids[k] and inner >= MIN_W]
        bottom = y - GAP_Y
        for k in branch:
            c = card(k, x, bottom + GAP_Y, BRANCH_W)
            gx = x + BRANCH_W + GAP_X
            name = fit(c.node.name, 160, 11)
            g = Group(gx, c.y, avail - BRANCH_W - GAP_X, 0, depth + 1,
                      f"related to {name} · hop {c.node.hop + 1}")
            out.groups.append(g)
            end = group(tree.kids[k], gx + PAD, c.y + CAPTION_H + PAD, g.w - 2 * PAD, KIDS, depth + 1)
            g.h = end + PAD - g.y
            out.connectors.append((x + BRANCH_W, c.y + 20, gx, c.y + 20))
            bottom = max(c.y + c.h, g.y + g.h)
        items = [k for k in shown if k not in branch] + ([None] if folded else [])
        if not items:
            return bottom
        cols = max(1, int((avail + GRID_GAP) // (MIN_W + GRID_GAP)))
        w = min(MAX_W, (avail - (cols - 1) * GRID_GAP) / cols)
        for start in range(0, len(items), cols):
            top, row = bottom + GAP_Y, []
            for i, k in enumerate(items[start:start + cols]):
                cx = x + i * (w + GRID_GAP)
                if k is None:
                    f = Fold(cx, top, w, [tree.nodes[e] for e in folded[:FOLD_ROWS]], len(folded),
                             sum(tree.descendants(e) for e in folded))
                    f.h = (HEAD_H - 14 + len(f.listed) * REL_H + (NOTE_H if f.total > len(f.listed) else 0)
                           + (NOTE_H if f.further else 0) + 8)
                    out.folds.append(f)
                    row.append(f.h)
                else:
                    row.append(card(k, cx, top, w, further=tree.descendants(k)).h)
            bottom = top + max(row)
        return bottom

    seed = card(tree.seed, MARGIN, MARGIN, WIDTH - 2 * MARGIN, seed=True)
    bottom = seed.y + seed.h
    if tree.kids[tree.seed]:
        g = Group(MARGIN, bottom + GAP_Y + 6, WIDTH - 2 * MARGIN, 0, 1,
                  f"related to {fit(seed.node.name, 300, 11)} · hop 1")
        out.groups.append(g)
        out.connectors.append((MARGIN + 40, bottom, MARGIN + 40, g.y))
        end = group(tree.kids[tree.seed], g.x + PAD, g.y + CAPTION_H + PAD, g.w - 2 * PAD, SEED_KIDS, 1)
        g.h = end + PAD - g.y
        bottom = g.y + g.h
    out.height = int(math.ceil(bottom + MARGIN))
    # groups first, so nested ones paint over the ones that hold them
    out.groups.sort(key=lambda g: g.depth)
    return out
