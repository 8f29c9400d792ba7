"""A self-contained HTML page for a Neighbourhood: the SVG inline, the frames
as an inline JSON block, the slider's script inline. It references nothing
outside itself (no URLs, fonts or scripts), so it opens offline and anywhere."""
from __future__ import annotations

import json
from datetime import datetime
from importlib import resources
from xml.sax.saxutils import escape

from .gather import Neighbourhood
from .svg import STYLE, link_sentence, belief_intervals, fmt_instant, fmt_interval, svg_body

_EPOCH = datetime(1970, 1, 1)

PAGE_STYLE = """
body { margin: 16px 24px; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b2430; background: #f6f7f9; }
h1 { font-size: 20px; margin: 0 0 4px; }
.summary, .omitted, .legend { font-size: 13px; color: #4a5562; margin: 2px 0; }
.omitted { color: #9a3b1b; }
.controls { position: sticky; top: 0; background: #f6f7f9; padding: 8px 0; z-index: 1; }
#anatid-slider { width: min(640px, 50vw); vertical-align: middle; }
#anatid-instant { font-weight: 600; margin-left: 12px; white-space: nowrap; }
#anatid-events { font-size: 13px; margin: 4px 0 0; min-height: 1.2em; }
.drawing { background: #ffffff; border: 1px solid #d5d9e0; max-width: max-content; overflow-x: auto; }
/* laid out WIDTH px across: scaled down to fit a narrower window, but not below 960 px, where
   the smallest text would be too small to read; a window narrower still scrolls the drawing */
.drawing svg { display: block; width: 100%; min-width: 960px; height: auto; }
h2 { font-size: 15px; margin: 20px 0 0; }
table { border-collapse: collapse; font-size: 12px; margin-top: 8px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
"""


def _ms(t: datetime) -> int:
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _script() -> str:
    return resources.files(__package__).joinpath("show.js").read_text(encoding="utf-8")


def _json_for_script(value) -> str:
    # "<" escaped so no memory text can close the <script> element early.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def render_html(hood: Neighbourhood) -> str:
    keys = list(dict.fromkeys([n.key for n in hood.nodes] + [l.key for l in hood.links]
                              + [b.key for b in hood.beliefs]))
    index = {k: i for i, k in enumerate(keys)}
    frames = [{"ms": _ms(f.at), "label": fmt_instant(f.at, full=True), "events": f.events,
               "v": sorted(index[k] for k in f.visible if k in index)} for f in hood.frames]
    data = {"keys": keys, "frames": frames, "initial": hood.initial}
    body, width, height = svg_body(hood, include_future=True)
    names = {n.entity_id: n.name for n in hood.nodes}
    rows = []
    for b in hood.beliefs:
        rows.append(f'<tr data-key="{escape(b.key)}" data-state="{hood.state(b.key)}">'
                    f"<td>{escape(names[b.entity_id])}</td><td>{escape(b.content)}</td><td>{escape(b.kind)}</td>"
                    f"<td>{escape(belief_intervals(b, full=True))}</td><td>{escape(b.fate or '')}</td></tr>")
    relations = []
    for l in hood.links:
        relations.append(f'<tr data-key="{escape(l.key)}" data-state="{hood.state(l.key)}">'
                         f"<td>{escape(link_sentence(l, names))}</td>"
                         f"<td>valid {escape(fmt_interval(l.valid_from, l.valid_to, full=True))}  "
                         f"tx {escape(fmt_interval(l.tx_from, l.tx_to, full=True))}</td><td>{escape(l.fate or '')}</td></tr>")
    omitted = "".join(f'<p class="omitted">left out: {escape(note)}</p>' for note in hood.omitted)
    title = f"{hood.seed.name}: neighbourhood within {hood.hops} hops"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · anatid</title>
<style>{PAGE_STYLE}{STYLE}</style>
</head>
<body>
<h1>{escape(title)}</h1>
<p class="summary">{len(hood.nodes)} entities, {len(hood.links)} relations, {len(set(b.key for b in hood.beliefs))} memory versions, {len(hood.frames)} change instants; tenant {hood.tenant}; times in UTC.</p>
<p class="legend">Plain: believed and valid at the slider's instant. Faded: believed earlier, since superseded, corrected, forgotten or cut. Intervals are half-open: valid [from, to) when it was true, tx [from, to) when the memory believed it.</p>
{omitted}
<div class="controls">
<input id="anatid-slider" type="range" min="0" max="{max(len(frames) - 1, 0)}" step="1" value="{hood.initial}" aria-label="as of">
<span id="anatid-instant"></span>
<ul id="anatid-events"></ul>
</div>
<div id="anatid-root" class="anatid-show" data-frame="{hood.initial}">
<div class="drawing">
<svg class="anatid-show" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">
{body}
</svg>
</div>
<h2>Every memory version gathered</h2>
<table>
<thead><tr><th>entity</th><th>memory</th><th>kind</th><th>intervals</th><th>fate</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody>
</table>
<h2>Every relation among them</h2>
<table>
<thead><tr><th>relation</th><th>intervals</th><th>fate</th></tr></thead>
<tbody>
{chr(10).join(relations)}
</tbody>
</table>
</div>
<script type="application/json" id="anatid-data">{_json_for_script(data)}</script>
<script>
{_script()}
</script>
</body>
</html>
"""
