"""`anatid show`: a picture of an entity's neighbourhood through time.

    hood = gather(db, "Ada", hops=2)          # SQL over the canonical tables, replayed per change instant
    render_html(hood)                          # self-contained page with a time slider
    render_svg(hood)                           # static picture at the chosen instant

See docs/cli.md (`anatid show`).
"""
from __future__ import annotations

from .gather import Belief, Frame, Link, Neighbourhood, Node, gather
from .html import render_html
from .svg import render_svg

__all__ = ["Belief", "Frame", "Link", "Neighbourhood", "Node", "gather", "render_html", "render_svg"]
