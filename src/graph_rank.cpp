#include "graph_rank.hpp"

#include "graph_overlay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace anatid {
namespace graph {

namespace {

struct Contribution {
	int kind;       // 0 named entity, 1 trusted-hit entity, 2 extra
	int64_t source; // entity id, or the extra's source id
	double amount;
	int32_t hop;
};

struct Scored {
	int64_t id;
	double score;
	int32_t hop;
};

// Reads one tenant's merged view: visible memories per vertex, kinds, the inverse.
class View {
public:
	View(const JournalFold &fold, const RecallRequest &request)
	    : base_(fold.Base()), overlay_(fold.overlay()), request_(request) {
		kinds_.insert(request.kinds.begin(), request.kinds.end());
		if (base_) {
			base_kind_ok_.resize(base_->kinds.size(), true);
			for (size_t k = 0; request.filter_kinds && k < base_->kinds.size(); k++) {
				base_kind_ok_[k] = kinds_.count(base_->kinds[k]) != 0;
			}
		}
	}

	// Visible memories filed under some vertex.
	int64_t VisibleMemories() const {
		int64_t n = 0;
		if (base_) {
			for (int64_t id : base_->memory_ids) {
				n += overlay_.Gone(id) ? 0 : 1;
			}
		}
		overlay_.ForEachExtraMemory([&](int64_t id) {
			if (!overlay_.Gone(id) && (!base_ || base_->MemoryIndex(id) < 0)) {
				n++;
			}
		});
		return n;
	}

	// v's visible memories, ids descending, each once, with whether its kind is allowed.
	void MemoriesOf(uint32_t v, std::vector<std::pair<int64_t, bool>> &out) const {
		out.clear();
		const std::vector<ExtraMemory> *extra = overlay_.ExtraAbout(v);
		uint32_t b = 0, b_end = 0;
		if (base_ && v < base_->VertexCount()) {
			b = base_->about_offsets[v];
			b_end = base_->about_offsets[v + 1];
		}
		size_t e = 0;
		const size_t e_end = extra ? extra->size() : 0;
		while (b < b_end || e < e_end) {
			const int64_t bid = b < b_end ? base_->memory_ids[base_->about[b]] : INT64_MIN;
			const int64_t eid = e < e_end ? (*extra)[e].memory_id : INT64_MIN;
			int64_t id;
			bool ok;
			if (bid >= eid) {
				id = bid;
				ok = base_kind_ok_.empty() || base_kind_ok_[base_->memory_kind[base_->about[b]]];
				b++;
				if (eid == bid) {
					e++;
				}
			} else {
				id = eid;
				ok = !request_.filter_kinds || kinds_.count(*(*extra)[e].kind) != 0;
				e++;
			}
			if (!out.empty() && out.back().first == id) {
				continue;
			}
			if (!overlay_.Gone(id)) {
				out.emplace_back(id, ok);
			}
		}
	}

	// The vertices memory `id` is ABOUT, ascending, each once.
	std::vector<uint32_t> EntitiesOf(int64_t id) const {
		std::vector<uint32_t> out;
		if (base_) {
			const int64_t i = base_->MemoryIndex(id);
			if (i >= 0) {
				out.assign(base_->memory_about.begin() + base_->memory_about_offsets[size_t(i)],
				           base_->memory_about.begin() + base_->memory_about_offsets[size_t(i) + 1]);
			}
		}
		if (const std::vector<uint32_t> *extra = overlay_.ExtraEntitiesOf(id)) {
			out.insert(out.end(), extra->begin(), extra->end());
		}
		std::sort(out.begin(), out.end());
		out.erase(std::unique(out.begin(), out.end()), out.end());
		return out;
	}

private:
	const Generation *base_;
	const JournalFold::Overlay &overlay_;
	const RecallRequest &request_;
	std::unordered_set<std::string> kinds_;
	std::vector<bool> base_kind_ok_;
};

} // namespace

std::vector<RecallHit> Rank(const JournalFold &fold, const RecallRequest &request) {
	const RankRequest &rank = request.rank;
	if (!rank.enabled) {
		throw std::invalid_argument("graph rank: the request carries no ranking block");
	}
	if (request.hops < 0 || request.hops > kMaxHops) {
		throw std::invalid_argument("hops must be between 0 and " + std::to_string(kMaxHops));
	}
	if (request.limit < 1) {
		throw std::invalid_argument("max_hits must be at least 1, got " + std::to_string(request.limit));
	}
	const Generation *base = fold.Base();
	if (base && request.valid_at_us < base->header.built_at_us) {
		throw std::invalid_argument("valid_at is before the graph generation was built; a past view is a "
		                            "historical query: use the SQL oracle (anatid's Python API does)");
	}
	if (!fold.Covers(request.valid_at_us)) {
		throw std::invalid_argument("graph rank: the journal was folded for another valid_at range");
	}
	const JournalFold::Overlay &overlay = fold.overlay();
	const View view(fold, request);
	const double n = double(view.VisibleMemories());

	// Entity mass: (vertex, kind, hop, mass), named entities first by BFS.
	struct Mass {
		uint32_t v;
		int kind;
		int32_t hop;
		double m;
	};
	std::vector<Mass> masses;
	std::vector<int8_t> dist(overlay.VertexCount(), -1);
	std::vector<uint32_t> frontier;
	std::unordered_map<uint32_t, size_t> seed_index; // a named seed's vertex -> its first key
	for (size_t i = 0; i < request.seed_keys.size(); i++) {
		const int64_t v = overlay.FindKey(request.seed_keys[i]);
		if (v >= 0 && dist[size_t(v)] < 0) {
			dist[size_t(v)] = 0;
			frontier.push_back(uint32_t(v));
			seed_index.emplace(uint32_t(v), i);
		}
	}
	std::vector<std::pair<size_t, double>> gated_seeds; // (key index, share of N)
	for (int h = 0; !frontier.empty(); h++) {
		std::vector<uint32_t> next;
		for (uint32_t v : frontier) {
			masses.push_back(Mass {v, 0, h, rank.named * std::pow(0.5, double(h))});
			if (h < request.hops) {
				overlay.ForEachNeighbour(v, [&](uint32_t u) {
					if (dist[u] < 0) {
						dist[u] = int8_t(h + 1);
						next.push_back(u);
					}
				});
			}
		}
		frontier = std::move(next);
	}
	// Trusted hits: each entity's sum of 1 / r, added in memory_id order.
	std::vector<std::pair<int64_t, double>> trusted; // (memory_id, 1 / r)
	for (size_t i = 0; i < rank.trusted.size(); i++) {
		trusted.emplace_back(rank.trusted[i], 1.0 / double(i + 1));
	}
	std::sort(trusted.begin(), trusted.end());
	std::unordered_map<uint32_t, double> trust_of;
	std::vector<uint32_t> trust_order;
	for (const auto &t : trusted) {
		for (uint32_t v : view.EntitiesOf(t.first)) {
			auto it = trust_of.find(v);
			if (it == trust_of.end()) {
				trust_of.emplace(v, 0.0 + t.second);
				trust_order.push_back(v);
			} else {
				it->second += t.second;
			}
		}
	}
	for (uint32_t v : trust_order) {
		masses.push_back(Mass {v, 1, 1, rank.expand * trust_of[v]});
	}

	// Each gated entity passes mass * ln(1 + N / deg) to its newest visible memories.
	std::unordered_map<int64_t, std::vector<Contribution>> got;
	std::unordered_map<int64_t, bool> kind_ok;
	std::vector<std::pair<int64_t, bool>> memories;
	std::unordered_map<uint32_t, std::vector<std::pair<int64_t, bool>>> memo;
	for (const Mass &ms : masses) {
		auto found = memo.find(ms.v);
		if (found == memo.end()) {
			view.MemoriesOf(ms.v, memories);
			found = memo.emplace(ms.v, memories).first;
		}
		const auto &list = found->second;
		const double deg = double(list.size());
		if (deg == 0) {
			continue;
		}
		const bool hub = deg > std::max(double(rank.hub_floor), rank.hub_share * n);
		if (hub && !(ms.kind == 0 && rank.named_ungated)) {
			if (ms.kind == 0 && ms.hop == 0) {
				gated_seeds.emplace_back(seed_index.at(ms.v), deg / n);
			}
			continue;
		}
		const double per = ms.m * std::log(1 + n / deg);
		const int64_t entity = overlay.EntityOf(ms.v);
		const size_t take = std::min(list.size(), size_t(request.limit));
		for (size_t i = 0; i < take; i++) {
			got[list[i].first].push_back(Contribution {ms.kind, entity, per, ms.hop});
			kind_ok.emplace(list[i].first, list[i].second);
		}
	}
	for (size_t i = 0; i < rank.extra_ids.size(); i++) {
		got[rank.extra_ids[i]].push_back(Contribution {2, rank.extra_src[i], rank.extra_c[i], 1});
		kind_ok.emplace(rank.extra_ids[i], true); // the caller filtered extras by kind
	}

	std::vector<Scored> scored;
	for (auto &entry : got) {
		if (!kind_ok[entry.first]) {
			continue;
		}
		auto &cs = entry.second;
		std::sort(cs.begin(), cs.end(), [](const Contribution &x, const Contribution &y) {
			return x.kind != y.kind ? x.kind < y.kind : x.source < y.source;
		});
		double s = 0.0;
		int32_t hop = INT32_MAX;
		for (const Contribution &c : cs) {
			s += c.amount;
			hop = std::min(hop, c.hop);
		}
		if (s > 0) {
			scored.push_back(Scored {entry.first, s, hop});
		}
	}
	std::sort(scored.begin(), scored.end(), [](const Scored &x, const Scored &y) {
		if (x.score != y.score) {
			return x.score > y.score;
		}
		return x.hop != y.hop ? x.hop < y.hop : x.id > y.id;
	});
	std::vector<RecallHit> arm;
	for (size_t i = 0; i < scored.size() && int64_t(i) < request.limit; i++) {
		arm.push_back(RecallHit {scored[i].id, scored[i].hop});
	}
	std::vector<RecallHit> out = Fuse(rank, arm);
	std::sort(gated_seeds.begin(), gated_seeds.end());
	for (const auto &g : gated_seeds) {
		out.push_back(RecallHit {int64_t(g.first), kHopGatedSeed, g.second});
	}
	return out;
}

std::vector<RecallHit> Fuse(const RankRequest &rank, const std::vector<RecallHit> &arm) {
	struct Placed {
		int64_t id;
		int64_t tier;
		double score;
		int32_t hop;
	};
	std::unordered_map<int64_t, size_t> at;
	std::vector<Placed> all;
	for (size_t i = 0; i < rank.first_ids.size(); i++) {
		const int64_t r1 = int64_t(i) + 1;
		at.emplace(rank.first_ids[i], all.size());
		all.push_back(Placed {rank.first_ids[i], r1 <= rank.protect ? r1 : rank.protect + 1, rank.first_scores[i],
		                      kHopNotGraph});
	}
	for (size_t i = 0; i < arm.size(); i++) {
		const double g = rank.wg / (60.0 + double(i + 1));
		auto it = at.find(arm[i].memory_id);
		if (it == at.end()) {
			all.push_back(Placed {arm[i].memory_id, rank.protect + 1, 0.0 + g, arm[i].hop});
		} else {
			all[it->second].score += g;
			all[it->second].hop = arm[i].hop;
		}
	}
	std::sort(all.begin(), all.end(), [](const Placed &x, const Placed &y) {
		if (x.tier != y.tier) {
			return x.tier < y.tier;
		}
		return x.score != y.score ? x.score > y.score : x.id < y.id;
	});
	std::vector<RecallHit> out;
	for (size_t i = 0; i < all.size() && int64_t(i) < rank.k; i++) {
		out.push_back(RecallHit {all[i].id, all[i].hop, all[i].score});
	}
	return out;
}

} // namespace graph
} // namespace anatid
