"""The metrics against values computed by hand. Under ANATID_EVAL_MUTANT=1 (nDCG
returns 1.0) this file must fail: test_eval_mutant.py checks that it does."""
from __future__ import annotations

import math

import pytest

from anatid.vault.metrics import mrr, ndcg_at, recall_at, selftest


def test_selftest_passes():
    assert selftest() == []


def test_recall_counts_each_relevant_note_once():
    assert recall_at(["a", "b", "c"], ["b", "x"], 2) == 0.5
    assert recall_at(["a", "a", "a", "b"], ["b"], 2) == 1.0      # duplicates take no slot
    assert recall_at(["a"], [], 5) == 0.0


def test_mrr_is_the_first_relevant_position():
    assert mrr(["x", "y", "a"], ["a", "y"]) == 0.5
    assert mrr(["x"], ["a"]) == 0.0


@pytest.mark.parametrize("ranked, relevant, k, expected", [
    (["a"], ["a"], 12, 1.0),
    (["x", "a"], ["a"], 12, 1 / math.log2(3)),                       # 0.630930
    (["x", "a"], ["a"], 1, 0.0),
    (["a", "x", "b"], ["a", "b", "c"], 12, (1 + 0.5) / (1 + 1 / math.log2(3) + 0.5)),
    (["foo", "foo"], ["foo"], 12, 1.0),                              # the double-credit bug stays fixed
    (["x", "y"], ["a"], 12, 0.0),
])
def test_ndcg_by_hand(ranked, relevant, k, expected):
    assert ndcg_at(ranked, relevant, k) == pytest.approx(expected, abs=1e-9)


def test_ndcg_never_exceeds_one():
    assert ndcg_at(["a", "a", "b", "b"], ["a", "b"], 12) == pytest.approx(1.0)
