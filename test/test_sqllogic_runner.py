"""The sqllogic runner itself must be able to fail (and skip only with a reason)."""

from __future__ import annotations

import pytest

from sqllogic import Runner, SkipFile, SqlLogicFailure


def run_text(tmp_path, text: str) -> None:
    path = tmp_path / "case.test"
    path.write_text(text)
    runner = Runner()
    try:
        runner.run_file(path)
    finally:
        runner.close()


def test_passing_file(tmp_path):
    run_text(tmp_path, "statement ok\nCREATE TABLE t(a INT, b VARCHAR, c DOUBLE)\n\n"
                       "statement ok\nINSERT INTO t VALUES (2, 'x', 0.12345), (1, NULL, 2.0), (3, '', NULL)\n\n"
                       "query ITR rowsort\nSELECT * FROM t\n----\n1\tNULL\t2\n2\tx\t0.123\n3\t(empty)\tNULL\n\n"
                       "statement error\nSELECT * FROM missing_table\n----\nmissing_table\n")


@pytest.mark.parametrize("text", [
    "query I\nSELECT 1\n----\n2\n",                      # wrong value
    "query I\nSELECT 1 UNION ALL SELECT 2\n----\n1\n",   # wrong row count
    "query I nosort\nSELECT 2 UNION ALL SELECT 1 ORDER BY 1\n----\n2\n1\n",  # order matters
    "query R\nSELECT 0.1236\n----\n0.123\n",             # rounds to 0.124
    "query II\nSELECT 1\n----\n1\n",                     # column count
    "statement ok\nSELECT * FROM missing_table\n",
    "statement error\nSELECT 1\n",
    "statement error\nSELECT * FROM missing_table\n----\nsome other message\n",
    "querry I\nSELECT 1\n----\n1\n",                     # typo'd directive
    "query I\nSELECT 1\n",                               # no expectation
])
def test_failing_file(tmp_path, text):
    with pytest.raises(SqlLogicFailure):
        run_text(tmp_path, text)


def test_unknown_requirement_skips_with_reason(tmp_path):
    with pytest.raises(SkipFile, match="unknown requirement 'nothing'"):
        run_text(tmp_path, "require nothing\n")
