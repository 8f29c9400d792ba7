#include "hybrid.hpp"

#include <list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace anatid {

namespace {

// A small LRU per kind, guarded by one mutex: lookups are a few per query.
template <class Gen>
class GenerationCache {
public:
	std::shared_ptr<const Gen> Get(GenerationKey key) {
		std::lock_guard<std::mutex> lock(mutex_);
		auto it = map_.find(Key(key));
		if (it == map_.end()) {
			return nullptr;
		}
		order_.splice(order_.begin(), order_, it->second.second);
		return it->second.first;
	}
	void Put(GenerationKey key, std::shared_ptr<const Gen> gen) {
		std::lock_guard<std::mutex> lock(mutex_);
		auto k = Key(key);
		if (map_.count(k)) {
			return;
		}
		order_.push_front(k);
		map_.emplace(k, std::make_pair(std::move(gen), order_.begin()));
		while (map_.size() > kGenerationCacheSlots) {
			map_.erase(order_.back());
			order_.pop_back();
		}
	}
	void Clear() {
		std::lock_guard<std::mutex> lock(mutex_);
		map_.clear();
		order_.clear();
	}

private:
	using K = std::pair<int64_t, int64_t>;
	static K Key(GenerationKey key) {
		return {key.id, key.nonce};
	}
	std::mutex mutex_;
	std::list<K> order_;
	std::map<K, std::pair<std::shared_ptr<const Gen>, std::list<K>::iterator>> map_;
};

GenerationCache<TextGeneration> &TextCache() {
	static GenerationCache<TextGeneration> cache;
	return cache;
}

GenerationCache<VectorGeneration> &VectorCache() {
	static GenerationCache<VectorGeneration> cache;
	return cache;
}

template <class Gen>
std::shared_ptr<const Gen> GenerationFor(GenerationCache<Gen> &cache, GenerationKey key,
                                         const std::vector<std::string_view> &parts, bool have_parts,
                                         const char *what) {
	if (auto hit = cache.Get(key)) {
		return hit;
	}
	if (!have_parts) {
		throw std::runtime_error(std::string("anatid: the ") + what + " generation " + std::to_string(key.id) +
		                         " left the cache while this query ran; run the query again");
	}
	auto gen = Gen::Parse(parts);
	cache.Put(key, gen);
	return gen;
}

} // namespace

bool HasGeneration(GenerationKind kind, GenerationKey key) {
	return kind == GenerationKind::kText ? TextCache().Get(key) != nullptr : VectorCache().Get(key) != nullptr;
}

std::shared_ptr<const TextGeneration> TextGenerationFor(GenerationKey key, const std::vector<std::string_view> &parts,
                                                       bool have_parts) {
	return GenerationFor(TextCache(), key, parts, have_parts, "text");
}

std::shared_ptr<const VectorGeneration> VectorGenerationFor(GenerationKey key,
                                                           const std::vector<std::string_view> &parts,
                                                           bool have_parts) {
	return GenerationFor(VectorCache(), key, parts, have_parts, "vector");
}

void ClearGenerationCache() {
	TextCache().Clear();
	VectorCache().Clear();
}

std::vector<HybridHit> HybridRecall(const HybridRequest &request) {
	std::vector<int64_t> vector_ids, text_ids, graph_ids;
	if (request.use_vector) {
		const int64_t rows = request.vector_ceiling == INT64_MAX ? 0 : CosineVisibleRows(request.vector);
		if (rows > request.vector_ceiling) {
			throw std::runtime_error("anatid: an exact vector scan would cover " + std::to_string(rows) +
			                         " rows, above BRUTE_FORCE_CEILING=" + std::to_string(request.vector_ceiling) +
			                         ": pass allow_slow=True (vector_ceiling := NULL in SQL)");
		}
		for (const ArmHit &h : CosineTopK(request.vector)) {
			vector_ids.push_back(h.id);
		}
	}
	if (request.use_text) {
		if (!request.text_has_base) {
			const int64_t docs = Bm25VisibleDocs(request.text);
			if (docs > request.text_ceiling) {
				throw std::runtime_error(
				    "anatid: this tenant has no text index generation and an exact text scan would cover " +
				    std::to_string(docs) + " documents, above SCAN_CEILING=" + std::to_string(request.text_ceiling) +
				    ": build one with maintain_indexes() (or rebuild_fts_index()), or pass allow_slow=True");
			}
		}
		for (const ArmHit &h : Bm25TopK(request.text)) {
			text_ids.push_back(h.id);
		}
	}
	std::unordered_map<int64_t, int32_t> hop_of;
	if (request.use_graph) {
		graph_ids = request.graph_ids;
		for (size_t i = 0; i < request.graph_ids.size() && i < request.graph_hops.size(); i++) {
			hop_of.emplace(request.graph_ids[i], request.graph_hops[i]);
		}
	}
	auto rank_in = [](const std::vector<int64_t> &ids) {
		std::unordered_map<int64_t, int64_t> rank;
		for (size_t i = 0; i < ids.size(); i++) {
			rank.emplace(ids[i], static_cast<int64_t>(i + 1));
		}
		return rank;
	};
	const auto rv = rank_in(vector_ids), rt = rank_in(text_ids), rg = rank_in(graph_ids);
	std::vector<HybridHit> out;
	for (const FusedHit &f : FuseRrf(vector_ids, text_ids, graph_ids, request.weights)) {
		if (out.size() >= request.k) {
			break;
		}
		HybridHit h {f.id, f.score, 0, 0, 0, -1};
		if (f.arms & kArmVector) {
			h.rank_vector = rv.at(f.id);
		}
		if (f.arms & kArmText) {
			h.rank_text = rt.at(f.id);
		}
		if (f.arms & kArmGraph) {
			h.rank_graph = rg.at(f.id);
			h.hop = hop_of.at(f.id);
		}
		out.push_back(h);
	}
	return out;
}

} // namespace anatid
