"""A suite that stays green while the metric is broken never tested the metric:
run test_eval_metrics.py with nDCG broken on purpose and expect it to fail."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env

HERE = Path(__file__).resolve().parent


def _run(mutant: bool) -> subprocess.CompletedProcess:
    env = subprocess_env()
    env.pop("ANATID_EVAL_MUTANT", None)
    if mutant:
        env["ANATID_EVAL_MUTANT"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(HERE / "test_eval_metrics.py")], env=env, capture_output=True, text=True,
                          timeout=120, cwd=HERE.parent)


def test_metrics_tests_fail_under_the_mutant():
    out = _run(mutant=True)
    assert out.returncode == 1, out.stdout + out.stderr      # 1: tests ran and failed (not an import error)
    assert "failed" in out.stdout and "test_ndcg_by_hand" in out.stdout


def test_selftest_command_fails_under_the_mutant():
    env = subprocess_env(ANATID_EVAL_MUTANT="1")
    out = subprocess.run([sys.executable, "-m", "anatid", "eval", "run", "--selftest"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "ndcg_at" in out.stdout


def test_the_conversational_ruler_fails_under_the_mutant():
    env = subprocess_env(ANATID_EVAL_MUTANT="1")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(HERE / "test_convo_ruler.py"), "-k", "scorer"], env=env, capture_output=True,
                         text=True, timeout=120, cwd=HERE.parent)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "test_the_scorer_counts_what_recall_ranks" in out.stdout
