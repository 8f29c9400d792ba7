// Text encodings of a journal entry and of a recall request.
//
// Why text: every column a table scan reads costs a fixed amount per call, and the
// recall is dominated by such fixed costs (docs/benchmarks.md). The journal therefore
// stores each entry as one VARCHAR that SQL can build (python/anatid/indexes/graph.py,
// _ENTRY) and the request travels as one VARCHAR, so a read scans two columns and binds
// two arguments.
//
// Both are '|'-separated fields; integers in decimal, an empty field is NULL, strings
// are "<bytes>:<bytes of text>" (so they may contain '|').
//   entry:   op|seq|a|b|valid_from_us|valid_to_us|a_key|b_key|kind
//   request: hops|max_hits|valid_at_us|mode|n_seeds|seed...|n_kinds|kind...
//            [|named|expand|hub_share|hub_floor|ungated|n_trusted|id...|n_extra|(id|src|amount)...
//             |wg|protect|k|n_first|(id|score)...]
//            (the bracketed block asks for the hybrid graph arm's ranking, graph_rank.hpp;
//             n_kinds = -1: no kinds filter; valid_at empty: the current instant;
//             mode 0: lenient, 1: strict, 2: lenient, and a journal without a base
//             marker is folded over an empty graph; see ParsedRequest)
#pragma once

#include "graph_recall.hpp"

#include <string>
#include <string_view>

namespace anatid {
namespace graph {

// Throws std::invalid_argument naming the malformed field.
JournalRow ParseJournalEntry(std::string_view entry);

struct ParsedRequest {
	RecallRequest request;
	bool has_valid_at = false;
	bool strict = false; // no generation to answer from is an error, not a sentinel hit
	// A journal with no base marker is the whole graph (a tenant that never had a
	// generation): the caller has checked that the journal holds every row, which only
	// it can do, since it reads the canonical tables.
	bool empty_base = false;
};
ParsedRequest ParseRequest(std::string_view text);
std::string EncodeRequest(const RecallRequest &request, bool has_valid_at, bool strict);

} // namespace graph
} // namespace anatid
