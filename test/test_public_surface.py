"""The Python facade tells its own story (STYLE.md rule 16): every public method of Anatid,
AsOf, DatabasePool and a pooled handle spells out its parameters with type hints and a
docstring (no **kw, no *args), forwards exactly the parameters of the verb it calls, and
the package ships py.typed so that mypy checks a user's calls against those signatures."""
from __future__ import annotations

import inspect
import os
import pydoc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import anatid
from anatid import Anatid, AsOf, DatabasePool
from anatid.indexes import report
from anatid.pool import PooledAnatid
from anatid.verbs import entities, indexes, memories, reads, relations, upkeep

PACKAGE = Path(anatid.__file__).parent
REPO = Path(__file__).resolve().parents[1]   # pyproject.toml: the checkout, not the installed copy
SURFACE = (Anatid, AsOf, DatabasePool, PooledAnatid)

# Each facade method and the verb it forwards to (the verb's first parameter is the store).
ANATID_VERBS = {
    "remember": memories.remember, "remember_many": upkeep.remember_many, "supersede": memories.supersede,
    "update": memories.update, "forget": memories.forget, "reinforce": memories.reinforce,
    "prune": upkeep.prune, "relate": relations.relate, "relate_many": relations.relate_many,
    "unrelate": relations.unrelate, "upsert_entity": entities.upsert_entity, "episode": memories.episode,
    "get": reads.get, "recall": reads.recall, "recall_2hop": reads.recall_2hop, "context": reads.context,
    "provenance": reads.provenance, "maintain_indexes": indexes.maintain_indexes,
    "rebuild_fts_index": indexes.rebuild_fts_index, "build_ann_index": indexes.build_ann_index,
    "index_health": report.index_health,
}
# Public methods that are the handle's own, not a verb's.
ANATID_OWN = {"open", "close", "transaction", "atomic", "as_of", "stats", "doctor", "tenant", "connection", "native"}
ASOF_VERBS = {"recall": reads.recall, "recall_2hop": reads.recall_2hop, "context": reads.context, "get": reads.get}


def public_members(cls) -> dict[str, object]:
    """Public methods and properties, inherited ones included; DatabasePool's constructor too."""
    out = {}
    for name in dir(cls):
        raw = inspect.getattr_static(cls, name)
        if name.startswith("_") and not (name == "__init__" and cls is DatabasePool):
            continue
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if inspect.isfunction(raw) or isinstance(raw, property):
            out[name] = raw
    return out


def _function(member):
    return member.fget if isinstance(member, property) else member


def _params(fn, drop: int = 1, without=()) -> list[tuple]:
    ps = list(inspect.signature(fn).parameters.values())[drop:]
    return [(p.name, p.kind, p.default) for p in ps if p.name not in without]


def test_the_surface_is_what_this_test_covers():
    names = set(public_members(Anatid))
    assert names == set(ANATID_VERBS) | ANATID_OWN, "a new public method: add it to ANATID_VERBS or ANATID_OWN"
    assert set(public_members(AsOf)) == set(ASOF_VERBS)
    assert set(public_members(PooledAnatid)) == names | {"require"}
    assert {"get", "tenant", "path_for", "close", "open_tenants", "__init__"} <= set(public_members(DatabasePool))


@pytest.mark.parametrize("cls", SURFACE, ids=lambda c: c.__name__)
def test_no_catch_all_parameters_and_every_parameter_typed(cls):
    problems = []
    for name, member in public_members(cls).items():
        sig = inspect.signature(_function(member))     # follows functools.wraps (a pooled handle's methods)
        for p in list(sig.parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                problems.append(f"{name}: catch-all parameter {p}")
            elif p.annotation is p.empty:
                problems.append(f"{name}: parameter {p.name!r} has no type hint")
        if sig.return_annotation is sig.empty and name != "__init__":
            problems.append(f"{name}: no return type")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("cls", SURFACE, ids=lambda c: c.__name__)
def test_every_public_method_has_a_docstring_with_an_example(cls):
    problems = []
    for name, member in public_members(cls).items():
        doc = inspect.getdoc(member) or ""
        if not doc.strip():
            problems.append(f"{name}: no docstring")
        elif not isinstance(member, property) and "Example" not in doc:
            problems.append(f"{name}: the docstring has no example")
        if cls in (Anatid, DatabasePool) and not isinstance(member, property):
            # every argument explained (AsOf's methods refer to Anatid's, whose arguments they share)
            for p in list(inspect.signature(member).parameters)[1:]:
                if f"{p}:" not in doc and f"{p}`" not in doc:
                    problems.append(f"{name}: argument {p!r} is not described in the docstring")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(ANATID_VERBS))
def test_each_method_takes_exactly_its_verbs_parameters(name):
    verb = ANATID_VERBS[name]
    assert _params(getattr(Anatid, name)) == _params(verb), f"Anatid.{name} and {verb.__module__}.{name} differ"
    assert _params(getattr(PooledAnatid, name)) == _params(verb)


@pytest.mark.parametrize("name", sorted(ASOF_VERBS))
def test_as_of_reads_take_their_verbs_parameters_but_as_of(name):
    verb = ASOF_VERBS[name]
    assert "as_of" in inspect.signature(verb).parameters
    assert _params(getattr(AsOf, name)) == _params(verb, without=("as_of",))


@pytest.mark.parametrize("name", sorted(anatid.verbs.__all__[:-1]))    # PruneReport is no verb
def test_the_function_forms_show_their_verbs_signature(name):
    form = getattr(anatid.verbs, name)
    assert _params(form) == _params(ANATID_VERBS[name]) and inspect.getdoc(form) == inspect.getdoc(ANATID_VERBS[name])


def test_help_shows_the_arguments():
    text = pydoc.render_doc(Anatid.recall, renderer=pydoc.plaintext)
    assert "seed_entity" in text and "allow_slow" in text and "**kw" not in text
    assert "BruteForceCeilingError" in text


def test_the_package_ships_py_typed():
    assert (PACKAGE / "py.typed").is_file()
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["scikit-build"]["wheel"]
    # scikit-build-core copies every file of a listed package directory into the wheel (a
    # wheel built from this tree holds anatid/py.typed), unless wheel.exclude names it
    assert "python/anatid" in wheel["packages"]
    assert not [p for p in wheel.get("exclude", []) if "typed" in p or p.strip("/").startswith(("anatid", "*"))]
    assert "mypy" in " ".join(config["project"]["optional-dependencies"]["test"])


GOOD = """
    from datetime import timedelta
    import anatid
    from anatid import Anatid, DatabasePool, MaintenancePolicy, RecallHits

    def use(db: Anatid, pool: DatabasePool) -> list[int]:
        m = db.remember("Ada prefers tea", entities=["Ada"], kind="preference", valid_from="2026-01-01T00:00:00Z")
        db.update(m.memory_id, "Ada prefers green tea", expected_version=m.version)
        db.relate("Ada", "Babbage", "works_with", weight=2.0)
        hits: RecallHits = db.recall("tea", k=3, kinds=["preference"], seed_entity="Ada", weights={"graph": 0.5})
        db.as_of(anatid.utcnow()).context("Ada", hops=1, limit=5)
        db.prune(older_than=timedelta(days=90), dry_run=True)
        db.maintain_indexes(policy=MaintenancePolicy(), indexes=("text",))
        with pool.tenant("acme") as t:
            t.recall("tea", k=1)
        return [h.memory_id for h in hits]
"""

BAD = """
    from anatid import Anatid, DatabasePool

    def use(db: Anatid, pool: DatabasePool) -> None:
        db.recall("q", kk=3)
        db.recall("q", k="3")
        pool.get("acme").remember("x", kindd="fact")
"""


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")     # in the `test` extra
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(source))
    # PYTHONPATH, not MYPYPATH: mypy then treats anatid as an installed package, which it
    # analyses only when the package ships py.typed
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    env.pop("MYPYPATH", None)
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           "--no-error-summary", "--hide-error-context", str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def test_mypy_accepts_a_user_script(tmp_path):
    run = _mypy(tmp_path, GOOD)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_rejects_a_misspelled_keyword_and_a_wrong_type(tmp_path):
    run = _mypy(tmp_path, BAD)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert 'Unexpected keyword argument "kk" for "recall"' in out
    assert 'Argument "k" to "recall"' in out and "incompatible type" in out
    assert 'Unexpected keyword argument "kindd" for "remember"' in out
    assert "py.typed" not in out     # analysed, not skipped as untyped
