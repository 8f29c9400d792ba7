"""docs/agents.md is code: every ```python block followed by "prints" runs and
prints exactly that; the example runs offline and approves and rejects."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytest.importorskip("agents", reason='openai-agents not installed: pip install "anatid[agents]"')
pytest.importorskip("agents.testing", reason="this openai-agents has no agents.testing")

from conftest import ROOT, subprocess_env  # noqa: E402

DOC = ROOT / "docs" / "agents.md"
BLOCK = re.compile(r"```python\n(.*?)```\n\nprints\n\n```\n(.*?)```", re.S)


def python(args, cwd):
    env = subprocess_env()
    env.pop("OPENAI_API_KEY", None)                                          # offline, always
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def blocks():
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_runnable_blocks():
    assert len(blocks()) == 2


@pytest.mark.parametrize("index", range(2))
def test_doc_block_prints_what_the_doc_says(index, tmp_path):
    code, expected = blocks()[index]
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    proc = python([str(script)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


@pytest.mark.parametrize("flag,verb,written", [([], "approved", "[('remember', 'Ada switched to decaf', "
                                                                   "'session:conv-1')]"),
                                               (["--reject"], "rejected", "[]")])
def test_example_runs_offline(flag, verb, written, tmp_path):
    proc = python([str(ROOT / "examples" / "agent_with_approval.py"), *flag], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "waiting for review: anatid_remember" in out
    assert "memories now: 1" in out                       # only the seeded memory before review
    assert f"audit trail: ['parked', '{verb}', 'resumed', 'completed']" in out
    assert f"written by this conversation: {written}" in out
