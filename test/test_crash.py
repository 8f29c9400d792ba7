"""Crash safety: a writer is SIGKILLed at random moments, again and again.

A zygote process (this file run as a script) imports anatid once and forks
each writer, so a kill costs milliseconds, not an interpreter start. A writer runs random write verbs and
writes one line per acknowledged write with os.write (unbuffered: a line on
the pipe means the verb returned). After each kill the test reopens the file
and checks that every acknowledged write is there, that nothing is half
applied (SQL invariants, all-or-nothing batches, doctor()), and, when the
extension loads, that native recall equals the SQL oracle, which a forked
child computes with ANATID_NATIVE=0 on the same file.

ANATID_CRASH_KILLS sets the number of kills (default 50; the benchmark runs more).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback

import pytest

from anatid import Anatid, AnatidError

KILLS = int(os.environ.get("ANATID_CRASH_KILLS", "50"))
ENTITIES = ["ada", "bob", "cyd", "dee", "eve", "fay"]
QUERIES = ["fact ada", "bulk item", "bob eve", "w3 note"]


def answers(db) -> dict:
    """What a native reader and the SQL oracle must agree on: 2-hop, text and hybrid recall."""
    res = {"native": db.native.loaded}
    for e in ENTITIES:
        try:
            res["2hop " + e] = [h.memory_id for h in db.recall_2hop(e, limit=100)]
        except AnatidError as exc:
            res["2hop " + e] = type(exc).__name__
    for q in QUERIES:
        res["recall " + q] = [[h.memory_id, round(h.score, 6)] for h in db.recall(q, k=20)]
        res["vec " + q] = [[h.memory_id, round(h.score, 6)]
                           for h in db.recall(q, k=20, embedding=[0.5, 0.2, 0.9, 0.1])]
    return res


# ---- the zygote: this file run as a script; it forks writers and oracles on request ----

def _out(line: str) -> None:
    os.write(1, (line + "\n").encode())


def _writer(path: str, run: int, seed: int) -> None:
    rng = random.Random(seed)
    db = Anatid.open(path, embedding_dim=4)
    live = [int(r[0]) for r in db.connection.execute(
        "SELECT memory_id FROM anatid_memories WHERE tx_to IS NULL AND valid_to IS NULL").fetchall()]
    _out("ready")
    vec = lambda: [rng.uniform(0.1, 1.0) for _ in range(4)]  # noqa: E731
    seq = 0
    while True:
        seq += 1
        verb = rng.choice(["remember", "remember", "many", "relate", "supersede", "update", "forget"])
        try:
            if verb == "remember":
                ents = rng.sample(ENTITIES, rng.randint(0, 2))
                m = db.remember(f"w{run} note {seq} fact " + " ".join(ents), entities=ents,
                                embedding=vec() if rng.random() < 0.7 else None,
                                episode=f"said in run {run}" if rng.random() < 0.2 else None)
                live.append(m.memory_id)
                _out(f"m {m.memory_id}")
            elif verb == "many":
                n = rng.randint(2, 40)
                tag = f"b{run}x{seq}"
                ids = db.remember_many([{"content": f"bulk item {i} {tag} of {n}",
                                         "entities": rng.sample(ENTITIES, 1), "embedding": vec()}
                                        for i in range(n)])
                live.extend(ids)
                _out(f"b {tag} {n} " + " ".join(map(str, ids)))
            elif verb == "relate":
                a, b = rng.sample(ENTITIES, 2)
                db.relate(a, b, "knows")
                _out(f"r {a} {b}")
            elif live:
                mid = rng.choice(live)
                if verb == "supersede":
                    new = db.supersede(mid, f"w{run} revised {seq}", embedding=vec())
                    live.remove(mid)
                    live.append(new.memory_id)
                    _out(f"s {mid} {new.memory_id}")
                elif verb == "update":
                    v = db.get(mid).version
                    db.update(mid, f"w{run} corrected {seq}", expected_version=v)
                    _out(f"u {mid} {v + 1}")
                else:
                    db.forget(mid)
                    live.remove(mid)
                    _out(f"f {mid}")
        except AnatidError:
            pass


def _oracle(path: str) -> None:
    os.environ["ANATID_NATIVE"] = "0"
    db = Anatid.open(path, read_only=True)
    try:
        _out("oracle " + json.dumps(answers(db)))
    finally:
        db.close()


def _fork(fn, *args) -> int:
    """fn(*args) in a forked child, which exits 0 when fn returns and 3 when it raises (a
    writer only ends by SIGKILL, so the test treats any exit as a failure)."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            fn(*args)
            code = 0
        except BaseException:
            traceback.print_exc()  # to the test's stderr
        finally:
            os._exit(code)
    return pid


def _zygote() -> None:
    import anatid
    _out(f"anatid {anatid.__file__}")
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "write":
            pid = _fork(_writer, cmd[1], int(cmd[2]), int(cmd[3]))
            time.sleep(float(os.environ.get("ANATID_CRASH_PID_DELAY", "0")))  # the race, for its test
            _out(f"pid {pid}")
        elif cmd[0] == "reap":
            _out(f"reaped {os.waitpid(int(cmd[1]), 0)[1]}")
        elif cmd[0] == "oracle":
            _out(f"done {os.waitpid(_fork(_oracle, cmd[1]), 0)[1]}")


class Zygote:
    """The test's side of the zygote: this file run as a script (same interpreter and flags),
    importing the anatid the test imported (checked)."""

    def __init__(self):
        import anatid
        from conftest import subprocess_env
        env = subprocess_env()
        self.proc = subprocess.Popen([sys.executable, *subprocess._args_from_interpreter_flags(), __file__],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
        imported = self.until("anatid ")[-1][len("anatid "):]
        assert imported == anatid.__file__, f"the zygote imported {imported}, the test {anatid.__file__}"

    def ask(self, line: str, prefix: str) -> list[str]:
        """Send one command; the lines printed up to and including the first one starting with prefix."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.until(prefix)

    def until(self, prefix: str) -> list[str]:
        lines = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"zygote ended while waiting for {prefix!r}; got {lines[-5:]}"
            line = line.rstrip("\n")
            if line.startswith(prefix):
                return lines + [line]
            lines.append(line)

    def write_then_kill(self, path: str, run: int, seed: int, delay: float) -> list[str]:
        """Fork a writer, let it write for `delay` seconds once it is ready, SIGKILL it:
        every line it printed (its acknowledged writes and "ready")."""
        # The child may print before the zygote prints its pid (it runs first, or the zygote is
        # descheduled under load): its "ready" and first acknowledgements then come before
        # the pid line, and are kept, not waited for again.
        *lines, pid_line = self.ask(f"write {path} {run} {seed}", "pid ")
        pid = int(pid_line.split()[1])
        if not any(line.startswith("ready") for line in lines):
            lines += self.until("ready")
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        *rest, reaped = self.ask(f"reap {pid}", "reaped ")
        status = int(reaped.split()[1])
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, \
            f"writer {run} ended before the kill (status {status}): see its traceback above"
        return lines + rest

    def oracle(self, path: str) -> dict:
        """answers() from a forked child with ANATID_NATIVE=0 (the SQL oracle) on the same file."""
        *lines, done = self.ask(f"oracle {path}", "done ")
        assert done == "done 0" and lines and lines[-1].startswith("oracle "), (done, lines[-5:])
        return json.loads(lines[-1][len("oracle "):])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


INVARIANTS = {
    "two believed versions of one memory":
        "SELECT memory_id FROM anatid_memories WHERE tx_to IS NULL GROUP BY memory_id HAVING count(*) > 1",
    "text doc of a memory that is not believed":
        "SELECT memory_id FROM anatid_text_docs EXCEPT SELECT memory_id FROM anatid_memories WHERE tx_to IS NULL",
    "open memory without text doc":
        "SELECT memory_id FROM anatid_memories WHERE tx_to IS NULL AND valid_to IS NULL "
        "EXCEPT SELECT memory_id FROM anatid_text_docs",
    "postings without text doc":
        "SELECT memory_id FROM anatid_postings EXCEPT SELECT memory_id FROM anatid_text_docs",
    "about edge to a missing memory or entity":
        "SELECT edge_id FROM anatid_edges e WHERE kind = 'about' AND (src_id NOT IN (SELECT memory_id FROM "
        "anatid_memories) OR dst_id NOT IN (SELECT entity_id FROM anatid_entities))",
    "embedding of a missing memory":
        "SELECT memory_id FROM anatid_embeddings EXCEPT SELECT memory_id FROM anatid_memories",
    "supersede without its edge":
        "SELECT memory_id FROM anatid_memories WHERE supersedes IS NOT NULL AND version = 1 AND memory_id NOT IN "
        "(SELECT src_id FROM anatid_edges WHERE kind = 'supersedes')",
    "closed memory whose successor is missing":
        "SELECT memory_id FROM anatid_memories WHERE superseded_by IS NOT NULL "
        "AND superseded_by NOT IN (SELECT memory_id FROM anatid_memories)",
    "evidence of a missing episode":
        "SELECT memory_id FROM anatid_evidence WHERE episode_id NOT IN (SELECT episode_id FROM anatid_episodes)",
    "a batch only partly written":
        "SELECT tag FROM (SELECT split_part(content, ' ', 4) AS tag, split_part(content, ' ', 6)::INT AS n, "
        "count(DISTINCT memory_id) AS c FROM anatid_memories WHERE content LIKE 'bulk item %' GROUP BY ALL) "
        "WHERE c <> n",
}


def check_file(path: str, acks: list[str]) -> dict:
    db = Anatid.open(path, embedding_dim=4)
    try:
        con = db.connection
        for name, sql in INVARIANTS.items():
            assert con.execute(sql).fetchall() == [], name
        ids = {int(r[0]) for r in con.execute("SELECT DISTINCT memory_id FROM anatid_memories").fetchall()}
        edges = {(a, b) for a, b in con.execute(
            "SELECT s.name, d.name FROM anatid_edges e JOIN anatid_entities s ON s.entity_id = e.src_id "
            "JOIN anatid_entities d ON d.entity_id = e.dst_id WHERE e.kind = 'relates'").fetchall()}
        for ack in acks:
            kind, *rest = ack.split()
            if kind == "m":
                assert int(rest[0]) in ids, ack
            elif kind == "b":
                assert len(rest) == 2 + int(rest[1]) and {int(x) for x in rest[2:]} <= ids, ack
            elif kind == "r":
                assert (rest[0], rest[1]) in edges, ack
            elif kind == "s":
                assert int(rest[1]) in ids
                assert db.get(int(rest[0])).superseded_by == int(rest[1]), ack
            elif kind == "u":
                assert db.get(int(rest[0])).version >= int(rest[1]), ack
            elif kind == "f":
                assert con.execute("SELECT count(*) FROM anatid_memories WHERE memory_id = $id AND tx_to IS NULL",
                                   {"id": int(rest[0])}).fetchone()[0] == 0, ack
        if hasattr(db, "doctor"):
            report = db.doctor()
            errors = [f for f in report.findings if f.severity == "error" and f.check != "native_extension"]
            assert errors == [], errors
        return answers(db) if db.native.loaded else {"native": False}
    finally:
        db.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the zygote forks writers")
def test_sigkill_at_random_moments_loses_no_acknowledged_write(tmp_path):
    path = str(tmp_path / "crash.anatid")
    Anatid.open(path, embedding_dim=4).close()
    rng = random.Random(int(os.environ.get("ANATID_CRASH_SEED", "9")))
    zygote = Zygote()
    acks: list[str] = []
    compared = 0
    started = time.monotonic()
    try:
        for run in range(KILLS):
            lines = zygote.write_then_kill(path, run, rng.randrange(2**32), rng.uniform(0.0, 0.25))
            run_acks = [ln for ln in lines if ln[:2] in ("m ", "b ", "r ", "s ", "u ", "f ")]
            assert all(ln[:2] in ("m ", "b ", "r ", "s ", "u ", "f ") or ln == "ready" for ln in lines), lines
            acks += run_acks
            mine = check_file(path, acks)
            if mine["native"]:
                oracle = zygote.oracle(path)
                assert {k: v for k, v in mine.items() if k != "native"} == \
                       {k: v for k, v in oracle.items() if k != "native"}, f"run {run}"
                compared += 1
    finally:
        zygote.close()
    assert len(acks) > KILLS  # the writers did get work done between kills
    print(f"{KILLS} kills, {len(acks)} acknowledged writes, {compared} native/oracle comparisons, "
          f"{time.monotonic() - started:.1f}s")


def test_a_writer_ready_before_its_pid_line_is_not_waited_for(tmp_path, monkeypatch):
    # seen under load: the writer printed "ready" before the zygote printed its pid, the test
    # discarded it with the lines before the pid, then waited for it forever
    monkeypatch.setenv("ANATID_CRASH_PID_DELAY", "1.0")
    zygote = Zygote()
    # a regression must fail, not hang: kill the writer and the zygote after a minute
    guard = threading.Timer(60, lambda: (subprocess.run(["pkill", "-KILL", "-P", str(zygote.proc.pid)]),
                                         zygote.proc.kill()))
    guard.start()
    try:
        lines = zygote.write_then_kill(str(tmp_path / "race.anatid"), 0, 1, 0.05)
    finally:
        guard.cancel()
        zygote.close()
    assert "ready" in lines


if __name__ == "__main__":
    _zygote()
