// A process-wide LRU cache of folded journal rows: what text_journal::Cache and
// graph::JournalCache share.
//
// Why keyed by bytes: journal rows come and go with transactions (a rollback, a caller's
// uncommitted writes, maintenance absorbing them), so no id names a journal state. The key
// names the index generation a read scanned under, and a cached fold is checked against
// the exact bytes of the rows that read scanned. The same bytes reuse the fold; bytes that
// extend a cached state (rows appended since) fold only the new rows on top of it; anything
// else folds everything. A rolled-back row changes the bytes, so it is never served.
// Bounded by states per key, entry count and bytes, least recently used first; nothing
// here can change an answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace anatid {

struct JournalFoldCacheStats {
	size_t entries = 0;
	size_t resident_bytes = 0;
	uint64_t hits = 0;    // the same bytes: the fold reused
	uint64_t refolds = 0; // the same bytes, folded again (the fold did not fit the read)
	uint64_t extends = 0; // the cached bytes plus appended rows: only those folded
	uint64_t misses = 0;  // folded in full
	uint64_t evictions = 0;
};

// Key: the generation a journal was scanned under (equality only). Fold: immutable once
// built, with size_t ByteSize() const.
template <class Key, class Fold>
class JournalFoldCache {
public:
	static constexpr size_t kMaxEntries = 64;
	// Journal states kept per key: connections in different transactions (one with
	// uncommitted rows, one on an older snapshot) must not evict each other.
	static constexpr size_t kPerGeneration = 8;
	static constexpr size_t kBudgetBytes = size_t(64) << 20;

	// The fold of `encoded` (whole rows, in scan order) scanned under `key`. fits(const Fold &)
	// says whether a cached fold of the same bytes serves this read as it is (else it is
	// folded again and replaced). build(const Fold *prior, size_t from) folds: everything when
	// prior is null, else encoded[from, end) on top of prior, the fold of encoded[0, from)
	// (from == encoded.size() to fold the same rows again). Exceptions from build propagate,
	// nothing cached.
	template <class Fits, class Build>
	std::shared_ptr<const Fold> GetOrFold(const Key &key, const std::string &encoded, Fits &&fits, Build &&build);
	void Clear();
	JournalFoldCacheStats Stats();

private:
	struct Entry {
		Key key;
		std::string encoded;
		std::shared_ptr<const Fold> fold;
		size_t bytes;
	};
	using Lru = std::list<std::shared_ptr<const Entry>>;
	void EraseLocked(typename Lru::iterator it) {
		resident_ -= (*it)->bytes;
		lru_.erase(it);
		evictions_++;
	}

	std::mutex mutex_;
	Lru lru_; // front = most recently used
	size_t resident_ = 0;
	uint64_t hits_ = 0, refolds_ = 0, extends_ = 0, misses_ = 0, evictions_ = 0;
};

// ---- implementation of the template ----------------------------------------------------

template <class Key, class Fold>
template <class Fits, class Build>
std::shared_ptr<const Fold> JournalFoldCache<Key, Fold>::GetOrFold(const Key &key, const std::string &encoded,
                                                                   Fits &&fits, Build &&build) {
	// the entry with exactly these bytes, else the longest non-empty one these bytes extend
	// (extending an empty journal is folding everything: a miss)
	std::shared_ptr<const Entry> same, prefix;
	{
		std::lock_guard<std::mutex> lock(mutex_);
		for (auto it = lru_.begin(); it != lru_.end(); ++it) {
			const Entry &e = **it;
			if (!(e.key == key) || e.encoded.size() > encoded.size() ||
			    std::memcmp(e.encoded.data(), encoded.data(), e.encoded.size()) != 0) {
				continue;
			}
			if (e.encoded.size() == encoded.size()) {
				if (fits(*e.fold)) {
					lru_.splice(lru_.begin(), lru_, it);
					hits_++;
					return e.fold;
				}
				same = *it;
				break;
			}
			if (!e.encoded.empty() && (!prefix || prefix->encoded.size() < e.encoded.size())) {
				prefix = *it;
			}
		}
	}
	// fold outside the lock; a row boundary lies at prefix's end (both are whole rows, and
	// the bytes before it are equal)
	const Entry *prior = same ? same.get() : prefix.get();
	std::shared_ptr<const Fold> fold =
	    build(prior ? prior->fold.get() : nullptr, prior ? prior->encoded.size() : size_t(0));
	const size_t bytes = sizeof(Entry) + encoded.capacity() + fold->ByteSize();
	std::lock_guard<std::mutex> lock(mutex_);
	(same ? refolds_ : prefix ? extends_ : misses_)++;
	for (auto it = lru_.begin(); same && it != lru_.end(); ++it) {
		if (*it == same) { // replaced, not evicted
			resident_ -= same->bytes;
			lru_.erase(it);
			break;
		}
	}
	lru_.push_front(std::make_shared<const Entry>(Entry {key, encoded, fold, bytes}));
	resident_ += bytes;
	// the least recently used states of this key past the bound, then the least recently used overall
	size_t same_key = 0;
	for (auto it = lru_.begin(); it != lru_.end();) {
		auto next = std::next(it);
		if ((*it)->key == key && ++same_key > kPerGeneration) {
			EraseLocked(it);
		}
		it = next;
	}
	while (lru_.size() > 1 && (lru_.size() > kMaxEntries || resident_ > kBudgetBytes)) {
		EraseLocked(std::prev(lru_.end()));
	}
	return fold;
}

template <class Key, class Fold>
void JournalFoldCache<Key, Fold>::Clear() {
	std::lock_guard<std::mutex> lock(mutex_);
	evictions_ += lru_.size();
	lru_.clear();
	resident_ = 0;
}

template <class Key, class Fold>
JournalFoldCacheStats JournalFoldCache<Key, Fold>::Stats() {
	std::lock_guard<std::mutex> lock(mutex_);
	JournalFoldCacheStats s;
	s.entries = lru_.size();
	s.resident_bytes = resident_;
	s.hits = hits_;
	s.refolds = refolds_;
	s.extends = extends_;
	s.misses = misses_;
	s.evictions = evictions_;
	return s;
}

} // namespace anatid
