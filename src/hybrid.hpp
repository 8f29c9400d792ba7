// Hybrid recall: the text, vector and graph arms fused by reciprocal rank fusion,
// plus the process-wide cache of parsed base generations (DuckDB-free core).
//
// Why a cache: a base generation is an immutable BLOB in the user's file; parsing
// 100k documents costs tens of milliseconds, reading the BLOB several. The binding
// asks HasGeneration() first and the SQL macro reads the BLOB only on a miss. Keys
// are (generation id, nonce): ids come from the file's allocator and two files could
// share one, the random nonce written with each generation makes the key unique.
#pragma once

#include "bm25.hpp"
#include "rrf.hpp"
#include "vector.hpp"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace anatid {

enum class GenerationKind { kText, kVector };

struct GenerationKey {
	int64_t id;
	int64_t nonce;
};

bool HasGeneration(GenerationKind kind, GenerationKey key);
// The cached generation, parsing `parts` on a miss. Throws when absent and parts are empty.
std::shared_ptr<const TextGeneration> TextGenerationFor(GenerationKey key, const std::vector<std::string_view> &parts,
                                                       bool have_parts);
std::shared_ptr<const VectorGeneration> VectorGenerationFor(GenerationKey key,
                                                           const std::vector<std::string_view> &parts,
                                                           bool have_parts);
// Drops every cached generation (tests).
void ClearGenerationCache();
// How many generations the cache holds per kind before evicting the least recently used.
constexpr size_t kGenerationCacheSlots = 64;

struct HybridRequest {
	bool use_text = false, use_vector = false, use_graph = false;
	Bm25Input text;
	bool text_has_base = false;    // false: the journal is the whole index (an exact scan)
	int64_t text_ceiling = 100000; // SCAN_CEILING: refuse an exact text scan above this many documents
	CosineInput vector;
	int64_t vector_ceiling = 100000; // BRUTE_FORCE_CEILING
	std::vector<int64_t> graph_ids;  // best first (hop asc, id desc), already cut to depth
	std::vector<int32_t> graph_hops;
	RrfWeights weights;
	size_t k = 10;
};

struct HybridHit {
	int64_t id;
	double score;
	int64_t rank_vector, rank_text, rank_graph; // 1-based, 0 when the arm did not find it
	int32_t hop;                                // -1 when the graph arm did not find it
};

// Throws std::runtime_error with the reason when a ceiling refuses an arm.
std::vector<HybridHit> HybridRecall(const HybridRequest &request);

} // namespace anatid
