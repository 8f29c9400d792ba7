"""DatabasePool: refused names, permissions, LRU eviction, cross-tenant refusal;
DatabaseLocked and read-only opens against a second process."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import pytest

import anatid
from anatid import Anatid, DatabaseLocked, ValidationError
from anatid.pool import CrossTenantError, DatabasePool, PoolExhausted

from conftest import PACKAGE_PARENT, at

BAD_NAMES = ["", ".", "..", "a/b", "../x", "/etc", "a\\b", "x\x00y", "\ud800", "n" * 256, True, None, 1.5, -1,
             b"bytes"]


@pytest.fixture
def pool(tmp_path):
    p = DatabasePool("tenants/{tenant}/memory.anatid", root=tmp_path / "root", max_open=2, embedding_dim=4)
    yield p
    p.close()


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("bad", BAD_NAMES, ids=repr)
def test_bad_tenant_names_are_refused_and_create_nothing(pool, bad):
    before = sorted(os.walk(pool.root))
    with pytest.raises(ValidationError) as err:
        pool.get(bad)
    assert err.value.argument == "tenant"
    assert sorted(os.walk(pool.root)) == before


@pytest.mark.parametrize("template", ["memory.anatid", "{tenant}{other}.anatid", "/abs/{tenant}.anatid",
                                      "{0}{tenant}", "{tenant", 7])
def test_bad_templates_are_refused(tmp_path, template):
    with pytest.raises(ValidationError):
        DatabasePool(template, root=tmp_path)


def test_symlink_out_of_root_is_refused(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / "evil").symlink_to(outside)
    with DatabasePool("{tenant}/memory.anatid", root=root) as pool:
        with pytest.raises(ValidationError, match="outside the pool root"):
            pool.get("evil")
    assert list(outside.iterdir()) == []
    with DatabasePool("../{tenant}.anatid", root=root) as pool:
        with pytest.raises(ValidationError, match="outside the pool root"):
            pool.get("x")


def test_files_0600_folders_0700_and_data_persists(pool):
    db = pool.get("acme")
    m = db.remember("acme ships rockets", entities=["acme"], now=at(1))
    path = pool.path_for("acme")
    assert mode(path.parent) == 0o700 and mode(path.parent.parent) == 0o700
    pool.close()
    assert mode(path) == 0o600
    assert not os.path.exists(str(path) + ".wal") or mode(str(path) + ".wal") == 0o600
    with DatabasePool("tenants/{tenant}/memory.anatid", root=pool.root) as again:
        assert again.get("acme").get(m.memory_id).content == "acme ships rockets"


def test_lru_eviction_and_pinning(pool):
    a = pool.get("a")
    pool.get("b")
    pool.get("a")  # a is now the most recently used
    pool.get("c")  # evicts b
    assert pool.open_tenants == ["a", "c"]
    assert a.remember("still open", now=at(1)).content == "still open"
    with pool.tenant("a"), pool.tenant("c"):
        with pytest.raises(PoolExhausted):
            pool.get("d")
    pool.get("d")  # the with block moved a, then c, to the end: a is evicted
    assert pool.open_tenants == ["c", "d"]
    with pytest.raises(anatid.AnatidError, match="closed"):
        a.remember("a was evicted", now=at(2))
    assert pool.get("a").recall("open")[0].content == "still open"


def test_tenants_are_separate_files_and_handles_refuse_others(pool):
    with pool.tenant("a") as a, pool.tenant("b") as b:
        ma = a.remember("alpha secret", entities=["x"], now=at(1))
        b.remember("beta secret", entities=["x"], now=at(2))
        assert [h.content for h in b.recall("secret")] == ["beta secret"]
        with pytest.raises(anatid.NotFoundError):
            b.get(ma.memory_id)
        assert a.require("a") is a
        with pytest.raises(CrossTenantError):
            a.require("b")
    assert pool.path_for("a") != pool.path_for("b")


def test_a_file_moved_under_another_name_is_refused(pool):
    pool.get("a").remember("a's memory", now=at(1))
    pool.close()
    src, dst = pool.path_for("a"), pool.path_for("b")
    dst.parent.mkdir(mode=0o700, parents=True)
    os.link(src, dst)
    with DatabasePool("tenants/{tenant}/memory.anatid", root=pool.root) as again:
        with pytest.raises(CrossTenantError, match="belongs to tenant 'a'"):
            again.get("b")
        assert again.open_tenants == []


def test_read_only_pool_does_not_create(tmp_path):
    with DatabasePool("{tenant}.anatid", root=tmp_path) as rw:
        rw.get("a").remember("kept", now=at(1))
    with DatabasePool("{tenant}.anatid", root=tmp_path, read_only=True) as ro:
        assert [h.content for h in ro.get("a").recall("kept")] == ["kept"]
        with pytest.raises(anatid.NotFoundError):
            ro.get("b")
        with pytest.raises(anatid.ReadOnlyError):
            ro.get("a").remember("no", now=at(2))
    assert not (tmp_path / "b.anatid").exists()


_HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {python!r})
    from anatid import Anatid
    db = Anatid.open({path!r})
    print("ready", flush=True)
    sys.stdin.readline()
""")


def test_database_locked_names_the_fix_when_another_process_writes(tmp_path):
    path = str(tmp_path / "held.anatid")
    Anatid.open(path).close()
    child = subprocess.Popen([sys.executable, "-c", _HOLDER.format(python=PACKAGE_PARENT, path=path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        for read_only in (False, True):
            with pytest.raises(DatabaseLocked) as err:
                Anatid.open(path, read_only=read_only)
            assert "another process" in str(err.value)
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    with Anatid.open(path, read_only=True) as ro:  # free again: read-only works
        assert ro.stats() is not None
