#include "graph_recall.hpp"

#include <algorithm>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace anatid {
namespace graph {

namespace {

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

bool Contains(int64_t from, int64_t to, int64_t at) {
	return from <= at && at < to;
}

} // namespace

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
	std::unordered_set<int64_t> gone_;
};

namespace {

// A cursor over one vertex's memories (base list, then journal list), ids descending.
struct Cursor {
	int64_t current;
	uint32_t vertex;
	uint32_t base_pos;
	uint32_t base_end;
	uint32_t extra_pos;
};

} // namespace

JournalFold::JournalFold(const Generation *base, std::vector<JournalSegment> segments, int64_t valid_at)
    : base_(base), segments_(std::move(segments)) {
	overlay_ = std::make_unique<Overlay>(base, segments_, valid_at, lo_, hi_);
}

JournalFold::~JournalFold() = default;

size_t JournalFold::ByteSize() const {
	size_t bytes = sizeof(*this) + sizeof(Overlay);
	for (const JournalSegment &segment : segments_) {
		bytes += segment->capacity() * sizeof(JournalRow);
		for (const JournalRow &r : *segment) { // keys past the small-string buffer
			bytes += (r.a_key.size() > 15 ? r.a_key.size() : 0) + (r.b_key.size() > 15 ? r.b_key.size() : 0);
		}
	}
	return bytes + overlay_->ByteSize();
}

void SortBySeq(std::vector<JournalRow> &rows) {
	auto by_seq = [](const JournalRow &x, const JournalRow &y) { return x.seq < y.seq; };
	if (std::is_sorted(rows.begin(), rows.end(), by_seq)) { // a single-threaded scan keeps seq order
		return;
	}
	// sort (seq, position) pairs, then move each row once: rows hold three strings
	std::vector<std::pair<int64_t, size_t>> order(rows.size());
	for (size_t i = 0; i < rows.size(); i++) {
		order[i] = {rows[i].seq, i};
	}
	std::sort(order.begin(), order.end());
	std::vector<JournalRow> sorted;
	sorted.reserve(rows.size());
	for (const auto &o : order) {
		sorted.push_back(std::move(rows[o.second]));
	}
	rows = std::move(sorted);
}

std::vector<RecallHit> Recall(const Generation *base, std::vector<JournalRow> journal, const RecallRequest &request) {
	SortBySeq(journal);
	std::vector<JournalSegment> segments {std::make_shared<const std::vector<JournalRow>>(std::move(journal))};
	return Recall(JournalFold(base, std::move(segments), request.valid_at_us), request);
}

std::vector<RecallHit> Recall(const JournalFold &fold, const RecallRequest &request) {
	const Generation *base = fold.Base();
	if (request.hops < 0 || request.hops > kMaxHops) {
		throw std::invalid_argument("hops must be between 0 and " + std::to_string(kMaxHops) + ", got " +
		                            std::to_string(request.hops));
	}
	if (request.limit < 1) {
		throw std::invalid_argument("max_hits must be at least 1, got " + std::to_string(request.limit));
	}
	if (base && request.valid_at_us < base->header.built_at_us) {
		throw std::invalid_argument("valid_at is before the graph generation was built; a past view is a "
		                            "historical query: use the SQL oracle (anatid's Python API does)");
	}
	if (!fold.Covers(request.valid_at_us)) {
		throw std::invalid_argument("graph recall: the journal was folded for another valid_at range");
	}
	const JournalFold::Overlay &overlay = fold.overlay();

	// Kinds allowed, for base memories (by code) and journal memories (by string).
	std::vector<bool> base_kind_ok;
	std::unordered_set<std::string> kind_set(request.kinds.begin(), request.kinds.end());
	if (request.filter_kinds && base) {
		base_kind_ok.resize(base->kinds.size());
		for (size_t k = 0; k < base->kinds.size(); k++) {
			base_kind_ok[k] = kind_set.count(base->kinds[k]) != 0;
		}
	}

	// Breadth-first levels.
	const uint32_t vertex_count = overlay.VertexCount();
	std::vector<int8_t> dist(vertex_count, -1);
	std::vector<std::vector<uint32_t>> levels(size_t(request.hops) + 1);
	for (const std::string &key : request.seed_keys) {
		const int64_t v = overlay.FindKey(key);
		if (v >= 0 && dist[size_t(v)] < 0) {
			dist[size_t(v)] = 0;
			levels[0].push_back(uint32_t(v));
		}
	}
	for (int h = 0; h < request.hops; h++) {
		for (uint32_t v : levels[size_t(h)]) {
			overlay.ForEachNeighbour(v, [&](uint32_t u) {
				if (dist[u] < 0) {
					dist[u] = int8_t(h + 1);
					levels[size_t(h) + 1].push_back(u);
				}
			});
		}
	}

	// Per level, a k-way merge of the reached vertices' memory lists, ids descending.
	std::vector<RecallHit> hits;
	std::unordered_set<int64_t> emitted;
	auto later = [](const Cursor &x, const Cursor &y) { return x.current < y.current; };
	for (int h = 0; h <= request.hops && int64_t(hits.size()) < request.limit; h++) {
		std::priority_queue<Cursor, std::vector<Cursor>, decltype(later)> heap(later);
		auto advance = [&](Cursor c) {
			// c.base_pos / c.extra_pos point at the next unread entry; push it if any
			const std::vector<ExtraMemory> *extra = overlay.ExtraAbout(c.vertex);
			const bool has_base = c.base_pos < c.base_end;
			const bool has_extra = extra && c.extra_pos < extra->size();
			if (!has_base && !has_extra) {
				return;
			}
			const int64_t b = has_base ? base->memory_ids[base->about[c.base_pos]] : INT64_MIN;
			const int64_t e = has_extra ? (*extra)[c.extra_pos].memory_id : INT64_MIN;
			c.current = std::max(b, e);
			heap.push(c);
		};
		for (uint32_t v : levels[size_t(h)]) {
			Cursor c {0, v, 0, 0, 0};
			if (base && v < base->VertexCount()) {
				c.base_pos = base->about_offsets[v];
				c.base_end = base->about_offsets[v + 1];
			}
			advance(c);
		}
		int64_t last = INT64_MIN;
		bool have_last = false;
		while (!heap.empty() && int64_t(hits.size()) < request.limit) {
			Cursor c = heap.top();
			heap.pop();
			const std::vector<ExtraMemory> *extra = overlay.ExtraAbout(c.vertex);
			// take the entry that produced c.current, remembering its kind
			bool kind_ok;
			const int64_t id = c.current;
			if (c.base_pos < c.base_end && base->memory_ids[base->about[c.base_pos]] == id) {
				kind_ok = !request.filter_kinds || base_kind_ok[base->memory_kind[base->about[c.base_pos]]];
				c.base_pos++;
			} else {
				kind_ok = !request.filter_kinds || kind_set.count(*(*extra)[c.extra_pos].kind) != 0;
				c.extra_pos++;
			}
			advance(c);
			if (have_last && id == last) {
				continue; // the same memory ABOUT two entities of this level
			}
			last = id;
			have_last = true;
			if (!kind_ok || overlay.Gone(id) || emitted.count(id)) {
				continue;
			}
			emitted.insert(id);
			hits.push_back(RecallHit {id, int32_t(h)});
		}
	}
	return hits;
}

} // namespace graph
} // namespace anatid
