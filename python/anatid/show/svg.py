"""Draw a Neighbourhood as SVG: the seed's card on top, the entities further
out in nested groups below it (placed by layout.py to fit WIDTH px across),
each card listing its relations as sentences and the memory versions filed
under it with their validity and transaction intervals.

Every drawn element carries `data-key` (n:entity, e:edge, m:memory:version)
and `data-state` (current, past, future); the stylesheet fades past rows and
hides future ones, so the HTML page can replay time by changing the states.
"""
from __future__ import annotations

from datetime import datetime
from xml.sax.saxutils import escape, quoteattr

from .gather import Neighbourhood
from .layout import HEAD_H, MEM_H, NOTE_H, PAD, REL_H, Card, Fold, fit, layout, text_px

MARGIN = 16    # of the standalone SVG's heading

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
.anatid-show .relation { font-size: 11px; fill: #34404e; }
.anatid-show .more { font-size: 10px; fill: #6b7685; }
.anatid-show .foldtitle { font-size: 13px; font-weight: 600; fill: #4a5562; }
.anatid-show .fold .card { fill: #fbfbfc; stroke-dasharray: 4 3; }
.anatid-show .group rect { stroke: #d5d9e0; stroke-width: 1; }
.anatid-show .group.depth1 rect { fill: #f4f6f9; }
.anatid-show .group.depth2 rect { fill: #e9edf3; }
.anatid-show .group.depth3 rect { fill: #dfe5ee; }
.anatid-show .caption { font-size: 11px; fill: #4a5562; }
.anatid-show .link { stroke: #8a94a6; stroke-width: 1.5; }
.anatid-show .empty { font-size: 11px; font-style: italic; fill: #8a94a6; }
.anatid-show [data-state="past"] { opacity: 0.38; }
.anatid-show [data-state="past"] .fate { display: inline; }
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


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _attrs(**kw) -> str:
    return "".join(f" {k.rstrip('_').replace('_', '-')}={quoteattr(str(v))}" for k, v in kw.items() if v is not None)


def link_sentence(l, names, width: float | None = None, size: float = 11) -> str:
    """"Ada —works_with→ Babbage"; given a width, the names are cut before the kind is."""
    a, b, verb = names[l.src_id], names[l.dst_id], f" —{l.rel_kind or 'related'}→ "
    full = f"{a}{verb}{b}"
    if width is None or text_px(full, size) <= width:
        return full
    room = width - text_px(verb, size)
    half = room / 2
    a_w, b_w = text_px(a, size), text_px(b, size)
    if a_w < half:
        a, b = a, fit(b, room - a_w, size)
    elif b_w < half:
        a, b = fit(a, room - b_w, size), b
    else:
        a, b = fit(a, half, size), fit(b, half, size)
    return fit(f"{a}{verb}{b}", width, size)


def _link_tip(l, names) -> str:
    return (f"{link_sentence(l, names)}  valid {fmt_interval(l.valid_from, l.valid_to, full=True)}"
            f"  tx {fmt_interval(l.tx_from, l.tx_to, full=True)}" + (f"  ({l.fate})" if l.fate else ""))


def _text(cls: str, x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text class="{cls}" x="{x:g}" y="{y:g}">{escape(text)}{extra}</text>'


def _fate(fate: str | None, size: float) -> tuple[str, float]:
    """The fate tspan (shown only on faded rows) and the width it takes."""
    if not fate:
        return "", 0.0
    return f'<tspan class="fate" dx="8">{escape(fate)}</tspan>', 8 + text_px(fate, size)


def _card(c: Card, names, state) -> list[str]:
    n, inner = c.node, c.w - 24
    cls = "node seed" if c.seed else "node"
    meta = " · ".join(p for p in (n.kind, f"hop {n.hop}", f"since {fmt_instant(n.created_at)}") if p)
    out = [f'<g{_attrs(class_=cls, data_key=n.key, data_state=state(n.key))} transform="translate({c.x:g},{c.y:g})">'
           f'<title>{escape(n.name)}</title>'
           f'<rect class="card" width="{c.w:g}" height="{c.h:g}" rx="6"/>'
           f'<text class="name" x="12" y="19">{escape(fit(n.name, inner, 14, bold=True))}</text>'
           + _text("meta", 12, 33, fit(meta, inner, 10))]
    top = HEAD_H
    for l in c.rels:
        tspan, room = _fate(l.fate, 10)
        out.append(f'<g{_attrs(class_="rel", data_key=l.key, data_state=state(l.key))}>'
                   f'<title>{escape(_link_tip(l, names))}</title>'
                   + _text("relation", 12, top + 11, link_sentence(l, names, inner - room), tspan) + "</g>")
        top += REL_H
    if c.more_rels:
        out.append(_text("more", 12, top + 11, f"+{c.more_rels} more relation{_s(c.more_rels)}"))
        top += NOTE_H
    if not c.mems:
        out.append(_text("empty", 12, top + 14, "no memories filed here"))
        top += NOTE_H + 4
    rows = -(-len(c.mems) // c.mem_cols)
    col_w = (inner - (c.mem_cols - 1) * 16) / c.mem_cols
    for i, b in enumerate(c.mems):
        x, y = 12 + (i // rows) * (col_w + 16), top + (i % rows) * MEM_H
        tspan, room = _fate(b.fate, 10)
        longer, shorter = belief_intervals(b), "valid " + fmt_interval(b.valid_from, b.valid_to)
        when = longer if text_px(longer, 10) <= col_w - room else fit(shorter, col_w - room, 10)
        out.append(f'<g{_attrs(class_="belief", data_key=b.key, data_state=state(b.key))}>'
                   f'<title>{escape(b.content)} — {escape(belief_intervals(b, full=True))}'
                   f'{escape(f" ({b.fate})") if b.fate else ""}</title>'
                   + _text("content", x, y + 14, fit(b.content, col_w, 12))
                   + _text("interval", x, y + 28, when, tspan) + "</g>")
    top += rows * MEM_H
    if c.more_mems:
        out.append(_text("more", 12, top + 11, f"+{c.more_mems} more memor{'y' if c.more_mems == 1 else 'ies'}"))
        top += NOTE_H
    if c.further:
        out.append(_text("more", 12, top + 11, f"+{c.further} entit{'y' if c.further == 1 else 'ies'} further out, not drawn"))
    out.append("</g>")
    return out


def _fold(f: Fold, state) -> list[str]:
    inner = f.w - 24
    out = [f'<g class="fold" transform="translate({f.x:g},{f.y:g})">'
           f'<rect class="card" width="{f.w:g}" height="{f.h:g}" rx="6"/>'
           + _text("foldtitle", 12, 19, f"+{f.total} more")]
    top = HEAD_H - 14
    for n in f.listed:
        label = " · ".join(p for p in (n.name, n.kind) if p)
        out.append(f'<g{_attrs(class_="folded", data_key=n.key, data_state=state(n.key))}>'
                   f'<title>{escape(n.name)}</title>' + _text("relation", 12, top + 11, fit(label, inner, 11)) + "</g>")
        top += REL_H
    if f.total > len(f.listed):
        out.append(_text("more", 12, top + 11, f"and {f.total - len(f.listed)} others"))
        top += NOTE_H
    if f.further:
        out.append(_text("more", 12, top + 11, f"+{f.further} entit{'y' if f.further == 1 else 'ies'} further out, not drawn"))
    out.append("</g>")
    return out


def svg_body(hood: Neighbourhood, *, frame: int | None = None, include_future: bool = True,
             offset_y: int = 0) -> tuple[str, int, int]:
    """The drawing's elements (no <svg> wrapper) with their states at `frame`; its width and height."""
    seen = hood.first_seen()

    def state(key):
        return hood.state(key, frame, seen)

    beliefs = [b for b in hood.beliefs if include_future or state(b.key) != "future"]
    links = [l for l in hood.links if include_future or state(l.key) != "future"]
    plan = layout(hood, beliefs, links)
    names = {n.entity_id: n.name for n in hood.nodes}
    out = [f'<g transform="translate(0,{offset_y})">']
    for g in plan.groups:
        out.append(f'<g class="group depth{min(g.depth, 3)}"><rect x="{g.x:g}" y="{g.y:g}" width="{g.w:g}" '
                   f'height="{g.h:g}" rx="8"/>' + _text("caption", g.x + PAD, g.y + 13, g.caption) + "</g>")
    for x0, y0, x1, y1 in plan.connectors:
        out.append(f'<line class="link" x1="{x0:g}" y1="{y0:g}" x2="{x1:g}" y2="{y1:g}"/>')
    for c in plan.cards:
        out.extend(_card(c, names, state))
    for f in plan.folds:
        out.extend(_fold(f, state))
    out.append("</g>")
    return "\n".join(out), plan.width, plan.height

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
