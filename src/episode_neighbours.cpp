#include "episode_neighbours.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace anatid {

std::vector<std::pair<int64_t, int64_t>> EpisodeNeighbours(const std::vector<EvidenceRow> &evidence,
                                                           const std::vector<int64_t> &sources,
                                                           const std::function<bool(int64_t)> &visible) {
	const std::unordered_set<int64_t> wanted(sources.begin(), sources.end());
	// the episodes of each source (distinct), and the visible members of those episodes
	std::map<int64_t, std::set<int64_t>> episodes_of; // source -> episodes
	for (const EvidenceRow &r : evidence) {
		if (wanted.count(r.memory_id)) {
			episodes_of[r.memory_id].insert(r.episode_id);
		}
	}
	std::unordered_map<int64_t, std::set<int64_t>> members; // episode -> visible members
	for (const auto &kv : episodes_of) {
		for (int64_t e : kv.second) {
			members.emplace(e, std::set<int64_t> {});
		}
	}
	std::unordered_map<int64_t, bool> seen;
	for (const EvidenceRow &r : evidence) {
		auto m = members.find(r.episode_id);
		if (m == members.end()) {
			continue;
		}
		auto v = seen.find(r.memory_id);
		if (v == seen.end()) {
			v = seen.emplace(r.memory_id, visible(r.memory_id)).first;
		}
		if (v->second) {
			m->second.insert(r.memory_id);
		}
	}
	std::vector<std::pair<int64_t, int64_t>> out; // (source, neighbour) until the final swap
	for (const auto &kv : episodes_of) {
		const int64_t t = kv.first;
		for (int64_t e : kv.second) {
			const std::set<int64_t> &in = members[e];
			auto self = in.find(t);
			if (self == in.end()) {
				continue; // t is not a visible member: the SQL's HAVING drops the group
			}
			if (self != in.begin()) {
				out.emplace_back(t, *std::prev(self));
			}
			if (std::next(self) != in.end()) {
				out.emplace_back(t, *std::next(self));
			}
		}
	}
	std::sort(out.begin(), out.end());
	for (auto &p : out) {
		std::swap(p.first, p.second);
	}
	return out;
}

} // namespace anatid
