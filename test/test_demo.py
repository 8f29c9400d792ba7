"""The README's first command ends in `anatid demo`: it must run on a fresh directory,
write its file there, and show the three kinds of recall and the history it promises."""
from __future__ import annotations

import subprocess
import sys

from conftest import subprocess_env


def test_demo_writes_and_recalls_in_the_working_directory(tmp_path):
    env = subprocess_env()
    out = subprocess.run([sys.executable, "-m", "anatid", "demo"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "demo.anatid").is_file()
    lines = out.stdout.splitlines()
    top = lines[lines.index("recall('coffee', seed_entity='Ada'):") + 1]
    assert "Ada switched to decaf coffee" in top and "vector, text, graph" in top
    before = out.stdout.split("before the supersede:")[1]
    assert "Ada prefers dark roast coffee" in before and "decaf" not in before
    assert "3 current memories, 4 entities, 2 open relations" in out.stdout
