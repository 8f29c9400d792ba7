// The process-wide cache of parsed graph generations, keyed by generation id.
//
// A generation id names immutable content (a new build gets a new id), so an entry
// never goes stale: it is only evicted, least recently used first, when the resident
// bytes exceed the budget. Every DuckDB database in the process shares the cache; the
// ids are unique per file and carry a millisecond timestamp, so two files colliding on
// an id would need the same id allocated in the same millisecond.
#pragma once

#include "graph_generation.hpp"

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace anatid {
namespace graph {

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
	std::shared_ptr<const Generation> Get(int64_t generation_id);
	bool Contains(int64_t generation_id);
	// Inserts (replacing an entry with the same id) and evicts to the budget. The entry
	// just put is never evicted by its own insertion, even if it alone exceeds the budget.
	void Put(int64_t generation_id, std::shared_ptr<const Generation> generation);
	void SetBudget(size_t bytes);
	void Clear();
	CacheStats Stats();

private:
	struct Entry {
		int64_t id;
		std::shared_ptr<const Generation> generation;
		size_t bytes;
	};
	void EvictLocked(int64_t keep);

	std::mutex mutex_;
	std::list<Entry> lru_; // front = most recently used
	std::unordered_map<int64_t, std::list<Entry>::iterator> index_;
	size_t budget_ = kDefaultBudget;
	size_t resident_ = 0;
	uint64_t hits_ = 0, misses_ = 0, loads_ = 0, evictions_ = 0;
};

} // namespace graph
} // namespace anatid
