"""`anatid doctor DB`: integrity and upkeep checks; exit 1 when any is an error."""
from __future__ import annotations

from ._render import table
from .contract import EXIT_OK, EXIT_PROBLEM, add_json, open_db, print_json


def register(sub) -> None:
    p = sub.add_parser("doctor", help="read-only integrity and upkeep checks (exit 1 on errors)")
    p.add_argument("db", help="path of the memory file")
    add_json(p)
    p.set_defaults(run=run)


def run(args) -> int:
    with open_db(args.db, read_only=True) as db:
        report = db.doctor()
    if args.json:
        print_json(report.to_dict())
    else:
        if report.findings:          # the advice wraps: it is the part a person acts on
            print(table(["severity", "check", "count", "sample ids", "what it means"],
                        [[f.severity, f.check, f.count, list(f.sample_ids), f.message] for f in report.findings]))
            print()
        errors, warnings, infos = (len(report.by_severity(s)) for s in ("error", "warning", "info"))
        verdict = "ok" if report.ok else "NOT OK"
        print(f"{verdict}: {len(report.checks_run)} checks, {errors} errors, {warnings} warnings, {infos} info"
              + (f" (skipped: {', '.join(report.checks_skipped)})" if report.checks_skipped else ""))
    return EXIT_OK if report.ok else EXIT_PROBLEM
