"""docs/architecture.md must describe every table anatid creates."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def created_tables() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "python" / "anatid").rglob("*"):
        if path.suffix in (".py", ".sql") and path.is_file():
            names.update(re.findall(r"CREATE TABLE IF NOT EXISTS (anatid_[a-z_]+)", path.read_text(encoding="utf-8")))
    return names


def test_finds_tables_at_all():
    assert {"anatid_memories", "anatid_edges", "anatid_entities"} <= created_tables()


def test_every_table_is_documented():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = sorted(t for t in created_tables() if f"`{t}`" not in doc)
    assert not missing, f"tables missing from docs/architecture.md: {missing}"
