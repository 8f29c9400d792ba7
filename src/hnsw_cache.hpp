// The process-wide cache of parsed ANN (HNSW) generations, keyed by (generation id, nonce).
//
// Like the graph cache (src/graph_cache.hpp): a generation names immutable content, so an
// entry never goes stale, it is only evicted, least recently used first, past the byte
// budget. The random nonce written beside each generation keeps two files that happen to
// share a generation id apart.
#pragma once

#include "hnsw.hpp"

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

namespace anatid {

struct AnnKey {
	int64_t gen_id;
	int64_t nonce;
	bool operator==(const AnnKey &o) const {
		return gen_id == o.gen_id && nonce == o.nonce;
	}
};

class AnnCache {
public:
	static constexpr size_t kDefaultBudget = size_t(1) << 30;
	static AnnCache &Instance();

	std::shared_ptr<const HnswIndex> Get(AnnKey key); // null when absent; marks the entry used
	bool Contains(AnnKey key);
	// The entry just put is never evicted by its own insertion.
	void Put(AnnKey key, std::shared_ptr<const HnswIndex> index);
	size_t Entries();

private:
	struct Entry {
		AnnKey key;
		std::shared_ptr<const HnswIndex> index;
		size_t bytes;
	};
	std::mutex mutex_;
	std::list<Entry> lru_; // front = most recently used (a handful of entries: a list scan is fine)
	size_t resident_ = 0;
};

} // namespace anatid
