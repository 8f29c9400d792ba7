"""docs/sql.md's hybrid recall examples run, on the native extension, against the
dinner party of examples/dinner_party.py with a guests.csv beside them."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from anatid import Anatid

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def hybrid_blocks() -> list[str]:
    text = (ROOT / "docs" / "sql.md").read_text(encoding="utf-8")
    section = text.split("## Hybrid recall", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, flags=re.S)


def test_docs_have_hybrid_examples():
    assert len(hybrid_blocks()) >= 4


def test_hybrid_examples_run(tmp_path, monkeypatch):
    import dinner_party
    db = Anatid.open(str(tmp_path / "home.anatid"))
    if not db.native.loaded:
        db.close()
        pytest.skip(db.native.reason)
    try:
        dinner_party.build(db)
        (tmp_path / "guests.csv").write_text("name,seat\nAda,1\nTom,2\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        cur = db.connection.cursor()
        results = []
        for block in hybrid_blocks():
            for statement in block.split(";"):
                code = "\n".join(line for line in statement.splitlines() if not line.strip().startswith("--"))
                if code.strip():
                    results.append(cur.execute(statement).fetchall())
        peanut = results[0]
        assert peanut and "peanut" in peanut[0][1]
        assert any("satay" in r[0].lower() for r in results[1])
        assert [r[0] for r in results[2]] == ["Ada"]
        assert results[-1][0][0] == len(results[-2]) or results[-1][0][0] > 0
    finally:
        db.close()
