#include "text_journal.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace anatid {
namespace text_journal {

namespace {

constexpr uint8_t kPresent = 1, kHasPostings = 2;
constexpr size_t kFixed = 4 * sizeof(int64_t) + sizeof(int32_t) + 1 + sizeof(uint32_t);

template <class T>
void Put(std::string &out, T v) {
	char b[sizeof(T)];
	std::memcpy(b, &v, sizeof(T));
	out.append(b, sizeof(T));
}

template <class T>
T Take(const char *p) {
	T v;
	std::memcpy(&v, p, sizeof(T));
	return v;
}

} // namespace

void ThrowBadPosting(std::string_view postings, std::string_view posting) {
	const std::string_view shown = postings.substr(0, 200);
	throw std::invalid_argument("anatid: malformed text journal postings (expected \"term:tf term:tf ...\"): posting \"" +
	                            std::string(posting.substr(0, 100)) + "\" in \"" + std::string(shown) +
	                            (postings.size() > shown.size() ? "...\"" : "\"") +
	                            "; rebuild_fts_index() rewrites the journal");
}

void AppendRow(std::string &encoded, int64_t memory_id, int64_t seq, int64_t vf, int64_t vt, bool present,
               int32_t len, bool has_postings, std::string_view postings) {
	Put(encoded, memory_id);
	Put(encoded, seq);
	Put(encoded, vf);
	Put(encoded, vt);
	Put(encoded, len);
	Put(encoded, uint8_t((present ? kPresent : 0) | (has_postings ? kHasPostings : 0)));
	Put(encoded, uint32_t(has_postings ? postings.size() : 0));
	if (has_postings) {
		encoded.append(postings.data(), postings.size());
	}
}

// ---- the fold ----------------------------------------------------------------------------

void Fold::Apply(std::string_view encoded, size_t from) {
	size_t pos = from;
	while (pos < encoded.size()) {
		if (encoded.size() - pos < kFixed) {
			throw std::invalid_argument("anatid: truncated encoded text journal");
		}
		const char *p = encoded.data() + pos;
		const int64_t id = Take<int64_t>(p), seq = Take<int64_t>(p + 8);
		Latest row {seq, Take<int64_t>(p + 16), Take<int64_t>(p + 24), Take<int32_t>(p + 32), false};
		const uint8_t flags = Take<uint8_t>(p + 36);
		const uint32_t n = Take<uint32_t>(p + 37);
		row.present = (flags & kPresent) != 0;
		pos += kFixed;
		if (encoded.size() - pos < n) {
			throw std::invalid_argument("anatid: truncated encoded text journal");
		}
		const std::string_view postings(encoded.data() + pos, n);
		pos += n;
		auto it = latest_.find(id);
		if (it != latest_.end() && it->second.seq >= seq) {
			continue; // an older row of this memory (scan order is not seq order)
		}
		latest_[id] = row;
		if (row.present && (flags & kHasPostings)) {
			ForEachPosting(postings, [&](std::string_view term, int32_t tf) {
				auto at = postings_.find(std::string(term)); // heterogeneous lookup is C++20
				if (at == postings_.end()) {
					at = postings_.emplace(std::string(term), std::vector<Posting>()).first;
				}
				at->second.push_back(Posting {id, seq, tf});
				posting_count_++;
			});
		}
	}
}

void Fold::Finish() {
	touched_.clear();
	docs_.clear();
	touched_.reserve(latest_.size());
	for (const auto &kv : latest_) {
		touched_.push_back(kv.first);
	}
	std::sort(touched_.begin(), touched_.end());
	for (int64_t id : touched_) {
		const Latest &row = latest_.at(id);
		if (row.present) {
			docs_.push_back(JournalDoc {id, row.len, row.vf, row.vt});
		}
	}
}

std::shared_ptr<const Fold> Fold::Build(std::string_view encoded) {
	auto fold = std::make_shared<Fold>();
	fold->Apply(encoded, 0);
	fold->Finish();
	return fold;
}

std::shared_ptr<const Fold> Fold::Extend(std::string_view encoded, size_t from) const {
	auto fold = std::make_shared<Fold>(*this);
	fold->Apply(encoded, from);
	fold->Finish();
	return fold;
}

bool Fold::Touched(int64_t memory_id) const {
	return std::binary_search(touched_.begin(), touched_.end(), memory_id);
}

bool Fold::VisibleAt(int64_t memory_id, int64_t valid_at) const {
	auto it = latest_.find(memory_id);
	return it != latest_.end() && it->second.present && it->second.vf <= valid_at && valid_at < it->second.vt;
}

void Fold::Fill(Bm25Input &in) const {
	in.touched.insert(in.touched.end(), touched_.begin(), touched_.end());
	in.docs.insert(in.docs.end(), docs_.begin(), docs_.end());
	for (std::string_view term : in.terms) {
		auto it = postings_.find(std::string(term));
		if (it == postings_.end()) {
			continue;
		}
		for (const Posting &p : it->second) {
			const Latest &row = latest_.at(p.id);
			if (row.seq == p.seq) { // not superseded (a posting exists only for a present row)
				in.postings.push_back(JournalPosting {p.id, term, p.tf});
			}
		}
	}
}

size_t Fold::ByteSize() const {
	size_t bytes = sizeof(Fold) + latest_.size() * (sizeof(int64_t) + sizeof(Latest) + 16) +
	               posting_count_ * sizeof(Posting) + touched_.size() * sizeof(int64_t) +
	               docs_.size() * sizeof(JournalDoc);
	for (const auto &kv : postings_) {
		bytes += kv.first.capacity() + sizeof(kv) + 16;
	}
	return bytes;
}

// ---- the cache ----------------------------------------------------------------------------

Cache &Cache::Instance() {
	static Cache *cache = new Cache(); // never destroyed: outlives every database
	return *cache;
}

std::shared_ptr<const Fold> Cache::Get(int64_t gen_id, int64_t nonce, const std::string &encoded) {
	if (encoded.empty()) {
		static const std::shared_ptr<const Fold> empty = Fold::Build({});
		return empty;
	}
	return GetOrFold(
	    {gen_id, nonce}, encoded, [](const Fold &) { return true; },
	    [&](const Fold *prior, size_t from) { return prior ? prior->Extend(encoded, from) : Fold::Build(encoded); });
}

} // namespace text_journal
} // namespace anatid
