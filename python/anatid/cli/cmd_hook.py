"""`anatid hook stop`: the agent Stop hook. Reads the hook's JSON payload on stdin
and appends the new turns of its transcript to anatid_turns. It never fails the
agent: every error is swallowed, nothing is printed (unless --json asks for a count),
the exit code is 0. This is the one command the exit-code table does not bind."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("hook", help="agent hooks (stop: append the last turn to the per-turn ledger)")
    hsub = p.add_subparsers(dest="hook_name", metavar="HOOK")
    s = hsub.add_parser("stop", help="read a Stop-hook payload on stdin; record the new turns; print nothing")
    s.add_argument("--db", default=None, help="memory file (default $ANATID_TURNS_DB or ~/.anatid/turns.anatid)")
    s.add_argument("--json", action="store_true",
                   help="print {\"recorded\": N} on stdout (still exit 0; without it the hook prints nothing)")
    s.set_defaults(run=run_stop)
    p.set_defaults(run=lambda args: (p.print_help(sys.stderr), 2)[1])


def run_stop(args) -> int:
    recorded = 0
    try:
        import io
        import json
        from contextlib import redirect_stderr, redirect_stdout
        from ..vault.turns import default_db, record_stop
        payload = json.loads(sys.stdin.read() or "{}")
        if isinstance(payload, dict):
            sink = io.StringIO()
            with redirect_stdout(sink), redirect_stderr(sink):
                recorded = record_stop(payload, args.db or default_db())
    except BaseException:  # noqa: BLE001 - the hook's contract: never break the agent
        pass
    if args.json:
        import json
        print(json.dumps({"recorded": recorded if isinstance(recorded, int) else 0}))
    return 0
