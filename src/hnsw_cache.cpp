#include "hnsw_cache.hpp"

namespace anatid {

AnnCache &AnnCache::Instance() {
	static AnnCache cache;
	return cache;
}

std::shared_ptr<const HnswIndex> AnnCache::Get(AnnKey key) {
	std::lock_guard<std::mutex> lock(mutex_);
	for (auto it = lru_.begin(); it != lru_.end(); ++it) {
		if (it->key == key) {
			lru_.splice(lru_.begin(), lru_, it);
			return lru_.front().index;
		}
	}
	return nullptr;
}

bool AnnCache::Contains(AnnKey key) {
	std::lock_guard<std::mutex> lock(mutex_);
	for (const Entry &e : lru_) {
		if (e.key == key) {
			return true;
		}
	}
	return false;
}

void AnnCache::Put(AnnKey key, std::shared_ptr<const HnswIndex> index) {
	std::lock_guard<std::mutex> lock(mutex_);
	for (auto it = lru_.begin(); it != lru_.end(); ++it) {
		if (it->key == key) {
			resident_ -= it->bytes;
			lru_.erase(it);
			break;
		}
	}
	const size_t bytes = index->MemoryBytes();
	lru_.push_front(Entry {key, std::move(index), bytes});
	resident_ += bytes;
	while (resident_ > kDefaultBudget && lru_.size() > 1) {
		resident_ -= lru_.back().bytes;
		lru_.pop_back();
	}
}

size_t AnnCache::Entries() {
	std::lock_guard<std::mutex> lock(mutex_);
	return lru_.size();
}

} // namespace anatid
