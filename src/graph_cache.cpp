#include "graph_cache.hpp"

#include "graph_codec.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace anatid {
namespace graph {

GenerationCache &GenerationCache::Instance() {
	static GenerationCache *cache = new GenerationCache(); // never destroyed: outlives every database
	return *cache;
}

std::shared_ptr<const Generation> GenerationCache::Get(int64_t generation_id) {
	std::lock_guard<std::mutex> lock(mutex_);
	auto it = index_.find(generation_id);
	if (it == index_.end()) {
		misses_++;
		return nullptr;
	}
	hits_++;
	lru_.splice(lru_.begin(), lru_, it->second);
	return it->second->generation;
}

bool GenerationCache::Contains(int64_t generation_id) {
	std::lock_guard<std::mutex> lock(mutex_);
	return index_.count(generation_id) != 0;
}

void GenerationCache::Put(int64_t generation_id, std::shared_ptr<const Generation> generation) {
	std::lock_guard<std::mutex> lock(mutex_);
	auto it = index_.find(generation_id);
	if (it != index_.end()) {
		resident_ -= it->second->bytes;
		lru_.erase(it->second);
		index_.erase(it);
	}
	const size_t bytes = generation->ByteSize();
	lru_.push_front(Entry {generation_id, std::move(generation), bytes});
	index_.emplace(generation_id, lru_.begin());
	resident_ += bytes;
	loads_++;
	EvictLocked(generation_id);
}

void GenerationCache::SetBudget(size_t bytes) {
	std::lock_guard<std::mutex> lock(mutex_);
	budget_ = bytes;
	EvictLocked(lru_.empty() ? 0 : lru_.front().id);
}

void GenerationCache::Clear() {
	std::lock_guard<std::mutex> lock(mutex_);
	evictions_ += lru_.size();
	lru_.clear();
	index_.clear();
	resident_ = 0;
}

void GenerationCache::EvictLocked(int64_t keep) {
	while (resident_ > budget_ && !lru_.empty()) {
		auto victim = std::prev(lru_.end());
		if (victim->id == keep) {
			if (lru_.size() == 1) {
				break;
			}
			victim = std::prev(victim);
		}
		resident_ -= victim->bytes;
		index_.erase(victim->id);
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
		s.resident_ids.push_back(e.id);
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

std::vector<std::shared_ptr<const JournalCache::Entry>> JournalCache::Candidates(int64_t generation_id) {
	std::lock_guard<std::mutex> lock(mutex_);
	std::vector<std::shared_ptr<const Entry>> out;
	auto it = index_.find(generation_id);
	if (it != index_.end()) {
		for (auto entry : it->second) {
			out.push_back(*entry);
		}
	}
	return out;
}

void JournalCache::Touch(const Entry *entry) {
	std::lock_guard<std::mutex> lock(mutex_);
	auto it = index_.find(entry->generation_id);
	if (it == index_.end()) {
		return;
	}
	for (auto e : it->second) {
		if (e->get() == entry) {
			lru_.splice(lru_.begin(), lru_, e);
			return;
		}
	}
}

void JournalCache::EraseLocked(Lru::iterator it) {
	auto &same = index_[(*it)->generation_id];
	same.erase(std::find(same.begin(), same.end(), it));
	if (same.empty()) {
		index_.erase((*it)->generation_id);
	}
	resident_ -= (*it)->bytes;
	lru_.erase(it);
}

void JournalCache::Put(std::shared_ptr<const Entry> entry, const Entry *replaces) {
	std::lock_guard<std::mutex> lock(mutex_);
	const int64_t id = entry->generation_id;
	auto &same = index_[id];
	for (auto it : same) {
		if (it->get() == replaces) {
			EraseLocked(it);
			break;
		}
	}
	resident_ += entry->bytes;
	lru_.push_front(std::move(entry));
	index_[id].push_back(lru_.begin());
	// the least recently used state of this generation, then the least recently used overall
	while (index_[id].size() > kPerGeneration) {
		for (auto it = std::prev(lru_.end());; --it) {
			if ((*it)->generation_id == id) {
				EraseLocked(it);
				evictions_++;
				break;
			}
		}
	}
	while (lru_.size() > 1 && (lru_.size() > kMaxEntries || resident_ > kBudgetBytes)) {
		EraseLocked(std::prev(lru_.end()));
		evictions_++;
	}
}

std::shared_ptr<const JournalFold> JournalCache::Fold(int64_t generation_id,
                                                      const std::shared_ptr<const Generation> &base,
                                                      const std::string &encoded, int64_t valid_at) {
	// the entry with exactly these bytes, else the longest one these bytes extend
	std::shared_ptr<const Entry> same, prefix;
	for (auto &c : Candidates(generation_id)) {
		const std::string &old = c->encoded;
		if (old.size() > encoded.size() || std::memcmp(old.data(), encoded.data(), old.size()) != 0) {
			continue;
		}
		if (old.size() == encoded.size()) {
			same = c;
			break;
		}
		if (old.empty()) {
			continue; // extending an empty journal is parsing everything: a miss
		}
		if (!prefix || prefix->encoded.size() < old.size()) {
			prefix = c;
		}
	}
	std::vector<JournalSegment> segments;
	if (same) {
		if (same->base.lock() == base && same->fold->Covers(valid_at)) {
			Touch(same.get());
			std::lock_guard<std::mutex> lock(mutex_);
			hits_++;
			return same->fold;
		}
		segments = same->fold->Segments();
		std::lock_guard<std::mutex> lock(mutex_);
		refolds_++;
	} else if (prefix) {
		segments = Extend(prefix->fold->Segments(), encoded, prefix->encoded.size());
		std::lock_guard<std::mutex> lock(mutex_);
		extends_++;
	} else {
		auto parsed = std::make_shared<std::vector<JournalRow>>();
		ParseEncoded(encoded, 0, *parsed);
		SortBySeq(*parsed);
		segments.push_back(std::move(parsed));
		std::lock_guard<std::mutex> lock(mutex_);
		misses_++;
	}
	auto fold = std::make_shared<const JournalFold>(base.get(), std::move(segments), valid_at);
	const size_t bytes = sizeof(Entry) + encoded.capacity() + fold->ByteSize();
	Put(std::make_shared<const Entry>(Entry {generation_id, base, encoded, fold, bytes}), same.get());
	return fold;
}

void JournalCache::Clear() {
	std::lock_guard<std::mutex> lock(mutex_);
	evictions_ += lru_.size();
	lru_.clear();
	index_.clear();
	resident_ = 0;
}

JournalCacheStats JournalCache::Stats() {
	std::lock_guard<std::mutex> lock(mutex_);
	JournalCacheStats s;
	s.entries = lru_.size();
	s.resident_bytes = resident_;
	s.hits = hits_;
	s.refolds = refolds_;
	s.extends = extends_;
	s.misses = misses_;
	s.evictions = evictions_;
	return s;
}

} // namespace graph
} // namespace anatid
