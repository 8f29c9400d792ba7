"""The long runs of issue 9's reliability proofs: the tests the suite runs at CI size, run
here at full size, with the extension and with ANATID_NATIVE=0.

    PYTHONPATH=python python benchmark/reliability.py                      # results/reliability.json
    PYTHONPATH=python python benchmark/reliability.py --kills 500 --recalls 10000
    PYTHONPATH=python python benchmark/reliability.py --only crash --kills 100

* crash (test/test_crash.py): a writer SIGKILLed --kills times at random moments; after
  each kill every acknowledged write is there, nothing is half applied, doctor() is
  clean and native recall equals the oracle (CI: 50 kills);
* tenancy (test/test_tenancy.py): --recalls random recalls of every arm in a file of four
  tenants return no id of another tenant (CI: 250; the issue asks 10,000).

Each run is pytest on that file in a child process with the size in its environment
variable; the result records whether it passed, its time, and the line the crash test
prints (kills, acknowledged writes, native/oracle comparisons). A failed run is written to
the results too, with pytest's last lines, and makes the command exit non-zero.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def run_pytest(test: str, env_extra: dict[str, str]) -> dict:
    env = dict(os.environ, **env_extra)
    env.setdefault("PYTHONPATH", str(ROOT / "python"))
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", test],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    summary = next((ln for ln in reversed(lines) if " passed" in ln or " failed" in ln or " error" in ln), "")
    out = {"test": test, "env": env_extra, "passed": proc.returncode == 0, "seconds": round(time.perf_counter() - started, 1),
           "pytest_summary": summary.strip("= ")}
    crash_line = next((ln for ln in lines if " kills, " in ln), None)
    if crash_line:
        out["crash_report"] = crash_line.strip(". ")
    if proc.returncode != 0:
        out["tail"] = (proc.stdout + proc.stderr).splitlines()[-40:]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=500)
    ap.add_argument("--recalls", type=int, default=10_000)
    ap.add_argument("--only", choices=("crash", "tenancy"), default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "reliability.json"))
    args = ap.parse_args()
    runs = []
    for native in ("1", "0"):
        mode = {} if native == "1" else {"ANATID_NATIVE": "0"}
        if args.only in (None, "crash"):
            runs.append(run_pytest("test/test_crash.py", {**mode, "ANATID_CRASH_KILLS": str(args.kills)}))
            print(json.dumps(runs[-1]), flush=True)
        if args.only in (None, "tenancy"):
            runs.append(run_pytest("test/test_tenancy.py", {**mode, "ANATID_TENANCY_RECALLS": str(args.recalls)}))
            print(json.dumps(runs[-1]), flush=True)
    import duckdb
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "duckdb": duckdb.__version__, "load_avg_after": os.getloadavg()},
              "kills": args.kills, "recalls": args.recalls, "runs": runs}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")
    sys.exit(0 if all(r["passed"] for r in runs) else 1)


if __name__ == "__main__":
    main()
