"""Draw a Neighbourhood as SVG: one card per entity in columns by hop, RELATES
edges as curves labelled with their kind, each card listing the memory
versions filed under the entity with their validity and transaction intervals.

Every drawn element carries `data-key` (n:entity, e:edge, m:memory:version)
and `data-state` (current, past, future); the stylesheet fades past rows and
hides future ones, so the HTML page can replay time by changing the states.
"""
from __future__ import annotations

from datetime import datetime
from xml.sax.saxutils import escape, quoteattr

from .gather import Belief, Neighbourhood

CARD_W = 480
GAP_X = 170
GAP_Y = 26
HEAD_H = 40
LINE_H = 36
MARGIN = 24
CONTENT_CHARS = 70

# Shared by the standalone SVG and the HTML page.
STYLE = """
.anatid-show { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
.anatid-show .card { fill: #ffffff; stroke: #8a94a6; stroke-width: 1; }
.anatid-show .seed .card { stroke: #1f5fbf; stroke-width: 2; }
.anatid-show .name { font-size: 14px; font-weight: 600; fill: #1b2430; }
.anatid-show .title { font-size: 15px; font-weight: 600; fill: #1b2430; }
.anatid-show .meta { font-size: 10px; fill: #6b7685; }
.anatid-show .content { font-size: 12px; fill: #1b2430; }
.anatid-show .interval { font-size: 10px; fill: #55606e; }
.anatid-show .fate { font-size: 10px; font-style: italic; fill: #9a3b1b; display: none; }
.anatid-show .edge path { fill: none; stroke: #5b6b80; stroke-width: 1.5; }
.anatid-show .edge text { font-size: 11px; fill: #34404e; }
.anatid-show .empty { font-size: 11px; font-style: italic; fill: #8a94a6; }
.anatid-show [data-state="past"] { opacity: 0.38; }
.anatid-show [data-state="past"] .fate { display: inline; }
.anatid-show .edge[data-state="past"] path { stroke-dasharray: 5 4; }
.anatid-show [data-state="future"] { display: none; }
"""


def fmt_instant(t: datetime | None, *, full: bool = False) -> str:
    """2030-01-02 09:00, with seconds (and, when full, microseconds) only when they are not zero."""
    if t is None:
        return "open"
    text = t.strftime("%Y-%m-%d %H:%M")
    if t.second or t.microsecond:
        text += t.strftime(":%S")
        if full and t.microsecond:
            text += f".{t.microsecond:06d}"
    return text


def fmt_interval(start: datetime, end: datetime | None, *, full: bool = False) -> str:
    return f"[{fmt_instant(start, full=full)}, {fmt_instant(end, full=full)})"


def belief_intervals(b, *, full: bool = False) -> str:
    return f"valid {fmt_interval(b.valid_from, b.valid_to, full=full)}  tx {fmt_interval(b.tx_from, b.tx_to, full=full)}"


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _attrs(**kw) -> str:
    return "".join(f" {k.rstrip('_').replace('_', '-')}={quoteattr(str(v))}" for k, v in kw.items() if v is not None)


def layout(hood: Neighbourhood, beliefs: list[Belief]) -> tuple[dict[int, tuple[int, int, int]], int, int]:
    """entity_id -> (x, y, height) in columns by hop; and the drawing's width and height."""
    per_entity: dict[int, int] = {}
    for b in beliefs:
        per_entity[b.entity_id] = per_entity.get(b.entity_id, 0) + 1
    boxes, column_y = {}, {}
    for n in hood.nodes:
        h = HEAD_H + max(per_entity.get(n.entity_id, 0), 1) * LINE_H + 6
        y = column_y.get(n.hop, MARGIN)
        boxes[n.entity_id] = (MARGIN + n.hop * (CARD_W + GAP_X), y, h)
        column_y[n.hop] = y + h + GAP_Y
    width = MARGIN * 2 + (max(column_y) + 1) * CARD_W + max(column_y) * GAP_X
    height = max(column_y.values()) - GAP_Y + MARGIN
    return boxes, width, height


def _edge_geometry(a, b, lane: int) -> tuple[str, float, float, str]:
    """Path data, label position and direction arrow of a curve from card a to card b; lane
    spreads parallel edges apart."""
    ax, ay, _ = a
    bx, by, _ = b
    ay, by = ay + 20 + lane * 10, by + 20 + lane * 10
    if ax == bx:      # same column: an arc on the right of the cards
        arrow = "↓" if by > ay else "↑"
        x0 = x3 = ax + CARD_W
        reach = 50 + 24 * lane + min(abs(by - ay), 400) / 6
        x1 = x2 = x0 + reach
    else:
        arrow = "→" if bx > ax else "←"
        if bx < ax:
            (ax, ay), (bx, by) = (bx, by), (ax, ay)
        x0, x3 = ax + CARD_W, bx
        x1, x2 = x0 + (x3 - x0) / 2, x3 - (x3 - x0) / 2
    pts = [(x0, ay), (x1, ay), (x2, by), (x3, by)]
    lx = 0.125 * pts[0][0] + 0.375 * pts[1][0] + 0.375 * pts[2][0] + 0.125 * pts[3][0]
    ly = 0.125 * pts[0][1] + 0.375 * pts[1][1] + 0.375 * pts[2][1] + 0.125 * pts[3][1]
    d = "M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}".format(*(c for p in pts for c in p))
    return d, lx, ly, arrow


def svg_body(hood: Neighbourhood, *, frame: int | None = None, include_future: bool = True,
             offset_y: int = 0) -> tuple[str, int, int]:
    """The drawing's elements (no <svg> wrapper) with their states at `frame`; its width and height."""
    seen = hood.first_seen()

    def state(key):
        return hood.state(key, frame, seen)

    beliefs = [b for b in hood.beliefs if include_future or state(b.key) != "future"]
    links = [l for l in hood.links if include_future or state(l.key) != "future"]
    boxes, width, height = layout(hood, beliefs)
    names = {n.entity_id: n.name for n in hood.nodes}
    out = [f'<g transform="translate(0,{offset_y})">', '<g class="edges">']
    lanes: dict[tuple[int, int], int] = {}
    for l in links:
        pair = (min(l.src_id, l.dst_id), max(l.src_id, l.dst_id))
        lane = lanes[pair] = lanes.get(pair, -1) + 1
        d, lx, ly, arrow = _edge_geometry(boxes[l.src_id], boxes[l.dst_id], lane)
        kind = l.rel_kind or "related"
        tip = (f"{names[l.src_id]} —{kind}→ {names[l.dst_id]}  valid {fmt_interval(l.valid_from, l.valid_to, full=True)}"
               f"  tx {fmt_interval(l.tx_from, l.tx_to, full=True)}" + (f"  ({l.fate})" if l.fate else ""))
        out.append(f'<g{_attrs(class_="edge", data_key=l.key, data_state=state(l.key))}>'
                   f'<title>{escape(tip)}</title><path d="{d}"/>'
                   f'<text x="{lx:.1f}" y="{ly - 4:.1f}" text-anchor="middle">{escape(kind)} {arrow}</text></g>')
    out.append("</g>")

    by_entity: dict[int, list[Belief]] = {}
    # Oldest first within a card (ids grow with time), so rows yet to come sit at the bottom.
    for b in sorted(beliefs, key=lambda b: (b.memory_id, b.version)):
        by_entity.setdefault(b.entity_id, []).append(b)
    for n in hood.nodes:
        x, y, h = boxes[n.entity_id]
        cls = "node seed" if n.entity_id == hood.seed.entity_id else "node"
        meta = " · ".join(p for p in (n.kind, f"hop {n.hop}", f"since {fmt_instant(n.created_at)}") if p)
        out.append(f'<g{_attrs(class_=cls, data_key=n.key, data_state=state(n.key))} transform="translate({x},{y})">'
                   f'<rect class="card" width="{CARD_W}" height="{h}" rx="6"/>'
                   f'<text class="name" x="12" y="19">{escape(n.name)}</text>'
                   f'<text class="meta" x="12" y="33">{escape(meta)}</text>')
        mine = by_entity.get(n.entity_id, [])
        if not mine:
            out.append(f'<text class="empty" x="12" y="{HEAD_H + 16}">no memories filed here</text>')
        for i, b in enumerate(mine):
            top = HEAD_H + i * LINE_H
            out.append(f'<g{_attrs(class_="belief", data_key=b.key, data_state=state(b.key))}>'
                       f'<title>{escape(b.content)} — {escape(belief_intervals(b, full=True))}'
                       f'{escape(f" ({b.fate})") if b.fate else ""}</title>'
                       f'<text class="content" x="12" y="{top + 14}">{escape(_short(b.content, CONTENT_CHARS))}</text>'
                       f'<text class="interval" x="12" y="{top + 28}">{escape(belief_intervals(b))}'
                       f'<tspan class="fate" dx="8">{escape(b.fate or "")}</tspan></text></g>')
        out.append("</g>")
    out.append("</g>")
    return "\n".join(out), width, height


def render_svg(hood: Neighbourhood) -> str:
    """A standalone SVG of the picture's instant: rows first recorded later are left out."""
    at = hood.frames[hood.initial].at if hood.frames else None
    lines = [f"{hood.seed.name}: neighbourhood within {hood.hops} hops as of {fmt_instant(at, full=True)} UTC",
             "plain: believed and valid at that instant; faded: superseded, corrected, forgotten or cut before it"]
    lines += [f"left out: {note}" for note in hood.omitted]
    head_h = 22 + 16 * len(lines)
    body, width, height = svg_body(hood, include_future=False, offset_y=head_h)
    width = max(width, 760)
    texts = "".join(f'<text x="{MARGIN}" y="{24 + 16 * i}" class="{"title" if i == 0 else "meta"}">{escape(t)}</text>'
                    for i, t in enumerate(lines))
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" class="anatid-show" width="{width}" '
            f'height="{height + head_h}" viewBox="0 0 {width} {height + head_h}">\n'
            f"<style>{STYLE}</style>\n{texts}\n{body}\n</svg>\n")
