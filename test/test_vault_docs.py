"""docs/vaults.md is code: its python block runs on a small synthetic vault, and
its Stop-hook block is valid JSON that calls `anatid hook stop`."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

from anatid.vault.synth import generate

DOC = Path(__file__).resolve().parents[1] / "docs" / "vaults.md"


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_python_block_runs(tmp_path):
    generate(tmp_path / "vault", notes=30, seed=1)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for block in _blocks("python"):
                exec(compile(block, str(DOC), "exec"), {})
    finally:
        os.chdir(cwd)
    assert len(out.getvalue().splitlines()) == 12


def test_hook_block_is_valid():
    (block,) = _blocks("json")
    hook = json.loads(block)["hooks"]["Stop"][0]["hooks"][0]
    assert hook["type"] == "command" and hook["command"].startswith("anatid hook stop")
