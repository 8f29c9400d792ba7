#include "graph_cache.hpp"

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

} // namespace graph
} // namespace anatid
