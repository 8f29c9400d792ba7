"""Output of the `anatid` commands: tables for people, JSON for scripts, a
progress bar on stderr for long work, and opening a file with a clear exit code.

Ids are above 2^53, where JSON readers in JavaScript lose digits, so JSON
output writes every integer outside +-2^53 as a decimal string.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

_SAFE_INT = 2 ** 53


# -- JSON -------------------------------------------------------------------------------------------
def jsonable(value):
    """Plain JSON types: big ints as strings, datetimes as ISO-8601, dataclasses as dicts."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)     # JSON has no NaN or infinity
    if isinstance(value, Decimal):
        return jsonable(float(value))
    if isinstance(value, int):
        return str(value) if abs(value) >= _SAFE_INT else value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)


def print_json(value) -> None:
    print(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


# -- tables -----------------------------------------------------------------------------------------
def cell(value, width: int | None = None) -> str:
    if value is None:
        text = ""
    elif isinstance(value, float):
        text = f"{value:.6g}"
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


def table(headers: list[str], rows: list[list], *, max_width: int = 60) -> str:
    """A plain text table: a header, a rule, one line per row, numbers right-aligned."""
    cells = [[cell(v, max_width) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    numeric = [bool(rows) and all(isinstance(r[i], (int, float)) and not isinstance(r[i], bool)
                                  for r in rows if r[i] is not None) for i in range(len(headers))]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def key_values(pairs: dict) -> str:
    if not pairs:
        return ""
    width = max(len(str(k)) for k in pairs)
    lines = []
    for key, value in pairs.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={cell(v)}" for k, v in value.items() if v is not None)
        lines.append(f"{key!s:<{width}}  {cell(value, 200)}")
    return "\n".join(lines)


# -- progress ---------------------------------------------------------------------------------------
class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal.

    Call it as `progress(done, total, label)`; it is the `progress=` callback
    long-running verbs accept. Pipes and CI logs get nothing.
    """

    def __init__(self, stream=None, width: int = 28, min_interval: float = 0.05):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self.min_interval = min_interval
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int | None = None, label: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        final = total is not None and done >= total
        if not final and now - self._last < self.min_interval:
            return
        self._last = now
        if total:
            filled = int(self.width * min(done, total) / total)
            bar = "#" * filled + "-" * (self.width - filled)
            text = f"\r[{bar}] {done}/{total} {label}"
        else:
            text = f"\r{label} {done}"
        self.stream.write(text[:200].ljust(60))
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- opening ----------------------------------------------------------------------------------------
class OpenFailed(Exception):
    """The memory file could not be opened; the message says why (exit code 3)."""


def open_db(path: str, *, tenant: int = 0, read_only: bool = True):
    """Anatid.open with the errors a person at a terminal can act on."""
    import duckdb

    from ..db import Anatid
    if path != ":memory:" and not Path(path).exists():
        raise OpenFailed(f"{path}: no such file")
    try:
        return Anatid.open(path, tenant=tenant, read_only=read_only)
    except duckdb.Error as exc:
        raise OpenFailed(f"{path}: {str(exc).splitlines()[0]}") from None


def fail(message: str, code: int) -> int:
    print(f"anatid: {message}", file=sys.stderr)
    return code
