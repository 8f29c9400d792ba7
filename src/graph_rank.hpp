// The hybrid graph arm's ranking: relevance, not recency (DuckDB-free core).
//
// The contract is the SQL oracle's (python/anatid/verbs/graph_rank_sql.py), with the
// same summation order, so ids and order agree exactly:
//   - a named entity (request.seed_keys) gets mass named at hop 0 and named * 0.5**j at
//     relates hop j <= request.hops; an entity filed under trusted hit h (position r)
//     gets expand * sum(1 / r) over its trusted hits, added in memory_id order;
//   - N: visible memories filed under some entity; deg(v): v's visible memories; a hub
//     (deg > max(hub_floor, hub_share * N)) gets no mass, except a named one when the
//     caller named the seeds;
//   - each massed entity gives mass * ln(1 + N / deg) to each of its request.limit
//     newest visible memories; extra contributions (episode neighbours, computed by SQL)
//     are added as given;
//   - a candidate's score sums its contributions in (source kind, source id) order:
//     0 named entity, 1 trusted-hit entity (both by entity id), 2 extra (by source id);
//     hop: the smallest of its contributions' (named: relates hops; others: 1);
//   - candidates of an allowed kind with score > 0, ordered by score descending, hop
//     ascending, memory_id descending; the first request.limit.
#pragma once

#include "graph_recall.hpp"

#include <vector>

namespace anatid {
namespace graph {

// request.rank.enabled must be set. Same argument checks as Recall. Returns the fused top
// rank.k (Fuse) over the graph arm's first request.limit candidates, then one kHopGatedSeed
// entry per named seed that was gated as a hub, in request.seed_keys order.
std::vector<RecallHit> Rank(const JournalFold &fold, const RecallRequest &request);

// The three-arm fusion (the oracle: graph_rank_sql.FUSE): each hit scores s1 (its first
// stage score, 0 when absent) + wg / (60 + its rank in `arm`); the first `protect` of the
// first stage keep their places, the rest follow by score descending, memory_id
// ascending. A hit the graph arm did not find has hop kHopNotGraph.
std::vector<RecallHit> Fuse(const RankRequest &rank, const std::vector<RecallHit> &arm);

} // namespace graph
} // namespace anatid
