// The process-wide cache of parsed graph generations, keyed by (generation id, nonce).
//
// A generation names immutable content (a new build gets a new id and nonce), so an
// entry never goes stale: it is only evicted, least recently used first, when the
// resident bytes exceed the budget. Every DuckDB database in the process shares the
// cache. Ids are unique per file only: two files maintained in the same millisecond hold
// equal ids, so the random nonce stored beside each generation (and in its journal's base
// marker) is part of the key, as for the text, vector and ANN caches.
#pragma once

#include "graph_generation.hpp"
#include "graph_recall.hpp"
#include "journal_fold_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace anatid {
namespace graph {

// What names one generation across every file in the process.
struct CacheKey {
	int64_t id;
	int64_t nonce;
	bool operator==(const CacheKey &o) const {
		return id == o.id && nonce == o.nonce;
	}
};

struct CacheKeyHash {
	size_t operator()(const CacheKey &k) const {
		return std::hash<int64_t>()(k.id) ^ (std::hash<int64_t>()(k.nonce) * 0x9E3779B97F4A7C15ull);
	}
};

struct CacheStats {
	size_t budget_bytes = 0;
	size_t resident_bytes = 0;
	size_t entries = 0;
	uint64_t hits = 0;
	uint64_t misses = 0;
	uint64_t loads = 0;
	uint64_t evictions = 0;
	std::vector<int64_t> resident_ids; // most recently used first
};

class GenerationCache {
public:
	static constexpr size_t kDefaultBudget = size_t(512) << 20;

	static GenerationCache &Instance();

	// The entry (and marks it used), or null.
	std::shared_ptr<const Generation> Get(const CacheKey &key);
	bool Contains(const CacheKey &key);
	// Inserts (replacing an entry with the same key) and evicts to the budget. The entry
	// just put is never evicted by its own insertion, even if it alone exceeds the budget.
	void Put(const CacheKey &key, std::shared_ptr<const Generation> generation);
	void SetBudget(size_t bytes);
	void Clear();
	CacheStats Stats();

private:
	struct Entry {
		CacheKey key;
		std::shared_ptr<const Generation> generation;
		size_t bytes;
	};
	void EvictLocked(const CacheKey *keep);

	std::mutex mutex_;
	std::list<Entry> lru_; // front = most recently used
	std::unordered_map<CacheKey, std::list<Entry>::iterator, CacheKeyHash> index_;
	size_t budget_ = kDefaultBudget;
	size_t resident_ = 0;
	uint64_t hits_ = 0, misses_ = 0, loads_ = 0, evictions_ = 0;
};

// ---- the journal cache -------------------------------------------------------------
//
// Why: parsing a tenant's journal and folding it over the base costs about 0.2 ms per
// 1,000 rows, on every read, while the journal changes only on writes. The fold is cached
// under the generation's key and checked against the exact bytes the read scanned
// (journal_fold_cache.hpp says why, and what is reused). An equal journal reuses the fold
// unless the read's base object or instant is outside it, then refolds its rows; a journal
// that extends the cached one (appends since) parses only the new rows.

// The encoded journal one read scanned: each entry (not the base marker, not BLOB rows)
// as a 4-byte little-endian length and its bytes, in scan order.
void AppendJournalEntry(std::string &encoded, std::string_view entry);

using JournalCacheStats = JournalFoldCacheStats;

// A cached fold and the generation object it points into (held alive by readers, not here).
struct BasedJournalFold {
	std::weak_ptr<const Generation> base;
	std::shared_ptr<const JournalFold> fold;
	size_t ByteSize() const {
		return sizeof(base) + fold->ByteSize();
	}
};

class JournalCache : public JournalFoldCache<CacheKey, BasedJournalFold> {
public:
	static JournalCache &Instance();

	// The fold of `encoded` over `base` (the generation `key`, held alive by the caller)
	// at `valid_at`. Throws std::invalid_argument for a malformed entry.
	std::shared_ptr<const JournalFold> Fold(const CacheKey &key, const std::shared_ptr<const Generation> &base,
	                                        const std::string &encoded, int64_t valid_at);
};

} // namespace graph
} // namespace anatid
