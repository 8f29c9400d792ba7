"""`anatid eval`: the retrieval ruler.

    anatid eval synth DIR [--notes 300 --seed 7]      a reproducible synthetic vault
    anatid eval build-gold VAULT [-o gold.jsonl]      frozen gold questions, four classes
    anatid eval run DB --gold gold.jsonl              Recall@k, MRR, nDCG@k per class and mode
    anatid eval run --selftest                        the metrics against hand-computed values
"""
from __future__ import annotations

import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("eval", help="the retrieval ruler: synthetic vault, gold questions, metrics per class")
    esub = p.add_subparsers(dest="eval_command", metavar="STEP")
    s = esub.add_parser("synth", help="write the seeded synthetic vault")
    s.add_argument("out")
    s.add_argument("--notes", type=int, default=300)
    s.add_argument("--seed", type=int, default=7)
    s.set_defaults(run=_synth)
    g = esub.add_parser("build-gold", help="build frozen JSONL gold from a vault's own links")
    g.add_argument("vault")
    g.add_argument("-o", "--out", default=None, help="default: gold-<vault name>.jsonl")
    g.add_argument("--n-per-class", type=int, default=60)
    g.add_argument("--seed", type=int, default=0)
    g.set_defaults(run=_build_gold)
    r = esub.add_parser("run", help="score a gold file against an ingested memory file")
    r.add_argument("db", nargs="?")
    r.add_argument("--gold")
    r.add_argument("--tenant", type=int, default=0)
    r.add_argument("-k", type=int, default=12)
    r.add_argument("--modes", default="vector,expand,graph")
    r.add_argument("--selftest", action="store_true", help="check the metrics only: no file, no model")
    r.add_argument("--no-record", action="store_true", help="do not append the run to anatid_eval_runs")
    r.add_argument("--plot", metavar="FILE.png", help="also draw Recall@k per class and mode (needs matplotlib)")
    r.set_defaults(run=_run)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def _synth(args) -> int:
    from ..vault.synth import generate
    info = generate(args.out, notes=args.notes, seed=args.seed)
    print(f"wrote {info['notes']} notes ({info['superseded']} superseded) to {info['path']} with seed {info['seed']}")
    return 0


def _build_gold(args) -> int:
    from ..vault.gold import build_gold, write_gold
    out = args.out or f"gold-{Path(args.vault).resolve().name}.jsonl"
    questions = build_gold(args.vault, n_per_class=args.n_per_class, seed=args.seed)
    write_gold(questions, out)
    counts = {}
    for q in questions:
        counts[q["class"]] = counts.get(q["class"], 0) + 1
    print(f"wrote {len(questions)} questions to {out}: " + ", ".join(f"{c} {n}" for c, n in counts.items())
          + " (freeze this file: rebuilding the gold makes runs incomparable)")
    return 0


def _run(args) -> int:
    from ..vault.metrics import selftest
    if args.selftest:
        bad = selftest()
        for line in bad:
            print(f"FAIL {line}")
        print("metrics selftest: " + ("ok" if not bad else f"{len(bad)} failed"))
        return 1 if bad else 0
    if not args.db or not args.gold:
        print("anatid eval run: give DB and --gold (or --selftest)", file=sys.stderr)
        return 2
    from ..db import Anatid
    from ..vault.evaluate import format_table, record_run, run_eval
    from ..vault.gold import read_gold
    from ..vault.recall import MODES, VaultRecall
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not set(modes) <= set(MODES):
        print(f"anatid eval run: modes are {', '.join(MODES)}", file=sys.stderr)
        return 2
    gold_text = Path(args.gold).read_bytes()
    with Anatid.open(args.db, tenant=args.tenant, read_only=args.no_record) as db:
        rec = VaultRecall(db)
        scores = run_eval(db, read_gold(args.gold), modes=modes, k=args.k, recaller=rec)
        print(format_table(scores, args.k))
        if args.plot:
            from ..vault.plot import plot_eval
            print(f"chart: {plot_eval(scores, args.k, args.plot)}")
        if not args.no_record:
            run_id = record_run(db, scores, gold_path=args.gold, gold_text=gold_text, embedder=rec.embedder.name,
                                k=args.k)
            print(f"run {run_id} appended to anatid_eval_runs")
    return 0
