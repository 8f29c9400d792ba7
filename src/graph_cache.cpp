#include "graph_cache.hpp"

#include "graph_codec.hpp"

#include <iterator>
#include <stdexcept>

namespace anatid {
namespace graph {

GenerationCache &GenerationCache::Instance() {
	static GenerationCache *cache = new GenerationCache(); // never destroyed: outlives every database
	return *cache;
}

std::shared_ptr<const Generation> GenerationCache::Get(const CacheKey &key) {
	std::lock_guard<std::mutex> lock(mutex_);
	auto it = index_.find(key);
	if (it == index_.end()) {
		misses_++;
		return nullptr;
	}
	hits_++;
	lru_.splice(lru_.begin(), lru_, it->second);
	return it->second->generation;
}

bool GenerationCache::Contains(const CacheKey &key) {
	std::lock_guard<std::mutex> lock(mutex_);
	return index_.count(key) != 0;
}

void GenerationCache::Put(const CacheKey &key, std::shared_ptr<const Generation> generation) {
	std::lock_guard<std::mutex> lock(mutex_);
	auto it = index_.find(key);
	if (it != index_.end()) {
		resident_ -= it->second->bytes;
		lru_.erase(it->second);
		index_.erase(it);
	}
	const size_t bytes = generation->ByteSize();
	lru_.push_front(Entry {key, std::move(generation), bytes});
	index_.emplace(key, lru_.begin());
	resident_ += bytes;
	loads_++;
	EvictLocked(&key);
}

void GenerationCache::SetBudget(size_t bytes) {
	std::lock_guard<std::mutex> lock(mutex_);
	budget_ = bytes;
	EvictLocked(lru_.empty() ? nullptr : &lru_.front().key);
}

void GenerationCache::Clear() {
	std::lock_guard<std::mutex> lock(mutex_);
	evictions_ += lru_.size();
	lru_.clear();
	index_.clear();
	resident_ = 0;
}

void GenerationCache::EvictLocked(const CacheKey *keep) {
	const CacheKey kept = keep ? *keep : CacheKey {0, 0}; // a copy: *keep may be an entry evicted here
	while (resident_ > budget_ && !lru_.empty()) {
		auto victim = std::prev(lru_.end());
		if (keep && victim->key == kept) {
			if (lru_.size() == 1) {
				break;
			}
			victim = std::prev(victim);
		}
		resident_ -= victim->bytes;
		index_.erase(victim->key);
		lru_.erase(victim);
		evictions_++;
	}
}

CacheStats GenerationCache::Stats() {
	std::lock_guard<std::mutex> lock(mutex_);
	CacheStats s;
	s.budget_bytes = budget_;
	s.resident_bytes = resident_;
	s.entries = lru_.size();
	s.hits = hits_;
	s.misses = misses_;
	s.loads = loads_;
	s.evictions = evictions_;
	for (const Entry &e : lru_) {
		s.resident_ids.push_back(e.key.id);
	}
	return s;
}

// ---- the journal cache -------------------------------------------------------------

void AppendJournalEntry(std::string &encoded, std::string_view entry) {
	const uint32_t n = uint32_t(entry.size());
	const char len[4] = {char(n & 0xFF), char((n >> 8) & 0xFF), char((n >> 16) & 0xFF), char((n >> 24) & 0xFF)};
	encoded.append(len, 4);
	encoded.append(entry.data(), entry.size());
}

namespace {

// Parses the entries of encoded[from, end) onto rows.
void ParseEncoded(const std::string &encoded, size_t from, std::vector<JournalRow> &rows) {
	size_t count = 0; // reserve first: growing a vector of rows moves every row's strings
	for (size_t pos = from; encoded.size() - pos >= 4; count++) {
		const auto *p = reinterpret_cast<const unsigned char *>(encoded.data() + pos);
		pos += 4 + (size_t(p[0]) | size_t(p[1]) << 8 | size_t(p[2]) << 16 | size_t(p[3]) << 24);
		if (pos > encoded.size()) {
			break;
		}
	}
	rows.reserve(rows.size() + count + 1);
	size_t pos = from;
	while (pos < encoded.size()) {
		if (encoded.size() - pos < 4) {
			throw std::invalid_argument("anatid: truncated encoded graph journal");
		}
		const auto *p = reinterpret_cast<const unsigned char *>(encoded.data() + pos);
		const size_t n = size_t(p[0]) | size_t(p[1]) << 8 | size_t(p[2]) << 16 | size_t(p[3]) << 24;
		pos += 4;
		if (encoded.size() - pos < n) {
			throw std::invalid_argument("anatid: truncated encoded graph journal");
		}
		rows.push_back(ParseJournalEntry(std::string_view(encoded.data() + pos, n)));
		pos += n;
	}
}

// The segments of a journal that appended encoded[from, end) to `segments`: one more
// segment when the appended rows sort after the last cached one (a write's seq is the
// next from a sequence), else all rows re-sorted into one. Many segments are merged
// into one (already sorted) so that a long run of writes does not fragment the journal.
constexpr size_t kMaxSegments = 16;

std::vector<JournalSegment> Extend(const std::vector<JournalSegment> &segments, const std::string &encoded,
                                   size_t from) {
	auto tail = std::make_shared<std::vector<JournalRow>>();
	ParseEncoded(encoded, from, *tail);
	SortBySeq(*tail);
	const JournalRow *last = nullptr;
	for (const JournalSegment &s : segments) {
		if (!s->empty()) {
			last = &s->back();
		}
	}
	const bool in_order = tail->empty() || !last || last->seq <= tail->front().seq;
	if (in_order && segments.size() < kMaxSegments) {
		std::vector<JournalSegment> out = segments;
		out.push_back(std::move(tail));
		return out;
	}
	auto all = std::make_shared<std::vector<JournalRow>>();
	for (const JournalSegment &s : segments) {
		all->insert(all->end(), s->begin(), s->end());
	}
	all->insert(all->end(), std::make_move_iterator(tail->begin()), std::make_move_iterator(tail->end()));
	SortBySeq(*all);
	return {std::move(all)};
}

} // namespace

JournalCache &JournalCache::Instance() {
	static JournalCache *cache = new JournalCache(); // never destroyed, like GenerationCache
	return *cache;
}

std::shared_ptr<const JournalFold> JournalCache::Fold(const CacheKey &key,
                                                      const std::shared_ptr<const Generation> &base,
                                                      const std::string &encoded, int64_t valid_at) {
	auto fits = [&](const BasedJournalFold &f) { return f.base.lock() == base && f.fold->Covers(valid_at); };
	auto build = [&](const BasedJournalFold *prior, size_t from) {
		std::vector<JournalSegment> segments;
		if (!prior) {
			auto parsed = std::make_shared<std::vector<JournalRow>>();
			ParseEncoded(encoded, 0, *parsed);
			SortBySeq(*parsed);
			segments.push_back(std::move(parsed));
		} else if (from == encoded.size()) {
			segments = prior->fold->Segments(); // the same rows: refolded
		} else {
			segments = Extend(prior->fold->Segments(), encoded, from);
		}
		auto fold = std::make_shared<const JournalFold>(base.get(), std::move(segments), valid_at);
		return std::make_shared<const BasedJournalFold>(BasedJournalFold {base, std::move(fold)});
	};
	return GetOrFold(key, encoded, fits, build)->fold;
}

} // namespace graph
} // namespace anatid
