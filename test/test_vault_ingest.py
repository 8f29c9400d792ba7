"""Ingest: entities, chunks, links, supersession; incremental and bitemporal re-ingest."""
from __future__ import annotations

from conftest import at

from anatid import Anatid
from anatid.vault import ingest_vault
from anatid.vault.recall import VaultRecall


def _vault(root, files: dict[str, str]):
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _open_links(db, as_of=None):
    rec = VaultRecall(db, "hashing-64")
    keys = [r[0] for r in db.connection.execute("SELECT name_key FROM anatid_entities").fetchall()]
    return sorted((a, b, k) for a, b, k in rec._edges(keys, as_of, ("links_to", "superseded_by")))


def _contents(db, path):
    return [r[0] for r in db.connection.execute(
        "SELECT content FROM anatid_memories WHERE writer = $w AND tx_to IS NULL AND valid_to IS NULL "
        "ORDER BY memory_id", {"w": "vault:" + path}).fetchall()]


def test_first_ingest_makes_entities_chunks_and_links(tmp_path):
    vault = tmp_path / "v"
    _vault(vault, {"a.md": "# Alpha\n\nAlpha links [[b|bee]] and [[c#Part]] and [[nowhere]].\n",
                   "b.md": "# Beta\n\nBeta text. ```[[a]]``` is code.\n",
                   "c.md": "---\ntitle: Gamma\n---\nGamma text [[a]].\n"})
    with Anatid.open(str(tmp_path / "m.anatid")) as db:
        r = ingest_vault(db, vault, embedder="hashing-64", now=at(1))
        assert (r.new, r.chunks_written, r.links_opened, r.unresolved_links) == (3, 3, 3, 1)
        assert _open_links(db) == [("alpha", "beta", "links_to"), ("alpha", "gamma", "links_to"),
                                   ("gamma", "alpha", "links_to")]
        hits = db.context("Gamma")
        assert len(hits) == 1 and "Gamma text" in hits[0].content


def test_unchanged_files_cost_nothing(tmp_path):
    vault = tmp_path / "v"
    _vault(vault, {f"n{i}.md": f"# Note {i}\n\nBody {i} links [[n{(i + 1) % 5}]].\n" for i in range(5)})
    with Anatid.open(str(tmp_path / "m.anatid")) as db:
        ingest_vault(db, vault, embedder="hashing-64", now=at(1))
        before = db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0]
        edges = db.connection.execute("SELECT count(*) FROM anatid_edges").fetchone()[0]
        r = ingest_vault(db, vault, embedder="hashing-64", now=at(2))
        assert (r.unchanged, r.chunks_written, r.links_opened, r.links_closed) == (5, 0, 0, 0)
        assert db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0] == before
        assert db.connection.execute("SELECT count(*) FROM anatid_edges").fetchone()[0] == edges


def test_change_supersedes_delete_closes_and_as_of_remembers(tmp_path):
    vault = tmp_path / "v"
    _vault(vault, {"a.md": "# Alpha\n\nOld alpha text about lanterns. See [[b]].\n",
                   "b.md": "# Beta\n\nBeta text about kettles.\n",
                   "c.md": "# Gamma\n\nGamma text about ropes. See [[a]].\n"})
    path = str(tmp_path / "m.anatid")
    with Anatid.open(path) as db:
        ingest_vault(db, vault, embedder="hashing-64", now=at(1))
        _vault(vault, {"a.md": "# Alpha\n\nNew alpha text about compasses. See [[c]].\n"})
        (vault / "b.md").unlink()
        r = ingest_vault(db, vault, embedder="hashing-64", now=at(2))
        assert (r.changed, r.deleted) == (1, 1)
        assert _contents(db, "a.md") == ["# Alpha\n\nNew alpha text about compasses. See [[c]]."]
        assert _contents(db, "b.md") == []
        assert _open_links(db) == [("alpha", "gamma", "links_to"), ("gamma", "alpha", "links_to")]
        # the old chunk was superseded (closed in validity), the deleted note forgotten softly: rows kept
        old = db.connection.execute("SELECT valid_to, superseded_by FROM anatid_memories WHERE content LIKE "
                                    "'%lanterns%'").fetchone()
        assert old[0] is not None and old[1] is not None
        assert db.connection.execute("SELECT count(*) FROM anatid_memories WHERE content LIKE '%kettles%'"
                                     ).fetchone()[0] == 1
        # the vault as it was
        rec = VaultRecall(db)
        then = rec.ask("lanterns", mode="vector", k=3, as_of=at(1.5))
        assert then.paths[0] == "a.md" and "lanterns" in then.hits[0].snippet
        assert "b.md" in then.paths
        now = rec.ask("lanterns", mode="vector", k=3)
        assert "b.md" not in now.paths and "lanterns" not in now.hits[0].snippet
        assert _open_links(db, as_of=at(1.5)) == [("alpha", "beta", "links_to"), ("gamma", "alpha", "links_to")]


def test_unchanged_chunks_keep_their_memory(tmp_path):
    vault = tmp_path / "v"
    paras = ["Paragraph %d. " % i + "filler words here " * 30 for i in range(4)]
    _vault(vault, {"long.md": "# Long\n\n" + "\n\n".join(paras)})
    with Anatid.open(str(tmp_path / "m.anatid")) as db:
        ingest_vault(db, vault, embedder="hashing-64", now=at(1), max_chunk_chars=700)
        ids1 = db.connection.execute("SELECT memory_ids FROM anatid_vault_files").fetchone()[0]
        _vault(vault, {"long.md": "# Long\n\n" + "\n\n".join(paras[:3] + ["Paragraph 3 changed. " + "other words here " * 30])})
        r = ingest_vault(db, vault, embedder="hashing-64", now=at(2), max_chunk_chars=700)
        ids2 = db.connection.execute("SELECT memory_ids FROM anatid_vault_files").fetchone()[0]
        assert len(ids1) == len(ids2) >= 3
        assert ids1[:-1] == ids2[:-1] and ids1[-1] != ids2[-1]
        assert (r.chunks_kept, r.chunks_written) == (len(ids1) - 1, 1)


def test_superseded_by_refiles_the_outdated_note(tmp_path):
    vault = tmp_path / "v"
    _vault(vault, {"deploy.md": "---\nsuperseded_by: \"[[deploy-2025]]\"\n---\n# Deploy\n\nShip by hand.\n",
                   "deploy-2025.md": "# Deploy 2025\n\nShip with the pipeline.\n"})
    with Anatid.open(str(tmp_path / "m.anatid")) as db:
        ingest_vault(db, vault, embedder="hashing-64", now=at(1))
        kinds = dict(db.connection.execute("SELECT path, kind FROM anatid_vault_files").fetchall())
        assert kinds == {"deploy.md": "vault_outdated", "deploy-2025.md": "vault_note"}
        assert ("deploy", "deploy 2025", "superseded_by") in _open_links(db)
        # the replacement disappears: the old note is current again, through a supersede
        (vault / "deploy-2025.md").unlink()
        ingest_vault(db, vault, embedder="hashing-64", now=at(2))
        assert db.connection.execute("SELECT kind FROM anatid_vault_files WHERE path = 'deploy.md'"
                                     ).fetchone()[0] == "vault_note"
        assert _open_links(db) == []


def test_embedder_is_fixed_per_file(tmp_path):
    vault = tmp_path / "v"
    _vault(vault, {"a.md": "# A\n\ntext\n"})
    with Anatid.open(str(tmp_path / "m.anatid")) as db:
        ingest_vault(db, vault, embedder="hashing-64", now=at(1))
        import pytest
        with pytest.raises(ValueError, match="hashing-64"):
            ingest_vault(db, vault, embedder="hashing-32", now=at(2))
