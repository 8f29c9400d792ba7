"""`anatid eval`: the retrieval ruler.

    anatid eval synth DIR [--notes 300 --seed 7]      a reproducible synthetic vault
    anatid eval build-gold VAULT [-o gold.jsonl]      frozen gold questions, four classes
    anatid eval run DB --gold gold.jsonl              Recall@k, MRR, nDCG@k per class and mode
    anatid eval run --selftest                        the metrics against hand-computed values
    anatid eval convo [--conversations 8 --seed 7]    the conversational ruler: graph off vs all arms, per class
"""
from __future__ import annotations

import sys
from pathlib import Path

from .contract import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, UsageError, add_json, open_db, print_json, require_file


def register(sub) -> None:
    p = sub.add_parser("eval", help="the retrieval ruler: synthetic vault, gold questions, metrics per class")
    esub = p.add_subparsers(dest="eval_command", metavar="STEP")
    s = esub.add_parser("synth", help="write the seeded synthetic vault")
    s.add_argument("out")
    s.add_argument("--notes", type=int, default=300)
    s.add_argument("--seed", type=int, default=7)
    add_json(s)
    s.set_defaults(run=_synth)
    g = esub.add_parser("build-gold", help="build frozen JSONL gold from a vault's own links")
    g.add_argument("vault")
    g.add_argument("-o", "--out", default=None, help="default: gold-<vault name>.jsonl")
    g.add_argument("--n-per-class", type=int, default=60)
    g.add_argument("--seed", type=int, default=0)
    add_json(g)
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
    add_json(r)
    r.set_defaults(run=_run)
    c = esub.add_parser("convo", help="the conversational ruler: seeded conversations, recall() per class, "
                                      "graph off against all arms")
    c.add_argument("--conversations", type=int, default=8)
    c.add_argument("--seed", type=int, default=7)
    c.add_argument("--embedder", default="none", choices=("none", "hashing", "default"),
                   help="none: BM25 + graph; hashing: word-hash vectors, no model; default: MiniLM (anatid[embed])")
    add_json(c)
    c.set_defaults(run=_convo)
    p.set_defaults(run=lambda args: (p.print_help(sys.stderr), EXIT_USAGE)[1])


def _folder_of(path: str, flag: str) -> None:
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {parent} does not exist", "create it first")


def _synth(args) -> int:
    from ..vault.synth import generate
    if not 20 <= args.notes <= 5000:
        raise UsageError(f"--notes {args.notes}: must be between 20 and 5000", "e.g. --notes 300")
    _folder_of(args.out, "OUT")
    info = generate(args.out, notes=args.notes, seed=args.seed)
    if args.json:
        print_json(info)
    else:
        print(f"wrote {info['notes']} notes ({info['superseded']} superseded) to {info['path']} "
              f"with seed {info['seed']}")
    return EXIT_OK


def _build_gold(args) -> int:
    from ..vault.gold import build_gold, write_gold
    if not Path(args.vault).is_dir():
        raise UsageError(f"vault {args.vault}: no such folder", "give the folder that holds the markdown notes")
    out = args.out or f"gold-{Path(args.vault).resolve().name}.jsonl"
    _folder_of(out, "-o")
    questions = build_gold(args.vault, n_per_class=args.n_per_class, seed=args.seed)
    write_gold(questions, out)
    counts = {}
    for q in questions:
        counts[q["class"]] = counts.get(q["class"], 0) + 1
    if args.json:
        print_json({"output": str(Path(out).resolve()), "questions": len(questions), "classes": counts})
    else:
        print(f"wrote {len(questions)} questions to {out}: " + ", ".join(f"{c} {n}" for c, n in counts.items())
              + " (freeze this file: rebuilding the gold makes runs incomparable)")
    return EXIT_OK


def _run(args) -> int:
    from ..vault.metrics import selftest
    if args.selftest:
        bad = selftest()
        if args.json:
            print_json({"ok": not bad, "failures": bad})
        else:
            for line in bad:
                print(f"FAIL {line}")
            print("metrics selftest: " + ("ok" if not bad else f"{len(bad)} failed"))
        return EXIT_PROBLEM if bad else EXIT_OK
    if not args.db or not args.gold:
        raise UsageError("give DB and --gold (or --selftest)", "e.g. anatid eval run memory.anatid --gold gold.jsonl")
    from ..vault.evaluate import format_table, record_run, run_eval
    from ..vault.gold import read_gold
    from ..vault.recall import MODES, VaultRecall
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or not set(modes) <= set(MODES):
        raise UsageError(f"--modes {args.modes}: modes are {', '.join(MODES)}", "e.g. --modes vector,graph")
    require_file(args.db)                       # exit 3 first, as for every command that reads a file
    if not Path(args.gold).is_file():
        raise UsageError(f"--gold {args.gold}: no such file", "build one with `anatid eval build-gold VAULT`")
    if args.plot:
        _folder_of(args.plot, "--plot")
    gold_text = Path(args.gold).read_bytes()
    try:
        gold = read_gold(args.gold)
    except ValueError as exc:
        raise UsageError(f"--gold {args.gold}: not JSONL gold ({exc})",
                         "rebuild it with `anatid eval build-gold`") from None
    with open_db(args.db, tenant=args.tenant, read_only=args.no_record) as db:
        try:
            rec = VaultRecall(db)
        except ValueError as exc:               # no ingested vault in this file
            raise UsageError(str(exc)) from None
        scores = run_eval(db, gold, modes=modes, k=args.k, recaller=rec)
        chart = run_id = None
        if args.plot:
            from ..vault.plot import plot_eval
            chart = plot_eval(scores, args.k, args.plot)
        if not args.no_record:
            run_id = record_run(db, scores, gold_path=args.gold, gold_text=gold_text, embedder=rec.embedder.name,
                                k=args.k)
    if args.json:
        print_json({"k": args.k, "scores": scores, "chart": chart, "run_id": run_id})
        return EXIT_OK
    print(format_table(scores, args.k))
    if chart is not None:
        print(f"chart: {chart}")
    if run_id is not None:
        print(f"run {run_id} appended to anatid_eval_runs")
    return EXIT_OK


def _convo(args) -> int:
    import tempfile

    from ..convo.ruler import format_table, generate, load, overall, score
    from ..db import Anatid
    if not 1 <= args.conversations <= 200:
        raise UsageError(f"--conversations {args.conversations}: must be between 1 and 200", "e.g. --conversations 8")
    emb = None
    if args.embedder != "none":
        from ..vault.embed import get_embedder
        try:
            emb = get_embedder("hashing" if args.embedder == "hashing" else None)
        except (ValueError, ImportError) as exc:
            raise UsageError(str(exc), "or use --embedder none / hashing") from None
    convs = generate(conversations=args.conversations, seed=args.seed)
    configs = {"graph off": {"weights": {"graph": 0}}, "all arms (defaults)": {}}
    with tempfile.TemporaryDirectory(prefix="anatid-convo-") as tmp:
        handles: dict = {}
        dim = None if emb is None else int(emb.embed(["x"]).shape[1])

        def factory(tenant: int):
            if tenant not in handles:
                extra = {} if dim is None else {"embedding_dim": dim}
                handles[tenant] = Anatid.open(f"{tmp}/convo.anatid", tenant=tenant + 1, **extra)
            return handles[tenant]
        try:
            loaded = load(factory, convs, emb)
            rows = {name: score(factory, loaded, emb, recall_kwargs=kw) for name, kw in configs.items()}
        finally:
            for db in handles.values():
                db.close()
    if args.json:
        print_json({"conversations": args.conversations, "seed": args.seed, "embedder": args.embedder,
                    "configurations": {name: {"classes": [vars(s) for s in scores], "all": vars(overall(scores))}
                                       for name, scores in rows.items()}})
    else:
        print(format_table(rows))
    return EXIT_OK
