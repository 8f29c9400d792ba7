// recall()'s seeds from the query, resolved on the folded graph instead of the entity table.
//
// DuckDB-free core. A seed from the query is an entity whose name has at least one token
// and whose every token is a query term (python/anatid/native_hybrid.py, seeds_from_terms).
// The SQL rule tokenizes lower(name) by [\p{L}\p{M}\p{N}]+; on an ASCII name key (already
// lower-cased and whitespace-collapsed, python/anatid/validate.py) that is exactly its
// [a-z0-9]+ runs, so the graph generation and the journal fold can answer from their own
// keys. A non-ASCII key would need DuckDB's Unicode lower() and classes, which this core
// does not reproduce: SeedsFromTerms then declines and the caller resolves seeds itself.
// Resolving on the fold rather than on anatid_entities gives the same ranking: an entity the
// fold does not hold has no edge and no ABOUT link, and graph::Rank skips a key it cannot find.
#pragma once

#include "graph_recall.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace anatid {
namespace graph {

// Appends the [a-z0-9]+ runs of `key` to `tokens` (views into key); false when key has a
// byte outside ASCII (its tokens are then not appended).
bool AsciiKeyTokens(std::string_view key, std::vector<std::string_view> &tokens);

// The fold's name keys that are seeds for `terms` (distinct query terms, any order), sorted
// ascending and distinct, in `out`. False (out untouched) when some key of the base or the
// journal is not ASCII.
bool SeedsFromTerms(const JournalFold &fold, const std::vector<std::string> &terms, std::vector<std::string> &out);

} // namespace graph
} // namespace anatid
