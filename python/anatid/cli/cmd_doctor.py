"""`anatid doctor DB`: integrity and upkeep checks; exit 1 when any is an error."""
from __future__ import annotations

from . import EXIT_OK, EXIT_OPEN, EXIT_PROBLEM
from ._render import OpenFailed, fail, open_db, print_json, table


def register(sub) -> None:
    p = sub.add_parser("doctor", help="read-only integrity and upkeep checks (exit 1 on errors)")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args) -> int:
    try:
        db = open_db(args.db, read_only=True)
    except OpenFailed as exc:
        return fail(str(exc), EXIT_OPEN)
    with db:
        report = db.doctor()
    if args.json:
        print_json(report.to_dict())
    else:
        if report.findings:
            print(table(["severity", "check", "count", "sample ids", "what it means"],
                        [[f.severity, f.check, f.count, list(f.sample_ids), f.message] for f in report.findings],
                        max_width=90))
            print()
        errors, warnings, infos = (len(report.by_severity(s)) for s in ("error", "warning", "info"))
        verdict = "ok" if report.ok else "NOT OK"
        print(f"{verdict}: {len(report.checks_run)} checks, {errors} errors, {warnings} warnings, {infos} info"
              + (f" (skipped: {', '.join(report.checks_skipped)})" if report.checks_skipped else ""))
    return EXIT_OK if report.ok else EXIT_PROBLEM
