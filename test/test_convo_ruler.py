"""The conversational ruler, CI-sized: the graph arm must help where structure is the only
way to the evidence (multi-hop questions joined by a rare name across sessions), must not
lower all-class recall, and the recall it scores is the one both engines give.

The full-size numbers and the ablation come from `python -m benchmark.convo_ruler`
(docs/quality.md, "The graph arm"); this test uses fresh seeds and four conversations,
scored through `recall()` exactly as a user calls it.
"""
from __future__ import annotations

import pytest

from anatid import Anatid, engines
from anatid.convo.ruler import generate, load, overall, score
from anatid.vault.embed import HashingEmbedder

GRAPH_OFF = {"weights": {"graph": 0}}


@pytest.fixture(scope="module", params=[None, 64], ids=["bm25-only", "hashing-64"])
def ruler(request, tmp_path_factory):
    dim = request.param
    emb = HashingEmbedder(dim) if dim else None
    convs = generate(conversations=4, seed=3)
    path = str(tmp_path_factory.mktemp("ruler") / "convo.anatid")
    handles: dict[int, Anatid] = {}

    def factory(tenant: int) -> Anatid:
        if tenant not in handles:
            handles[tenant] = Anatid.open(path, tenant=tenant + 1, **({"embedding_dim": dim} if dim else {}))
        return handles[tenant]
    loaded = load(factory, convs, emb)
    yield factory, loaded, emb
    for db in handles.values():
        db.close()


def by_class(scores):
    return {s.cls: s for s in scores}


def test_the_graph_arm_finds_the_multi_hop_evidence_text_and_vectors_miss(ruler):
    factory, loaded, emb = ruler
    off = by_class(score(factory, loaded, emb, recall_kwargs=GRAPH_OFF))
    on = by_class(score(factory, loaded, emb))
    assert on["multi-hop"].n >= 5
    assert on["multi-hop"].r10 >= off["multi-hop"].r10 + 0.05, (off["multi-hop"], on["multi-hop"])


def test_the_graph_arm_does_not_lower_all_class_recall(ruler):
    factory, loaded, emb = ruler
    off = overall(score(factory, loaded, emb, recall_kwargs=GRAPH_OFF))
    on = overall(score(factory, loaded, emb))
    assert on.r10 >= off.r10, (off, on)
    assert on.ndcg10 >= off.ndcg10, (off, on)


def test_the_ruler_scores_what_both_engines_return(ruler):
    factory, loaded, emb = ruler
    db = factory(loaded[0].tenant)
    if not db.native.loaded:
        pytest.skip(f"native extension not loaded: {db.native.reason}")
    questions = loaded[0].conversation.questions[:25]
    vecs = emb.embed([q.question for q in questions]) if emb else [None] * len(questions)
    said = 0
    for q, v in zip(questions, vecs):
        kw = {} if v is None else {"embedding": v}
        native = db.recall(q.question, **kw)
        saved = engines._native_hybrid
        engines._native_hybrid = None
        try:
            oracle = db.recall(q.question, **kw)
        finally:
            engines._native_hybrid = saved
        assert native.engine == "native" and oracle.engine == "sql"
        assert [(h.memory_id, h.sources, h.hop) for h in native] == [(h.memory_id, h.sources, h.hop) for h in oracle]
        assert [h.score for h in native] == pytest.approx([h.score for h in oracle], rel=1e-12)
        gated = [n for n in native.notes if "(a hub)" in n]
        assert gated == [n for n in oracle.notes if "(a hub)" in n]
        said += bool(gated)
    assert said > 0      # a question names a speaker: a hub, and the hits say it was gated


def _macro(db, question, tenant, vec, extra=""):
    qvec = "NULL" if vec is None else "$qvec"
    params = {"q": question, "t": tenant} | ({} if vec is None else {"qvec": [float(x) for x in vec]})
    return db.connection.execute(
        "SELECT memory_id, content, score, rank_vector, rank_text, rank_graph, hop "
        f"FROM anatid.anatid_hybrid($q, tenant := $t, k := 10, qvec := {qvec}{extra})", params).fetchall()


@pytest.mark.parametrize("weights,extra", [(None, ""), ({"graph": 0}, ", wg := 0")], ids=["defaults", "graph-off"])
def test_the_sql_macro_answers_what_recall_answers(ruler, weights, extra):
    # docs/sql.md: anatid.anatid_hybrid from a plain connection runs recall()'s graph stage
    # (same ids in the same order, same content and scores, the graph hits' hops)
    factory, loaded, emb = ruler
    for item in loaded[:2]:
        db = factory(item.tenant)
        if not db.native.loaded:
            pytest.skip(f"native extension not loaded: {db.native.reason}")
        questions = item.conversation.questions[:15]
        vecs = emb.embed([q.question for q in questions]) if emb else [None] * len(questions)
        graph_found = 0
        for q, v in zip(questions, vecs):
            kw = {} if v is None else {"embedding": v}
            want = db.recall(q.question, weights=weights, **kw)
            got = _macro(db, q.question, item.tenant + 1, v, extra)
            assert [r[0] for r in got] == [h.memory_id for h in want], q.question
            assert [r[1] for r in got] == [h.content for h in want]
            assert [r[2] for r in got] == pytest.approx([h.score for h in want], rel=1e-12)
            assert [r[6] for r in got] == [h.hop for h in want]
            assert [r[5] is not None for r in got] == ["graph" in h.sources for h in want]
            assert [(r[3] is not None, r[4] is not None) for r in got] == \
                [("vector" in h.sources, "text" in h.sources) for h in want]
            graph_found += sum(r[5] is not None for r in got)
        if weights is None:
            assert graph_found > 0     # the comparison covered hits the graph arm found


def test_the_sql_macro_answers_what_recall_answers_before_and_after_a_build(tmp_path):
    # a file never maintained (the graph journal alone), then a generation with writes on top
    emb = HashingEmbedder(32)
    convs = generate(conversations=2, seed=11)
    db = Anatid.open(str(tmp_path / "fresh.anatid"), tenant=1, embedding_dim=32)
    if not db.native.loaded:
        pytest.skip(f"native extension not loaded: {db.native.reason}")
    first, second = load(lambda t: db, convs[:1], emb, maintain=False)[0], None

    def same(item, stage):
        questions = item.conversation.questions[:12]
        vecs = emb.embed([q.question for q in questions])
        graph_found = 0
        for q, v in zip(questions, vecs):
            want = db.recall(q.question, embedding=v)
            got = _macro(db, q.question, 1, v)
            assert [(r[0], r[6]) for r in got] == [(h.memory_id, h.hop) for h in want], (stage, q.question)
            assert [r[2] for r in got] == pytest.approx([h.score for h in want], rel=1e-12)
            graph_found += sum(r[5] is not None for r in got)
        assert graph_found > 0, stage
    same(first, "fresh")
    db.maintain_indexes()
    second = load(lambda t: db, convs[1:], emb, maintain=False)[0]     # journalled over the generation
    same(first, "base + journal")
    same(second, "base + journal, new turns")
    db.close()


def test_the_scorer_counts_what_recall_ranks():
    # No database: a stand-in recall puts one unrelated turn first, then the evidence. The
    # ruler must score MRR 1/2 and nDCG below 1 (ANATID_EVAL_MUTANT=1 breaks nDCG: this fails).
    from types import SimpleNamespace

    from anatid.convo.ruler import Loaded
    conv = generate(conversations=1, seed=5)[0]
    ids = [1000 + i for i in range(len(conv.turns))]
    evidence = {q.question: q.evidence for q in conv.questions}

    class Stand:
        def recall(self, question, k=10, **kw):
            ev = evidence[question]
            other = next(i for i in range(len(ids)) if i not in ev)
            return [SimpleNamespace(memory_id=ids[i]) for i in [other, *ev]][:k]
    scores = score(lambda t: Stand(), [Loaded(conv, 0, ids)])
    for s in scores:
        assert s.mrr == pytest.approx(0.5)
        assert s.r10 == pytest.approx(1.0)
        assert 0.0 < s.ndcg10 < 1.0, s


def test_the_docs_quote_the_benchmark_results():
    # docs/quality.md's conversational tables are benchmark/results/convo-ruler-*.json, not typed in
    import json
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "quality.md").read_text(encoding="utf-8")
    for name in ("none", "minilm"):
        res = json.loads((root / "benchmark" / "results" / f"convo-ruler-{name}.json").read_text())
        for config, v in res["configurations"].items():
            row = f"| {config} | " + " | ".join(f"{v['classes'][c]['r10']:.3f}" for c in v["classes"]) \
                + f" | {v['all']['r10']:.3f} | {v['all']['ndcg10']:.3f} |"
            assert row in doc, (name, row)
    assert not re.search(r"CONVO_[A-Z]+_TABLE", doc)


@pytest.mark.parametrize("maintained", [False, True], ids=["fresh", "maintained"])
def test_a_tenant_with_no_graph_rows_is_ranked_natively_as_the_oracle_ranks_it(tmp_path, maintained):
    # memories filed under no entity: the graph journal holds no row for the tenant, and the
    # native ranker still fuses the first stage (a NULL entry carries its request)
    db = Anatid.open(str(tmp_path / "plain.anatid"), tenant=2)
    if not db.native.loaded:
        pytest.skip(f"native extension not loaded: {db.native.reason}")
    with db:
        db.remember_many([{"content": f"note {i}: the lantern festival ran late"} for i in range(30)])
        if maintained:
            db.maintain_indexes()
        native = db.recall("lantern festival")
        saved = engines._native_hybrid
        engines._native_hybrid = None
        try:
            oracle = db.recall("lantern festival")
        finally:
            engines._native_hybrid = saved
        assert native.engine == "native" and oracle.engine == "sql"
        assert not any("SQL oracle" in n for n in native.notes), native.notes
        assert len(native) == 10
        assert [(h.memory_id, h.sources, h.hop) for h in native] == [(h.memory_id, h.sources, h.hop) for h in oracle]
        assert [h.score for h in native] == pytest.approx([h.score for h in oracle], rel=1e-12)
