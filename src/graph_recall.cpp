#include "graph_recall.hpp"
#include "graph_overlay.hpp"

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
