#include "rrf.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace anatid {

namespace {

void CheckFinite(double value, const char *name) {
	if (!std::isfinite(value)) {
		throw std::invalid_argument(std::string("rrf: ") + name + " must be finite");
	}
}

// Adds one arm's contributions. Arms are applied vector, then text, then graph, so
// each id's score is accumulated in exactly the documented order.
void AddArm(const std::vector<int64_t> &ids, double weight, double k, RrfArm arm,
            std::unordered_map<int64_t, size_t> &slot_of, std::vector<FusedHit> &hits) {
	for (size_t i = 0; i < ids.size(); i++) {
		const int64_t id = ids[i];
		auto inserted = slot_of.emplace(id, hits.size());
		if (inserted.second) {
			hits.push_back(FusedHit {id, 0.0, 0});
		}
		FusedHit &hit = hits[inserted.first->second];
		if (hit.arms & arm) {
			continue; // duplicate within this arm: the first (best) rank already counted
		}
		const double rank = static_cast<double>(i + 1);
		hit.score += weight / (k + rank);
		hit.arms = static_cast<uint8_t>(hit.arms | arm);
	}
}

} // namespace

std::vector<FusedHit> FuseRrf(const std::vector<int64_t> &vector_ids, const std::vector<int64_t> &text_ids,
                              const std::vector<int64_t> &graph_ids, const RrfWeights &weights, double k) {
	CheckFinite(k, "k");
	CheckFinite(weights.vector, "vector weight");
	CheckFinite(weights.text, "text weight");
	CheckFinite(weights.graph, "graph weight");
	if (k < 0) {
		throw std::invalid_argument("rrf: k must be >= 0");
	}

	std::unordered_map<int64_t, size_t> slot_of;
	slot_of.reserve(vector_ids.size() + text_ids.size() + graph_ids.size());
	std::vector<FusedHit> hits;
	hits.reserve(vector_ids.size() + text_ids.size() + graph_ids.size());

	AddArm(vector_ids, weights.vector, k, kArmVector, slot_of, hits);
	AddArm(text_ids, weights.text, k, kArmText, slot_of, hits);
	AddArm(graph_ids, weights.graph, k, kArmGraph, slot_of, hits);

	std::sort(hits.begin(), hits.end(), [](const FusedHit &a, const FusedHit &b) {
		if (a.score != b.score) {
			return a.score > b.score;
		}
		return a.id < b.id;
	});
	return hits;
}

} // namespace anatid
