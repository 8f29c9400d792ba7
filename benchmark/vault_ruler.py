"""The vault ruler (anatid.vault: synthetic vault, frozen gold, every mode per class), written
to the results file docs/quality.md quotes.

    python -m benchmark.vault_ruler                                  # 306 notes, frozen gold, hashing
    python -m benchmark.vault_ruler --embedder minilm                # all-MiniLM-L6-v2 (anatid[embed])
    python -m benchmark.vault_ruler --notes 500 --seed 11 --gold-seed 0 --out /tmp/v509.json

With the defaults it is `anatid eval synth vault --notes 300 --seed 7`, `anatid ingest` and
`anatid eval run ... --gold python/anatid/vault/gold-synth-300-seed7.jsonl`; another vault
builds its gold with build_gold(seed=--gold-seed), as `anatid eval build-gold` does. It uses
only the public vault API, so the same script measures an older checkout (PYTHONPATH).
Writes benchmark/results/vault-ruler-<embedder>.json unless --out is given.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import tempfile
from pathlib import Path

import anatid
from anatid import Anatid
from anatid.vault import ingest_vault
from anatid.vault.evaluate import format_table, run_eval
from anatid.vault.gold import build_gold, read_gold
from anatid.vault.synth import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
FROZEN = "python/anatid/vault/gold-synth-300-seed7.jsonl"


def _commit() -> str:
    """The checkout the measured anatid package comes from (PYTHONPATH may name another one)."""
    here = Path(anatid.__file__).resolve().parent
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--gold-seed", type=int, default=None, help="build the gold (default: the frozen file)")
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("-k", type=int, default=12)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        summary = {k: v for k, v in generate(vault, notes=args.notes, seed=args.seed).items() if k != "path"}
        if args.gold_seed is None:
            gold_name, gold = FROZEN, read_gold(ROOT / FROZEN)
            gold_sha = hashlib.sha256((ROOT / FROZEN).read_bytes()).hexdigest()
        else:
            gold_name, gold = f"build_gold(n_per_class=60, seed={args.gold_seed})", \
                build_gold(vault, n_per_class=60, seed=args.gold_seed)
            gold_sha = hashlib.sha256(json.dumps(gold, sort_keys=True).encode()).hexdigest()
        with Anatid.open(str(Path(tmp) / "m.anatid")) as db:
            ingest_vault(db, vault, embedder=args.embedder)
            scores = run_eval(db, gold, k=args.k)
    print(format_table(scores, args.k))
    out = Path(args.out) if args.out else RESULTS / f"vault-ruler-{args.embedder}.json"
    out.write_text(json.dumps({
        "ruler": "vault", "notes": args.notes, "seed": args.seed, "vault": summary, "embedder": args.embedder,
        "gold": gold_name, "gold_sha256": gold_sha, "k": args.k, "commit": _commit(),
        "scores": [s.__dict__ for s in scores]}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
