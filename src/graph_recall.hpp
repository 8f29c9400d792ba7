// Graph recall over a base generation plus its journal: the merge, the k-hop BFS and
// the top-k, with exactly the oracle's contract (python/anatid/verbs/graph_sql.py):
//
//   from the seed entities, walk open relates edges in both directions, breadth first,
//   up to `hops`; every visible memory ABOUT a reached entity is a hit at the smallest
//   distance of its entities; order hop ascending, then memory_id descending; limit.
//
// The journal holds every write since the base was built (rows of the table
// anatid_graph_journal, see python/anatid/sql/derived_graph.sql). It is merged on every
// call, before the time filter, so a write is visible to the next read.
#pragma once

#include "graph_generation.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace anatid {
namespace graph {

constexpr int64_t kOpenLow = std::numeric_limits<int64_t>::min();  // NULL valid_from
constexpr int64_t kOpenHigh = std::numeric_limits<int64_t>::max(); // NULL valid_to
constexpr int kMaxHops = 4;

enum JournalOp : int8_t {
	kOpBase = 0,         // a = generation id of the base these rows apply to
	kOpEdgeInterval = 1, // pair {a, b} is connected during [valid_from, valid_to)
	kOpEdgeClosed = 2,   // pair {a, b} has no believed relates edge
	kOpAbout = 3,        // memory a is ABOUT entity b (key b_key), kind, visible in [from, to)
	kOpMemoryClosed = 4, // memory a is no longer visible (soft forget, supersede)
	kOpMemoryErased = 5, // memory a was hard-forgotten
};

struct JournalRow {
	int64_t seq = 0;
	int8_t op = 0;
	int64_t a = 0;
	int64_t b = 0;
	std::string a_key; // entity name keys of edge endpoints / the ABOUT target (b_key)
	std::string b_key;
	std::string kind;
	int64_t valid_from_us = kOpenLow;
	int64_t valid_to_us = kOpenHigh;
};

// One row of every edge-restatement (all rows of a pair with the same seq) replaces
// the pair's earlier state. Rows may arrive in any order; they are sorted by seq.
// The hybrid graph arm's ranking (graph_rank.hpp), carried by a recall request.
struct RankRequest {
	bool enabled = false;
	double named = 1.0;     // mass of a named entity at hop 0 (0.5 ** hop further out)
	double expand = 1.0;    // mass a trusted hit at position r gives its entities: expand / r
	double hub_share = 0.05;
	int64_t hub_floor = 20; // a hub: deg > max(hub_floor, hub_share * visible memories)
	bool named_ungated = false;   // the caller named the seeds: hubs among them keep their mass
	std::vector<int64_t> trusted; // best first; position i trusts 1 / (i + 1)
	// Contributions computed outside the graph (episode neighbours): memory, source, amount.
	std::vector<int64_t> extra_ids;
	std::vector<int64_t> extra_src;
	std::vector<double> extra_c;
	// The three-arm fusion: the first stage (text+vector fusion, best first, its scores),
	// s1 + wg / (60 + graph rank), the first `protect` positions of the first stage kept.
	std::vector<int64_t> first_ids;
	std::vector<double> first_scores;
	double wg = 1.0;
	int64_t protect = 3;
	int64_t k = std::numeric_limits<int64_t>::max(); // the fused list's length (the codec always sets it)
};

struct RecallRequest {
	std::vector<std::string> seed_keys;
	int hops = 2;
	int64_t limit = 50;
	bool filter_kinds = false;
	std::vector<std::string> kinds;
	int64_t valid_at_us = 0;
	RankRequest rank;
};

struct RecallHit {
	int64_t memory_id;
	int32_t hop;    // kHopNotGraph: a fused hit the graph arm did not find
	double score = std::numeric_limits<double>::quiet_NaN(); // NaN: 1 / (1 + hop)
};
constexpr int32_t kHopNotGraph = -10;
// After Rank's fused hits: a named seed gated as a hub (memory_id: its index in
// request.seed_keys, score: its share of the visible memories), so the caller can say so.
constexpr int32_t kHopGatedSeed = -11;

// The journal folded over a base for one valid_at instant: new vertices, restated
// pairs, extra ABOUT lists, tombstones. Immutable once built, so a process-wide cache
// (graph_cache.hpp, JournalCache) can reuse it across calls and threads. A fold is right
// for every instant in [lo, hi): no journal interval starts or ends inside that range,
// so every row's visibility test answers the same there. The rows come in segments
// whose concatenation is sorted by seq (SortBySeq): a journal that grew by appends is
// its cached segments plus one new one, nothing copied. The fold reads the rows (kinds
// by pointer), so it shares their ownership. It keeps a raw pointer to `base`: the
// caller holds the base alive while using it.
using JournalSegment = std::shared_ptr<const std::vector<JournalRow>>;

class JournalFold {
public:
	JournalFold(const Generation *base, std::vector<JournalSegment> segments, int64_t valid_at);
	~JournalFold();
	JournalFold(const JournalFold &) = delete;
	JournalFold &operator=(const JournalFold &) = delete;

	bool Covers(int64_t valid_at) const {
		return lo_ <= valid_at && valid_at < hi_;
	}
	const Generation *Base() const {
		return base_;
	}
	const std::vector<JournalSegment> &Segments() const {
		return segments_;
	}
	size_t ByteSize() const; // approximate: rows and overlay structures

	class Overlay; // graph_recall.cpp
	const Overlay &overlay() const {
		return *overlay_;
	}

private:
	const Generation *base_;
	std::vector<JournalSegment> segments_;
	std::unique_ptr<Overlay> overlay_;
	int64_t lo_;
	int64_t hi_;
};

// Stable sort by seq (rows of one seq keep their order; the fold does not depend on it).
void SortBySeq(std::vector<JournalRow> &rows);

// `base` may be null only when the journal holds no base marker (an empty graph).
// Throws std::invalid_argument for bad requests (hops out of 0..kMaxHops, limit < 1,
// a valid_at before the base was built: the base cannot answer that view, or outside
// the fold's range).
std::vector<RecallHit> Recall(const JournalFold &fold, const RecallRequest &request);
// The same, folding `journal` (any order) first.
std::vector<RecallHit> Recall(const Generation *base, std::vector<JournalRow> journal, const RecallRequest &request);

} // namespace graph
} // namespace anatid
