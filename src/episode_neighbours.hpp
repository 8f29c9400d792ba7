// Episode neighbours of trusted hits (DuckDB-free core): the contract of the SQL statement
// python/anatid/verbs/graph_rank_sql.py NEIGHBOURS, which both engines ran before the
// native graph stage took it over (extension/anatid_hybrid_recall.cpp):
//   for each hit t and each episode e that t is evidence of, among e's members that are
//   visible (t itself among them), the largest memory id below t and the smallest above
//   it are neighbours of t. One pair per (t, e, side): a neighbour t shares two episodes
//   with counts twice. Pairs come ordered by (source t, neighbour), as the SQL orders them.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace anatid {

struct EvidenceRow {
	int64_t memory_id;
	int64_t episode_id;
};

// (neighbour, source) pairs for the hits `sources`; `visible` says whether a memory is
// visible at the read's instant. Rows may come in any order and repeat.
std::vector<std::pair<int64_t, int64_t>> EpisodeNeighbours(const std::vector<EvidenceRow> &evidence,
                                                           const std::vector<int64_t> &sources,
                                                           const std::function<bool(int64_t)> &visible);

} // namespace anatid
