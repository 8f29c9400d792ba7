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
	// one append for the fixed fields: a journal of 20,000 rows is appended per read
	char fixed[kFixed];
	const uint8_t flags = uint8_t((present ? kPresent : 0) | (has_postings ? kHasPostings : 0));
	const uint32_t n = uint32_t(has_postings ? postings.size() : 0);
	std::memcpy(fixed, &memory_id, 8);
	std::memcpy(fixed + 8, &seq, 8);
	std::memcpy(fixed + 16, &vf, 8);
	std::memcpy(fixed + 24, &vt, 8);
	std::memcpy(fixed + 32, &len, 4);
	std::memcpy(fixed + 36, &flags, 1);
	std::memcpy(fixed + 37, &n, 4);
	encoded.append(fixed, kFixed);
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

void Fold::Finish(bool as_generation) {
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
	if (as_generation) {
		generation_ = LayOut();
	}
}

std::shared_ptr<const Fold> Fold::Build(std::string_view encoded, bool as_generation) {
	auto fold = std::make_shared<Fold>();
	fold->Apply(encoded, 0);
	fold->Finish(as_generation);
	return fold;
}

std::shared_ptr<const Fold> Fold::Extend(std::string_view encoded, size_t from, bool as_generation) const {
	auto fold = std::make_shared<Fold>(*this);
	fold->generation_.reset();
	fold->Apply(encoded, from);
	fold->Finish(as_generation);
	return fold;
}

std::shared_ptr<const TextGeneration> Fold::LayOut() const {
	auto gen = std::make_shared<TextGeneration>();
	const size_t n = docs_.size();
	gen->ids.reserve(n);
	gen->lens.reserve(n);
	gen->vf.reserve(n);
	gen->vt.reserve(n);
	gen->doc_of.reserve(n * 2);
	std::vector<std::pair<int64_t, int32_t>> closed;
	for (size_t i = 0; i < n; i++) {
		const JournalDoc &d = docs_[i];
		gen->ids.push_back(d.id);
		gen->lens.push_back(d.len);
		gen->vf.push_back(d.vf);
		gen->vt.push_back(d.vt);
		gen->doc_of.emplace(d.id, static_cast<int32_t>(i));
		gen->all_len += d.len;
		gen->max_vf = std::max(gen->max_vf, d.vf);
		if (d.vt != kOpenEnd) {
			closed.emplace_back(d.vt, d.len);
		}
	}
	gen->SetClosed(std::move(closed)); // the visibility index, as TextGeneration::Parse builds it
	// live postings only (a posting whose seq is not its memory's latest is stale), by term;
	// term_of's views point into term_bytes, so it is filled once term_bytes is complete
	std::vector<std::pair<std::string_view, const std::vector<Posting> *>> terms;
	terms.reserve(postings_.size());
	for (const auto &kv : postings_) {
		terms.emplace_back(kv.first, &kv.second);
	}
	std::sort(terms.begin(), terms.end());
	std::vector<size_t> offsets(1, 0);
	gen->term_start.assign(1, 0);
	for (const auto &t : terms) {
		for (const Posting &p : *t.second) {
			const Latest &row = latest_.at(p.id);
			if (row.seq == p.seq && row.present) {
				gen->post_doc.push_back(gen->doc_of.at(p.id));
				gen->post_tf.push_back(p.tf);
			}
		}
		if (static_cast<int64_t>(gen->post_doc.size()) == gen->term_start.back()) {
			continue; // every posting of the term is stale
		}
		gen->term_bytes.append(t.first);
		offsets.push_back(gen->term_bytes.size());
		gen->term_start.push_back(static_cast<int64_t>(gen->post_doc.size()));
	}
	gen->term_of.reserve(offsets.size() * 2);
	for (size_t t = 0; t + 1 < offsets.size(); t++) {
		gen->term_of.emplace(std::string_view(gen->term_bytes.data() + offsets[t], offsets[t + 1] - offsets[t]),
		                     static_cast<int32_t>(t));
	}
	return gen;
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
	return bytes + (generation_ ? generation_->MemoryBytes() : 0);
}

// ---- the cache ----------------------------------------------------------------------------

Cache &Cache::Instance() {
	static Cache *cache = new Cache(); // never destroyed: outlives every database
	return *cache;
}

std::shared_ptr<const Fold> Cache::Get(int64_t gen_id, int64_t nonce, const std::string &encoded,
                                       bool as_generation) {
	if (encoded.empty()) {
		static const std::shared_ptr<const Fold> empty = Fold::Build({}, true);
		return empty;
	}
	return GetOrFold(
	    {gen_id, nonce}, encoded, [&](const Fold &f) { return !as_generation || f.Generation() != nullptr; },
	    [&](const Fold *prior, size_t from) {
		    // a fold that carries a generation keeps carrying one (its key's reads want it)
		    const bool lay_out = as_generation || (prior && prior->Generation());
		    return prior ? prior->Extend(encoded, from, lay_out) : Fold::Build(encoded, lay_out);
	    });
}

} // namespace text_journal
} // namespace anatid
