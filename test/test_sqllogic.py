"""Runs every test/sql/**/*.test file on a fresh in-memory anatid connection."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqllogic import Runner, SkipFile

SQL_DIR = Path(__file__).parent / "sql"
FILES = sorted(SQL_DIR.rglob("*.test"))


def test_there_are_sql_tests():
    assert FILES, f"no .test files under {SQL_DIR}"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SQL_DIR)) for p in FILES])
def test_sqllogic(path: Path):
    runner = Runner()
    try:
        runner.run_file(path)
    except SkipFile as exc:
        pytest.skip(str(exc))
    finally:
        runner.close()
