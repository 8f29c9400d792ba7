"""DatabasePool hardening: names whose file is another tenant's DuckDB sidecar, file names too
long once DuckDB adds a sidecar suffix, symlink loops, and eviction of a handle that another
thread is using. Each refused name is a ValidationError and leaves the disk as it was."""
from __future__ import annotations

import os
import tempfile
import threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import anatid
from anatid import ValidationError
from anatid import pool as pool_module
from anatid.pool import DatabasePool, PoolExhausted

from conftest import at

WAIT = 10   # seconds: a bound on every wait below, never reached when the code is right


def disk(root) -> list:
    """Every folder and file under root, with their names: what a refusal must leave alone."""
    return sorted((d, sorted(dirs), sorted(files)) for d, dirs, files in os.walk(root))


# -- sidecar names -----------------------------------------------------------------------------
@pytest.mark.parametrize("template, name", [
    ("{tenant}", "alice.wal"), ("{tenant}", "alice.WAL"), ("{tenant}", "alice.wal.checkpoint"),
    ("{tenant}", "alice.wal.recovery"), ("{tenant}", "alice.tmp"),
    ("{tenant}l", "al.wa"),             # file 'al.wal': the WAL of tenant 'a' (file 'al')
])
def test_a_name_whose_file_is_a_sidecar_is_refused(tmp_path, template, name):
    """Before: tenant 'alice.wal' was accepted, and opening 'alice' took its file as alice's WAL:
    alice.wal's database was destroyed."""
    with DatabasePool(template, root=tmp_path / "root") as pool:
        pool.get("a" if template.endswith("l") else "alice").remember("the neighbour", now=at(1))
        before = disk(pool.root)
        with pytest.raises(ValidationError, match="DuckDB") as err:
            pool.get(name)
        assert err.value.argument == "tenant" and "not end in" in str(err.value)
        assert disk(pool.root) == before


def test_names_near_the_sidecar_suffixes_are_kept(tmp_path):
    names = ["alice-wal", "alice.walrus", "wal", "tmp", "alice.wal.x", "alice.tmpl"]
    with DatabasePool("{tenant}", root=tmp_path) as pool:
        for n in names:
            pool.get(n).remember(f"memory of {n}", now=at(1))
    with DatabasePool("{tenant}", root=tmp_path) as pool:
        assert [pool.get(n).recall("memory")[0].content for n in names] == [f"memory of {n}" for n in names]


@pytest.mark.parametrize("template", ["{tenant}.wal", "t/{tenant}.TMP", "{tenant}.anatid.wal.checkpoint",
                                      "{tenant}/memory.wal"])
def test_a_template_whose_files_are_all_sidecars_is_refused(tmp_path, template):
    with pytest.raises(ValidationError, match="DuckDB") as err:
        DatabasePool(template, root=tmp_path / "root")
    assert err.value.argument == "path_template"
    assert not (tmp_path / "root").exists()


def test_a_symlink_to_a_sidecar_name_is_refused(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "bob").symlink_to(root / "alice.wal")
    with DatabasePool("{tenant}", root=root) as pool:
        with pytest.raises(ValidationError, match="'.wal'"):
            pool.get("bob")
    assert sorted(os.listdir(root)) == ["bob"]


# -- lengths -----------------------------------------------------------------------------------
def test_a_file_name_too_long_with_its_sidecar_is_refused_before_anything_exists(tmp_path):
    """Before: a 248-character name under '{tenant}.anatid' (255 bytes) raised DuckDB's
    'cannot rollback' once the WAL could not be created, and left the file behind."""
    with DatabasePool("{tenant}.anatid", root=tmp_path / "root") as pool:
        longest = 255 - len(".wal.checkpoint") - len(".anatid")
        for name in ("x" * 248, "x" * (longest + 1), "é" * ((longest + 2) // 2)):
            with pytest.raises(ValidationError, match=f"at most {longest} bytes") as err:
                pool.get(name)
            assert err.value.argument == "tenant"
            assert disk(pool.root) == [(str(pool.root), [], [])]
        m = pool.get("x" * longest).remember("at the limit", now=at(1))
    with DatabasePool("{tenant}.anatid", root=tmp_path / "root") as pool:
        assert pool.get("x" * longest).get(m.memory_id).content == "at the limit"


def test_a_long_name_is_fine_as_a_folder(tmp_path):
    with DatabasePool("{tenant}/memory.anatid", root=tmp_path) as pool:
        pool.get("y" * 255).remember("in a long folder", now=at(1))
        assert pool.get("y" * 255).recall("folder")[0].content == "in a long folder"


# -- symlink loops and files in the way ----------------------------------------------------------
@pytest.mark.parametrize("template", ["{tenant}", "{tenant}/memory.anatid", "{tenant}.anatid"])
def test_a_symlink_loop_is_refused(tmp_path, template):
    """Before: DuckDB's IOException ('Too many levels of symbolic links') or FileExistsError."""
    root = tmp_path / "root"
    root.mkdir()
    last = template.replace("{tenant}", "loop").split("/")[0]
    (root / last).symlink_to(last)                      # a link to itself
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")                  # two links to each other
    before = disk(root)
    with DatabasePool(template, root=root) as pool:
        for name in ("loop", "ping") if template == "{tenant}" else ("loop",):
            with pytest.raises(ValidationError, match="symlink loop") as err:
                pool.get(name)
            assert err.value.argument == "tenant"
    assert disk(root) == before


def test_a_file_where_a_folder_must_be_is_refused(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "bob").write_text("not a folder")
    (root / "dir.anatid").mkdir()
    before = disk(root)
    with DatabasePool("{tenant}/memory.anatid", root=root) as pool:
        with pytest.raises(ValidationError, match="a file where a folder must be"):
            pool.get("bob")
    with DatabasePool("{tenant}.anatid", root=root) as pool:
        with pytest.raises(ValidationError, match="not a file"):
            pool.get("dir")
    assert disk(root) == before


# -- eviction of a handle in use ------------------------------------------------------------------
def _hold(handle, inside: threading.Event, release: threading.Event, errors: list):
    """A thread running one call on `handle` (atomic) that lasts until `release` is set."""
    def body(db):
        inside.set()
        assert release.wait(WAIT)
        return db.remember("written while the pool wanted the handle", now=at(5))

    def run():
        try:
            errors.append(handle.atomic(body))
        except BaseException as exc:    # recorded: the test asserts there was none
            errors.append(exc)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert inside.wait(WAIT)
    return t


def test_eviction_waits_for_a_running_call_and_never_raises(tmp_path):
    """Before: get('b') closed 'a' under its running transaction at once; the call then failed
    with DuckDB's 'Connection already closed' (or the evicting thread raised 'connection is busy')."""
    pool = DatabasePool("{tenant}.anatid", root=tmp_path, max_open=1)
    a = pool.get("a")
    inside, release, out = threading.Event(), threading.Event(), []
    worker = _hold(a, inside, release, out)
    got, evicted = [], threading.Event()

    def evict():
        try:
            got.append(pool.get("b"))
        except BaseException as exc:
            got.append(exc)
        evicted.set()
    evictor = threading.Thread(target=evict, daemon=True)
    evictor.start()
    assert not evicted.wait(0.3), f"get('b') returned while 'a' ran a call: {got}"
    with pytest.raises(anatid.AnatidError, match="closed"):   # a retiring handle takes no new call
        a.stats()
    release.set()
    worker.join(WAIT)
    evictor.join(WAIT)
    assert not worker.is_alive() and not evictor.is_alive()
    [memory] = out
    assert isinstance(memory, anatid.Memory), memory
    [b] = got
    assert isinstance(b, pool_module.PooledAnatid) and pool.open_tenants == ["b"]
    with pytest.raises(anatid.AnatidError, match="closed"):
        a.recall("written")
    b.remember("b's own", now=at(6))
    assert pool.get("a").get(memory.memory_id).content == memory.content    # committed, kept
    pool.close()


def test_eviction_skips_a_busy_handle_for_an_idle_one(tmp_path):
    with DatabasePool("{tenant}.anatid", root=tmp_path, max_open=2) as pool:
        a = pool.get("a")
        pool.get("b")                       # 'a' is the least recently used...
        inside, release, out = threading.Event(), threading.Event(), []
        worker = _hold(a, inside, release, out)
        c = pool.get("c")                   # ...but runs a call: 'b' goes, at once
        assert pool.open_tenants == ["a", "c"]
        release.set()
        worker.join(WAIT)
        assert isinstance(out[0], anatid.Memory), out
        assert a.get(out[0].memory_id).content == out[0].content and c.stats() is not None


def test_asking_from_inside_a_running_call_raises_pool_exhausted_at_once(tmp_path):
    """Waiting there could wait on the caller's own call; before, get() closed the caller's
    handle under its own transaction and the commit failed with a raw DuckDB error."""
    with DatabasePool("{tenant}.anatid", root=tmp_path, max_open=1) as pool:
        a = pool.get("a")

        def body(db):
            db.remember("inside", now=at(1))
            return pool.get("b")
        with pytest.raises(PoolExhausted, match="this thread runs a call"):
            a.atomic(body)
        assert pool.open_tenants == ["a"] and a.recall("inside") == []     # rolled back, still open
        assert a.remember("after", now=at(2)).content == "after"


def test_a_call_that_outlasts_the_wait_gives_pool_exhausted_and_keeps_its_handle(tmp_path, monkeypatch):
    monkeypatch.setattr(pool_module, "_BUSY_WAIT_SECONDS", 0.2, raising=False)
    with DatabasePool("{tenant}.anatid", root=tmp_path, max_open=1) as pool:
        a = pool.get("a")
        inside, release, out = threading.Event(), threading.Event(), []
        worker = _hold(a, inside, release, out)
        with pytest.raises(PoolExhausted, match="did not end within 0.2 s"):
            pool.get("b")
        release.set()
        worker.join(WAIT)
        assert isinstance(out[0], anatid.Memory), out
        assert pool.open_tenants == ["a"] and a.get(out[0].memory_id).content == out[0].content


def test_closing_the_pool_lets_a_running_call_finish(tmp_path):
    pool = DatabasePool("{tenant}.anatid", root=tmp_path)
    a = pool.get("a")
    inside, release, out = threading.Event(), threading.Event(), []
    worker = _hold(a, inside, release, out)
    pool.close()                            # returns at once; 'a' closes as its call ends
    release.set()
    worker.join(WAIT)
    assert isinstance(out[0], anatid.Memory), out
    assert a._store.closed
    with DatabasePool("{tenant}.anatid", root=tmp_path) as again:
        assert again.get("a").get(out[0].memory_id).content == out[0].content


# -- any name: accepted and kept, or refused with nothing on disk ----------------------------------
_SUFFIXES = ["", ".wal", ".WAL", ".wal.checkpoint", ".wal.recovery", ".tmp", ".anatid", "/x", "\x00"]
_NAMES = st.one_of(
    st.text(max_size=12),
    st.text(alphabet="ab.é/\\\x00 walWtmp", max_size=16),
    st.text(alphabet="xé", min_size=110, max_size=256),     # around every byte limit
    st.sampled_from(["", ".", "..", "a.wal", "alice", "-", "~", "a:b"]),
    st.integers(min_value=-3, max_value=10**250),
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(first=_NAMES, suffix=st.sampled_from(_SUFFIXES),
       template=st.sampled_from(["{tenant}", "{tenant}.anatid", "t/{tenant}/m.anatid"]))
def test_any_name_is_kept_apart_or_refused_leaving_nothing(first, suffix, template):
    """Two tenants, one named like the other's sidecar when the suffix says so: each is either
    refused (ValidationError, the disk unchanged) or keeps its own memory after a reopen."""
    names = list(dict.fromkeys([first + suffix, first])) if isinstance(first, str) else [first]
    with tempfile.TemporaryDirectory() as tmp:
        kept = {}
        with DatabasePool(template, root=tmp) as pool:
            for name in names:
                before = disk(pool.root)
                try:
                    db = pool.get(name)
                except ValidationError:
                    assert disk(pool.root) == before
                    continue
                kept[db.tenant_name] = db.remember(f"memory of tenant {len(kept)}", now=at(1)).memory_id
                assert db.tenant_name == (name if isinstance(name, str) else str(name))
        with DatabasePool(template, root=tmp) as pool:
            for i, (tenant, memory_id) in enumerate(kept.items()):
                assert pool.get(tenant).get(memory_id).content == f"memory of tenant {i}"
                assert [h.content for h in pool.get(tenant).recall("memory")] == [f"memory of tenant {i}"]
