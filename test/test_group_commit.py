"""Group commit (anatid.group_commit): concurrent remember() calls on one handle share one
transaction. A group writes what remember writes, every caller gets its own outcome (a
failing call its error, the others their commits), and a process killed mid-group loses no
acknowledged write (docs/limitations.md, "Group commit")."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time

from anatid import Anatid
from anatid.errors import NotFoundError

from conftest import at, subprocess_env
from test_remember_many_bulk import ITEMS, _QUERIES, _state


def _remember_together(db, items: list[dict]) -> list:
    """Each item remembered by a thread of its own, all queued before any is written: one group."""
    results: list = [None] * len(items)

    def call(i: int) -> None:
        item = items[i]
        try:
            results[i] = db.remember(item["content"], **{k: v for k, v in item.items() if k != "content"})
        except Exception as exc:   # the caller's own error, kept for the test to look at
            results[i] = exc

    with db._store.group.held() as queued:
        threads = [threading.Thread(target=call, args=(i,)) for i in range(len(items))]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while queued() < len(items):
            assert time.monotonic() < deadline, "the calls never queued"
            time.sleep(0.001)
    for t in threads:
        t.join()
    return results


def test_a_group_writes_what_a_remember_loop_writes(tmp_path, monkeypatch):
    loop = Anatid.open(str(tmp_path / "loop.anatid"), embedding_dim=3)
    group = Anatid.open(str(tmp_path / "group.anatid"), embedding_dim=3)
    for item in ITEMS:
        loop.remember(item["content"], **{k: v for k, v in item.items() if k != "content"}, now=at(1))
    store = group._store
    clock_next = store.write_instant
    monkeypatch.setattr(store, "write_instant", lambda now: clock_next(at(1) if now is None else now))
    got = _remember_together(group, ITEMS)
    assert store.group.stats.grouped_calls == len(ITEMS) and store.group.stats.groups == 1
    for q, g, w in zip(_QUERIES, _state(group), _state(loop)):
        assert g == w, q
    # what each caller got back is what get() reads
    for m in got:
        assert group.get(m.memory_id) == m


def test_a_large_group_takes_the_set_based_path_and_writes_the_same(tmp_path, monkeypatch):
    from anatid.verbs import grouped
    items = [{"content": f"item {i} about alice", "entities": ["alice", f"e{i % 3}"], "embedding": [i, 1.0, 0.5]}
             for i in range(6)]
    loop = Anatid.open(str(tmp_path / "loop.anatid"), embedding_dim=3)
    group = Anatid.open(str(tmp_path / "group.anatid"), embedding_dim=3)
    for item in items:
        loop.remember(item["content"], entities=item["entities"], embedding=item["embedding"], now=at(1))
    monkeypatch.setattr(grouped, "BULK_FROM", 2)
    clock_next = group._store.write_instant
    monkeypatch.setattr(group._store, "write_instant", lambda now: clock_next(at(1) if now is None else now))
    got = _remember_together(group, items)
    assert group._store.group.stats.grouped_calls == len(items)
    for q, g, w in zip(_QUERIES, _state(group), _state(loop)):
        assert g == w, q
    assert [group.get(m.memory_id) for m in got] == got


def test_a_failing_call_gets_its_own_error_and_the_others_are_committed(tmp_path):
    db = Anatid.open(str(tmp_path / "g.anatid"), embedding_dim=3)
    items = [{"content": f"fine {i}", "entities": ["ada"], "embedding": [1.0, 0, i]} for i in range(3)]
    items.insert(1, {"content": "cites a missing episode", "episode": 999_999})
    got = _remember_together(db, items)
    assert isinstance(got[1], NotFoundError)
    fine = [got[i] for i in (0, 2, 3)]
    assert all(db.get(m.memory_id).content == m.content for m in fine)
    stats = db._store.group.stats
    assert stats.retried_alone == len(items) and stats.grouped_calls == 0
    # the failed group's rows were rolled back before the retry: each memory once
    assert db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0] == 3
    assert db.connection.execute("SELECT count(*) FROM anatid_text_journal").fetchone()[0] == 3
    assert {h.memory_id for h in db.recall("fine", k=10)} == {m.memory_id for m in fine}


def test_first_embeddings_of_different_lengths_in_one_group_keep_remembers_rule(tmp_path):
    db = Anatid.open(str(tmp_path / "g.anatid"))
    got = _remember_together(db, [{"content": "three", "embedding": [1.0, 2.0, 3.0]},
                                  {"content": "two", "embedding": [1.0, 2.0]}])
    # run alone in queue order: the first fixes the file's dimension, the second is refused
    assert got[0].content == "three"
    assert isinstance(got[1], Exception) and db._store.embedding_dim == 3


def test_concurrent_writers_find_every_acknowledged_write(tmp_path):
    db = Anatid.open(str(tmp_path / "g.anatid"), embedding_dim=4)
    acked: list[list[int]] = [[] for _ in range(4)]

    def writer(j: int) -> None:
        rng = random.Random(j)
        for i in range(25):
            m = db.remember(f"writer {j} note {i}", entities=[f"e{rng.randrange(5)}", "shared"],
                            embedding=[rng.random() + 0.1 for _ in range(4)])
            acked[j].append(m.memory_id)
            assert db.get(m.memory_id).content == f"writer {j} note {i}"   # read your write, nothing rebuilt

    threads = [threading.Thread(target=writer, args=(j,)) for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = {i for a in acked for i in a}
    assert len(ids) == 100
    assert {h.memory_id for h in db.recall_2hop("shared", limit=200)} >= ids
    assert db.doctor().ok


# ---- kill -9 mid-group: every acknowledged write is in the file ----

_WRITER = r"""
import os, random, sys, threading
from anatid import Anatid
db = Anatid.open(sys.argv[1], embedding_dim=4)
go = threading.Event()   # set once "ready" is out: no acknowledgement may come before it
def writer(j):
    rng = random.Random(int(sys.argv[2]) * 100 + j)
    i = 0
    go.wait()
    while True:
        i += 1
        content = f"run {sys.argv[2]} writer {j} note {i}"
        m = db.remember(content, entities=rng.sample(["ada", "bob", "cyd", "dee"], 2),
                        embedding=[rng.random() + 0.1 for _ in range(4)])
        os.write(1, f"{m.memory_id} {content}\n".encode())   # unbuffered: a line means it returned
for j in range(4):
    threading.Thread(target=writer, args=(j,), daemon=True).start()
os.write(1, b"ready\n")
go.set()
threading.Event().wait()
"""

KILLS = int(os.environ.get("ANATID_GROUP_CRASH_KILLS", "5"))


def test_sigkill_mid_group_loses_no_acknowledged_write(tmp_path):
    path = str(tmp_path / "crash.anatid")
    rng = random.Random(21)
    acked: dict[int, str] = {}
    for run in range(KILLS):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, path, str(run)], stdout=subprocess.PIPE,
                                env=subprocess_env())
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.3, 1.0))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        for line in out.decode().splitlines():   # each line one os.write under PIPE_BUF: whole
            if line != "ready":
                mid, content = line.split(" ", 1)
                acked[int(mid)] = content
        db = Anatid.open(path, embedding_dim=4)
        try:
            for mid, content in acked.items():
                m = db.get(mid)
                assert m is not None and m.content == content, mid
            assert db.doctor().ok
            shared = db.connection.execute("SELECT count(*) FROM (SELECT tx_from FROM anatid_memories "
                                           "GROUP BY tx_from HAVING count(*) > 1)").fetchone()[0]
        finally:
            db.close()
    assert len(acked) > KILLS * 4
    assert shared > 0, "no group of two or more was ever committed: the test did not test grouping"


def test_a_group_links_episodes_given_as_text_or_id(tmp_path):
    db = Anatid.open(str(tmp_path / "g.anatid"))
    ep = db.episode("an earlier chat")
    got = _remember_together(db, [{"content": "from text", "episode": "said just now", "writer": "w"},
                                  {"content": "from id", "episode": ep.episode_id},
                                  {"content": "from nothing"}])
    assert db._store.group.stats.grouped_calls == 3
    links = dict(db.connection.execute(
        "SELECT m.content, e.content FROM anatid_evidence v JOIN anatid_memories m USING (memory_id) "
        "JOIN anatid_episodes e USING (episode_id)").fetchall())
    assert links == {"from text": "said just now", "from id": "an earlier chat"}
    assert [m.content for m in got] == ["from text", "from id", "from nothing"]
