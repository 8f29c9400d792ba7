// The journal folded over a base generation for one valid_at instant (JournalFold's
// overlay): shared by graph recall (graph_recall.cpp) and the hybrid graph arm's
// ranking (graph_rank.cpp), which both read the same merged view.
#pragma once

#include "graph_recall.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace anatid {
namespace graph {

namespace overlay_detail {

struct PairHash {
	size_t operator()(const std::pair<int64_t, int64_t> &p) const {
		return std::hash<int64_t>()(p.first * 0x9E3779B97F4A7C15ULL ^ uint64_t(p.second));
	}
};

struct PairState {
	int64_t seq;
	bool connected;
};

struct ExtraMemory {
	int64_t memory_id;
	const std::string *kind;
};

inline bool Contains(int64_t from, int64_t to, int64_t at) {
	return from <= at && at < to;
}

} // namespace overlay_detail

using overlay_detail::Contains;
using overlay_detail::ExtraMemory;
using overlay_detail::PairHash;
using overlay_detail::PairState;

// The journal folded over the base, for one valid_at instant.
class JournalFold::Overlay {
public:
	// rows sorted by seq; lo/hi get the range of instants this fold is right for
	Overlay(const Generation *base, const std::vector<JournalSegment> &segments, int64_t valid_at, int64_t &lo,
	        int64_t &hi)
	    : base_(base) {
		lo = kOpenLow;
		hi = kOpenHigh;
		// Contains(from, to, at) changes only where at crosses `from` or `to`
		auto bound = [&](int64_t edge) {
			if (edge <= valid_at) {
				lo = std::max(lo, edge);
			} else {
				hi = std::min(hi, edge);
			}
		};
		base_vertices_ = base ? base->VertexCount() : 0;
		for (const JournalSegment &segment : segments) {
			for (const JournalRow &row : *segment) {
				Apply(row, valid_at, bound);
			}
		}
		Finish();
	}

private:
	template <class Bound>
	void Apply(const JournalRow &row, int64_t valid_at, Bound &bound) {
		if (row.op == kOpEdgeInterval || row.op == kOpAbout) {
			bound(row.valid_from_us);
			bound(row.valid_to_us);
		}
		switch (row.op) {
		case kOpEdgeInterval:
		case kOpEdgeClosed: {
			const uint32_t a = Vertex(row.a, row.a_key);
			const uint32_t b = Vertex(row.b, row.b_key);
			auto key = std::make_pair(std::min(row.a, row.b), std::max(row.a, row.b));
			auto it = pairs_.find(key);
			if (it == pairs_.end()) {
				it = pairs_.emplace(key, PairState {row.seq, false}).first;
			} else if (it->second.seq != row.seq) {
				it->second = PairState {row.seq, false}; // a newer restatement replaces the pair
			}
			if (row.op == kOpEdgeInterval && Contains(row.valid_from_us, row.valid_to_us, valid_at)) {
				it->second.connected = true;
			}
			Touch(a);
			Touch(b);
			break;
		}
		case kOpAbout:
			if (Contains(row.valid_from_us, row.valid_to_us, valid_at)) {
				const uint32_t v = Vertex(row.b, row.b_key);
				extra_about_[v].push_back(ExtraMemory {row.a, &row.kind});
			}
			break;
		case kOpMemoryClosed:
		case kOpMemoryErased:
			gone_.insert(row.a);
			break;
		case kOpBase:
			break;
		default:
			throw std::invalid_argument("unknown graph journal op " + std::to_string(int(row.op)));
		}
	}

	void Finish() {
		for (const auto &entry : pairs_) {
			if (!entry.second.connected) {
				continue;
			}
			const uint32_t a = VertexOfEntity(entry.first.first);
			const uint32_t b = VertexOfEntity(entry.first.second);
			extra_adj_[a].push_back(b);
			extra_adj_[b].push_back(a);
		}
		for (auto &entry : extra_about_) {
			std::sort(entry.second.begin(), entry.second.end(),
			          [](const ExtraMemory &x, const ExtraMemory &y) { return x.memory_id > y.memory_id; });
			for (const ExtraMemory &m : entry.second) {
				extra_entities_of_[m.memory_id].push_back(entry.first);
			}
		}
	}

public:
	uint32_t VertexCount() const {
		return base_vertices_ + uint32_t(new_entities_.size());
	}

	// -1 when the key names no entity in the base or the journal.
	int64_t FindKey(const std::string &key) const {
		if (base_) {
			auto it = base_->key_to_vertex.find(std::string_view(key));
			if (it != base_->key_to_vertex.end()) {
				return it->second;
			}
		}
		auto it = new_keys_.find(key);
		return it == new_keys_.end() ? -1 : int64_t(it->second);
	}

	// Calls fn(key) for every name key the journal brought (entities new since the base).
	template <class Fn>
	void ForEachNewKey(Fn &&fn) const {
		for (const auto &entry : new_keys_) {
			fn(entry.first);
		}
	}

	int64_t EntityOf(uint32_t v) const {
		return v < base_vertices_ ? base_->vertex_entity[v] : new_entities_[v - base_vertices_];
	}

	// Calls fn(u) for every neighbour of v visible in this view (duplicates possible).
	template <class Fn>
	void ForEachNeighbour(uint32_t v, Fn &&fn) const {
		if (v < base_vertices_) {
			const bool check = !pairs_.empty() && touched_.size() > v && touched_[v];
			for (uint32_t i = base_->adj_offsets[v]; i < base_->adj_offsets[v + 1]; i++) {
				const uint32_t u = base_->adj[i];
				if (check && touched_.size() > u && touched_[u]) {
					const int64_t x = base_->vertex_entity[v];
					const int64_t y = base_->vertex_entity[u];
					auto it = pairs_.find(std::make_pair(std::min(x, y), std::max(x, y)));
					if (it != pairs_.end()) {
						continue; // the journal restated this pair; extra_adj_ has it if connected
					}
				}
				fn(u);
			}
		}
		auto extra = extra_adj_.find(v);
		if (extra != extra_adj_.end()) {
			for (uint32_t u : extra->second) {
				fn(u);
			}
		}
	}

	const std::vector<ExtraMemory> *ExtraAbout(uint32_t v) const {
		auto it = extra_about_.find(v);
		return it == extra_about_.end() ? nullptr : &it->second;
	}

	// The journal's vertices that `memory_id` is ABOUT (in this view), or null.
	const std::vector<uint32_t> *ExtraEntitiesOf(int64_t memory_id) const {
		auto it = extra_entities_of_.find(memory_id);
		return it == extra_entities_of_.end() ? nullptr : &it->second;
	}
	// Every memory the journal files under some vertex in this view (ids, any order).
	template <class Fn>
	void ForEachExtraMemory(Fn &&fn) const {
		for (const auto &entry : extra_entities_of_) {
			fn(entry.first);
		}
	}

	bool Gone(int64_t memory_id) const {
		return !gone_.empty() && gone_.count(memory_id) != 0;
	}

	// Approximate: hash nodes as 48 bytes, vectors by capacity.
	size_t ByteSize() const {
		size_t bytes = new_entities_.capacity() * 8 + touched_.capacity() / 8;
		bytes += (new_vertex_.size() + new_keys_.size() + pairs_.size() + gone_.size()) * 48;
		for (const auto &e : new_keys_) {
			bytes += e.first.size() > 15 ? e.first.size() : 0;
		}
		for (const auto &e : extra_adj_) {
			bytes += 48 + e.second.capacity() * sizeof(uint32_t);
		}
		for (const auto &e : extra_about_) {
			bytes += 48 + e.second.capacity() * sizeof(ExtraMemory);
		}
		return bytes;
	}

private:
	uint32_t Vertex(int64_t entity, const std::string &key) {
		if (base_) {
			auto it = base_->entity_to_vertex.find(entity);
			if (it != base_->entity_to_vertex.end()) {
				return it->second;
			}
		}
		auto it = new_vertex_.find(entity);
		if (it != new_vertex_.end()) {
			if (!key.empty()) { // first seen on a row without its key: a seed can still find it
				new_keys_.emplace(key, it->second);
			}
			return it->second;
		}
		const uint32_t v = base_vertices_ + uint32_t(new_entities_.size());
		new_entities_.push_back(entity);
		new_vertex_.emplace(entity, v);
		if (!key.empty()) {
			new_keys_.emplace(key, v);
		}
		return v;
	}
	uint32_t VertexOfEntity(int64_t entity) const {
		if (base_) {
			auto it = base_->entity_to_vertex.find(entity);
			if (it != base_->entity_to_vertex.end()) {
				return it->second;
			}
		}
		return new_vertex_.at(entity);
	}
	void Touch(uint32_t v) {
		if (touched_.size() <= v) {
			touched_.resize(size_t(v) + 1, false);
		}
		touched_[v] = true;
	}

	const Generation *base_;
	uint32_t base_vertices_ = 0;
	std::vector<int64_t> new_entities_;
	std::unordered_map<int64_t, uint32_t> new_vertex_;
	std::unordered_map<std::string, uint32_t> new_keys_;
	std::unordered_map<std::pair<int64_t, int64_t>, PairState, PairHash> pairs_;
	std::vector<bool> touched_;
	std::unordered_map<uint32_t, std::vector<uint32_t>> extra_adj_;
	std::unordered_map<uint32_t, std::vector<ExtraMemory>> extra_about_;
	std::unordered_map<int64_t, std::vector<uint32_t>> extra_entities_of_;
	std::unordered_set<int64_t> gone_;
};

} // namespace graph
} // namespace anatid
