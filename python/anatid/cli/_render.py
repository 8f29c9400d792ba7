"""Tables for people, drawn by rich: a header, a rule, one row per record, numbers
right-aligned, long cells wrapped (never cut, unless the caller asks, as `sql --max-width`
does). Plain text: no colour or escape codes, whatever stdout is.

The contract's names (exit codes, errors, JSON, opening a file) live in contract.py and
are re-exported here for the commands that import them from this module.
"""
from __future__ import annotations

import io
import shutil
from datetime import datetime

from .contract import (CliError, OpenError, UsageError, jsonable, open_db, print_error,  # noqa: F401
                       print_json)

OpenFailed = OpenError      # the older name


def fail(message: str, code: int) -> int:
    """Print `anatid: message` on stderr and return `code` (prefer raising a CliError)."""
    print_error("anatid", message)
    return code


def cell(value, width: int | None = None) -> str:
    """One cell as text: floats to 6 significant digits, lists joined, dicts as k=v."""
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    elif isinstance(value, dict):
        text = ", ".join(f"{k}={{{cell(v)}}}" if isinstance(v, dict) else f"{k}={cell(v)}"
                         for k, v in value.items() if v is not None)
    elif isinstance(value, (list, tuple)):
        text = ", ".join(cell(v) for v in value)
    elif isinstance(value, datetime):
        text = value.isoformat(sep=" ")
    else:
        text = str(value)
    text = text.replace("\n", " ").replace("\r", " ")
    if width is not None and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


def _width() -> int:
    return max(shutil.get_terminal_size((120, 24)).columns, 40)     # COLUMNS, the terminal, else 120


def _render(renderable, width: int | None) -> str:
    from rich.console import Console
    buf = io.StringIO()
    Console(file=buf, width=width or _width(), color_system=None, force_terminal=False, highlight=False,
            markup=False, emoji=False).print(renderable)
    return "\n".join(line.rstrip() for line in buf.getvalue().rstrip("\n").splitlines())


def table(headers: list[str], rows: list[list], *, max_width: int | None = None, width: int | None = None) -> str:
    """The rows as a text table. `max_width` cuts cells with an ellipsis; otherwise they wrap."""
    from rich import box
    from rich.table import Table
    from rich.text import Text
    numeric = [bool(rows) and all(isinstance(r[i], (int, float)) and not isinstance(r[i], bool)
                                  for r in rows if r[i] is not None) for i in range(len(headers))]
    cells = [[cell(v, max_width) for v in row] for row in rows]
    width = width or _width()
    # A column of single words (a check name, an id) is not wrapped when those columns fit side
    # by side with room to spare; the others wrap, and fold when they must: nothing is dropped.
    # (Not min_width: rich 15 then drops characters at a wrapped cell's edge.)
    single = [all(len(row[i].split()) <= 1 for row in cells) for i in range(len(headers))]
    widest = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    fits = sum(w for w, one in zip(widest, single) if one) + 3 * len(headers) + 20 <= width
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="", safe_box=True)
    for header, num, one in zip(headers, numeric, single):
        t.add_column(Text(header), justify="right" if num else "left", overflow="fold", no_wrap=one and fits)
    for row in cells:
        t.add_row(*(Text(c) for c in row))
    return _render(t, width)


def key_values(pairs: dict, *, width: int | None = None) -> str:
    """Two columns, key and value; nested dicts as k=v, wrapped, never cut."""
    from rich.table import Table
    from rich.text import Text
    if not pairs:
        return ""
    t = Table.grid(padding=(0, 2))
    t.add_column(no_wrap=True)
    t.add_column(overflow="fold")
    for key, value in pairs.items():
        t.add_row(Text(str(key)), Text(cell(value)))
    return _render(t, width)
