"""The tokenizer is one SQL pattern (anatid.text.TOKEN_PATTERN) used by the writes,
the SQL oracle and the anatid.anatid_hybrid macro: pin that the macro carries the
very same pattern, and that both read paths find the same documents for digits,
accents, non-Latin scripts and punctuation."""
from __future__ import annotations

import pytest

from anatid import Anatid, engines
from anatid.indexes.text import rebuild_fts_index
from anatid.text import TOKEN_PATTERN, tokens_sql

from conftest import at

CORPUS = [
    "Café au lait at 7:30, naïve résumé",
    "cafe without the accent; CAFÉ in capitals",
    "Москва и Санкт-Петербург",
    "Αθήνα είναι η πρωτεύουσα",
    "東京タワーに行きました 東京",
    "القاهرة مدينة كبيرة",
    "नमस्ते दुनिया हिन्दी",
    "x1 42 3.14 2024-05-01 v2.0",
    "hello,world! (parenthesised) [bracketed] {braced} quote's",
    "emoji 🍕 pizza🍕night",
]

QUERIES = ["café", "cafe", "CAFÉ", "Москва", "санкт", "Αθήνα", "東京", "東京タワーに行きました", "القاهرة",
           "नमस्ते", "हिन्दी", "42", "3", "14", "2024", "v2", "world", "quote", "s", "pizza", "🍕", "night",
           "résumé naïve", "7 30"]


def test_macro_uses_the_shared_pattern():
    con = __import__("duckdb").connect()
    from anatid import _native
    con, status = _native.connect(":memory:")
    if not status.loaded:
        pytest.skip(status.reason)
    body = con.execute("SELECT macro_definition FROM duckdb_functions() WHERE function_name = 'anatid_hybrid'"
                       ).fetchone()[0]
    assert body.count(TOKEN_PATTERN) >= 3
    assert "lower(" in body


def test_tokens_of_scripts_digits_and_punctuation():
    con = __import__("duckdb").connect()
    toks = lambda s: con.execute(f"SELECT {tokens_sql('$s')}", {"s": s}).fetchone()[0]
    assert toks("Café au lait") == ["café", "au", "lait"]        # accents kept, case folded
    assert toks("3.14 v2.0") == ["3", "14", "v2", "0"]            # digits are letters of a token
    assert toks("東京タワー 東京") == ["東京タワー", "東京"]          # CJK runs stay whole
    assert toks("नमस्ते") == ["नमस्ते"]                             # combining marks stay in the word
    assert toks("quote's (x)") == ["quote", "s", "x"]              # punctuation splits


@pytest.mark.parametrize("rebuilt", [False, True])
def test_native_and_oracle_agree_on_every_script(tmp_path, rebuilt):
    db = Anatid.open(str(tmp_path / "scripts.anatid"))
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    try:
        for i, text in enumerate(CORPUS):
            db.remember(text, now=at(i + 1))
        if rebuilt:
            rebuild_fts_index(db)
        for q in QUERIES:
            native = db.recall(q, k=20)
            saved, engines._native_hybrid = engines._native_hybrid, None
            try:
                oracle = db.recall(q, k=20)
            finally:
                engines._native_hybrid = saved
            assert native.engine == "native"
            assert [(h.memory_id, h.sources) for h in native] == [(h.memory_id, h.sources) for h in oracle], q
        assert [h.content for h in db.recall("café", k=5)] == [CORPUS[0], CORPUS[1]] or \
            {h.content for h in db.recall("café", k=5)} == {CORPUS[0], CORPUS[1]}
        assert {h.content for h in db.recall("cafe", k=5)} == {CORPUS[1]}
    finally:
        db.close()


def test_ascii_fast_path_equals_the_sql_pattern():
    """remember tokenizes ASCII text in Python ([a-z0-9]+ after lower()); every ASCII
    character, alone and in runs, must give the very terms the SQL pattern gives."""
    import random
    from collections import Counter
    from anatid.text import ascii_postings
    con = __import__("duckdb").connect()
    toks = lambda s: con.execute(f"SELECT {tokens_sql('$s')}", {"s": s}).fetchone()[0]
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(1, 128)]
    samples = ["".join(alphabet)] + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
                                     for _ in range(300)]
    for s in samples:
        assert ascii_postings(s) == sorted(Counter(toks(s)).items()), repr(s)
    assert ascii_postings("café") is None
