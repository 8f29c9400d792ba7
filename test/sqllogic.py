"""A small sqllogictest runner of our own (DuckDB's runner is not on PyPI).

Records are separated by blank lines; `#` starts a comment line.

    statement ok                    the SQL must succeed
    statement error                 the SQL must fail; after an optional `----`
    <sql>                           line, the error must contain that text
    ----
    <expected message substring>

    query ITR [rowsort|nosort]      one type letter per column: I integer, T text,
    <sql>                           R real (compared rounded to 3 decimals), B bool;
    ----                            expected rows follow, tab-separated; NULL is NULL,
    <row>                           the empty string is (empty)

    require <name>                  skip the file unless <name> is available
    load <path>                     reopen on a database file (__TEST_DIR__ = a temp dir)

`${ANATID_VERSION}` in SQL or expectations is the package version, so tests never
repeat it. Unknown directives are errors: a typo must not turn into a pass.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb

from anatid import _native
from anatid._version import __version__


class SkipFile(Exception):
    """The file needs something this run does not have (the message says what)."""


class SqlLogicFailure(AssertionError):
    pass


@dataclass
class Record:
    kind: str  # "statement" | "query" | "require" | "load"
    line: int
    args: list[str]
    sql: str = ""
    expected: list[str] = field(default_factory=list)
    has_expected: bool = False


def parse(text: str) -> list[Record]:
    records: list[Record] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i].strip()
        if not raw or raw.startswith("#"):
            i += 1
            continue
        head, *args = raw.split()
        start = i + 1
        i += 1
        if head in ("require", "load"):
            if not args:
                raise SqlLogicFailure(f"line {start}: {head} needs an argument")
            records.append(Record(head, start, args))
            continue
        if head not in ("statement", "query"):
            raise SqlLogicFailure(f"line {start}: unknown directive {head!r}")
        sql_lines: list[str] = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            sql_lines.append(lines[i])
            i += 1
        record = Record(head, start, args, "\n".join(sql_lines))
        if i < len(lines) and lines[i].strip() == "----":
            record.has_expected = True
            i += 1
            while i < len(lines) and lines[i].strip():
                record.expected.append(lines[i].rstrip("\n"))
                i += 1
        if not record.sql.strip():
            raise SqlLogicFailure(f"line {start}: {head} without SQL")
        records.append(record)
    return records


def format_value(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else "(empty)"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"'{k}': {_nested(v)}" for k, v in value.items()) + "}"
    return str(value)


def _nested(value: object) -> str:
    return value if isinstance(value, str) else format_value(value)  # no (empty) inside lists


def _cell_matches(type_char: str, actual: str, expected: str) -> bool:
    if type_char == "R" and actual != "NULL" and expected != "NULL":
        try:
            a, e = float(actual), float(expected)
        except ValueError:
            return actual == expected
        if math.isnan(a) or math.isnan(e):
            return math.isnan(a) and math.isnan(e)
        return round(a, 3) == round(e, 3)
    return actual == expected


Connect = Callable[[str], "tuple[duckdb.DuckDBPyConnection, _native.NativeStatus]"]


class Runner:
    """Runs one .test file on connections from `connect` (default: anatid's own).
    `requirements` maps a `require` name to a check returning None when available,
    else the reason it is not."""

    def __init__(self, connect: Connect = _native.connect,
                 requirements: dict[str, Callable[[Runner], str | None]] | None = None):
        self._connect = connect
        self._requirements = default_requirements() if requirements is None else requirements
        self._test_dir = tempfile.mkdtemp(prefix="anatid-sqllogic-")
        self.con, self.status = connect(":memory:")

    def close(self) -> None:
        self.con.close()
        shutil.rmtree(self._test_dir, ignore_errors=True)

    def _subst(self, text: str) -> str:
        return text.replace("${ANATID_VERSION}", __version__).replace("__TEST_DIR__", self._test_dir)

    def run_file(self, path: Path) -> None:
        for record in parse(path.read_text()):
            where = f"{path}:{record.line}"
            try:
                self._run(record, where)
            except SkipFile:
                raise
            except SqlLogicFailure as exc:
                raise SqlLogicFailure(f"{where}: {exc}") from None

    def _run(self, record: Record, where: str) -> None:
        if record.kind == "require":
            check = self._requirements.get(record.args[0])
            reason = f"unknown requirement {record.args[0]!r}" if check is None else check(self)
            if reason:
                raise SkipFile(f"{where}: require {record.args[0]}: {reason}")
        elif record.kind == "load":
            self.con.close()
            self.con, self.status = self._connect(self._subst(record.args[0]))
        elif record.kind == "statement":
            self._statement(record)
        else:
            self._query(record)

    def _statement(self, record: Record) -> None:
        mode = record.args[0] if record.args else ""
        sql = self._subst(record.sql)
        if mode == "ok":
            try:
                self.con.execute(sql)
            except duckdb.Error as exc:
                raise SqlLogicFailure(f"statement ok failed: {exc}\n{sql}") from None
        elif mode == "error":
            try:
                self.con.execute(sql)
            except duckdb.Error as exc:
                wanted = self._subst("\n".join(record.expected)).strip()
                if wanted and wanted not in str(exc):
                    raise SqlLogicFailure(f"error {str(exc)!r} does not contain {wanted!r}\n{sql}") from None
                return
            raise SqlLogicFailure(f"statement error succeeded\n{sql}")
        else:
            raise SqlLogicFailure(f"statement needs ok or error, not {mode!r}")

    def _query(self, record: Record) -> None:
        if not record.args:
            raise SqlLogicFailure("query needs column types, e.g. query IT")
        types = record.args[0]
        sort = record.args[1] if len(record.args) > 1 else "nosort"
        if sort not in ("rowsort", "nosort"):
            raise SqlLogicFailure(f"unknown sort mode {sort!r}")
        if not record.has_expected:
            raise SqlLogicFailure("query without ---- and expected rows")
        sql = self._subst(record.sql)
        try:
            rows = self.con.execute(sql).fetchall()
        except duckdb.Error as exc:
            raise SqlLogicFailure(f"query failed: {exc}\n{sql}") from None
        actual = [[format_value(v) for v in row] for row in rows]
        expected = [self._subst(line).split("\t") for line in record.expected]
        for row in actual + expected:
            if len(row) != len(types):
                raise SqlLogicFailure(f"query {types} declares {len(types)} columns, got row {row}\n{sql}")
        if sort == "rowsort":
            actual.sort()
            expected.sort()
        ok = len(actual) == len(expected) and all(
            _cell_matches(t, a, e) for ra, re_ in zip(actual, expected) for t, a, e in zip(types, ra, re_)
        )
        if not ok:
            show = lambda rs: "\n".join("\t".join(r) for r in rs) or "(no rows)"  # noqa: E731
            raise SqlLogicFailure(f"wrong result\n{sql}\n--- expected\n{show(expected)}\n--- actual\n{show(actual)}")


def default_requirements() -> dict[str, Callable[[Runner], str | None]]:
    def anatid(runner: Runner) -> str | None:
        # The connection already tried to LOAD the extension; require just checks it.
        return None if runner.status.loaded else f"native extension not loaded: {runner.status.reason}"

    return {"anatid": anatid}
