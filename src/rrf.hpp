// Reciprocal rank fusion (Cormack et al., 2009) over up to three ranked arms.
//
// DuckDB-free core: plain types in, plain types out. The SQL fallback computes the
// same thing, so the exact summation order and tie-breaking are part of the contract:
//   score(id) = w_vector/(k + r_vector) + w_text/(k + r_text) + w_graph/(k + r_graph)
// evaluated left to right in double, an absent arm contributing nothing, and results
// ordered by score descending, then id ascending.
#pragma once

#include <cstdint>
#include <vector>

namespace anatid {

// Which arms found an id; OR-ed together in FusedHit::arms.
enum RrfArm : uint8_t {
	kArmVector = 1u << 0,
	kArmText = 1u << 1,
	kArmGraph = 1u << 2,
};

struct RrfWeights {
	double vector = 1.0;
	double text = 1.0;
	double graph = 1.0;
};

struct FusedHit {
	int64_t id;
	double score;
	uint8_t arms; // bitmask of RrfArm
};

// Each arm lists ids best first; an id's rank is its 1-based position. If an id
// appears more than once in one arm only its first (best) rank counts.
// Throws std::invalid_argument if k is negative or any weight or k is not finite.
std::vector<FusedHit> FuseRrf(const std::vector<int64_t> &vector_ids, const std::vector<int64_t> &text_ids,
                              const std::vector<int64_t> &graph_ids, const RrfWeights &weights = RrfWeights(),
                              double k = 60.0);

} // namespace anatid
