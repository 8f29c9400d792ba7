// The text journal as the lean recall reads it: compact postings, the fold of the
// journal rows (the latest row of a memory wins) and a process-wide cache of folds.
//
// Postings: each journal row stores its memory's postings as one VARCHAR,
// "term:tf term:tf ..." sorted by term (python/anatid/indexes/text.py writes it). Tokens
// are maximal runs of [\p{L}\p{M}\p{N}] (python/anatid/text.py's TOKEN_PATTERN), so a
// term never contains ' ' or ':' and needs no escaping. Why one string: DuckDB
// materializes VARCHAR[] and INTEGER[] columns row by row into the aggregate, and that
// cost about as much as everything else the journal added to a recall
// (docs/benchmarks.md, "500 journalled writes").
//
// Why a cache: parsing and folding the journal on every read repeats work that only a
// write changes. Like graph::JournalCache, the fold is cached under the text generation
// (id, nonce), which names one tenant's generation, and checked against the exact bytes of
// the rows the read scanned (journal_fold_cache.hpp says why, and what is reused).
#pragma once

#include "bm25.hpp"
#include "journal_fold_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace anatid {
namespace text_journal {

// Calls fn(term, tf) for each posting of a postings string; throws std::invalid_argument
// naming the malformed posting (an empty term, a missing ':' or a tf that is not a
// positive 32-bit integer).
template <class Fn>
void ForEachPosting(std::string_view postings, Fn &&fn);

// Appends one scanned journal row to `encoded` (the bytes the cache compares):
// memory_id, seq, vf, vt, doc_len (present = doc_len not NULL) and the postings
// (has_postings = not NULL). Fixed-width fields in host byte order: the bytes never
// leave the process.
void AppendRow(std::string &encoded, int64_t memory_id, int64_t seq, int64_t vf, int64_t vt, bool present,
               int32_t len, bool has_postings, std::string_view postings);

// The fold of a journal: each memory's latest row and an inverted index of the rows'
// postings. Immutable once built (shared by readers).
class Fold {
public:
	// Folds encoded rows (AppendRow). Throws std::invalid_argument on a malformed row.
	// as_generation: also lay the folded documents out as a TextGeneration (Generation()).
	static std::shared_ptr<const Fold> Build(std::string_view encoded, bool as_generation = false);
	// This fold plus the rows of encoded[from, end) (the bytes before `from` are this fold's).
	std::shared_ptr<const Fold> Extend(std::string_view encoded, size_t from, bool as_generation = false) const;

	bool Touched(int64_t memory_id) const;
	// Whether the memory is visible at `valid_at` by its latest journal row (a row with a
	// document, valid then); false for a memory no row touches (ask the base then).
	bool VisibleAt(int64_t memory_id, int64_t valid_at) const;
	size_t Memories() const {
		return touched_.size();
	}
	// The memories whose latest row has a document (doc_len not NULL).
	size_t Documents() const {
		return docs_.size();
	}
	// Fills in.touched, in.docs and, for the distinct query terms in.terms, in.postings
	// (whose terms are views of in.terms). `in` must outlive nothing of this fold.
	void Fill(Bm25Input &in) const;
	// The latest documents with text and their live postings as a base generation (no
	// content), for a tenant without one: the journal is then the whole index, and BM25 over
	// this base scores each document exactly as over the same documents journalled
	// (bm25.hpp), with dense arrays instead of per-read maps. Null unless built as_generation.
	const std::shared_ptr<const TextGeneration> &Generation() const {
		return generation_;
	}
	size_t ByteSize() const;

private:
	struct Latest {
		int64_t seq, vf, vt;
		int32_t len;
		bool present;
	};
	struct Posting {
		int64_t id, seq;
		int32_t tf;
	};
	void Apply(std::string_view encoded, size_t from);
	void Finish(bool as_generation);
	std::shared_ptr<const TextGeneration> LayOut() const;

	std::unordered_map<int64_t, Latest> latest_;
	// Every row's postings, tagged with the row's seq: a posting whose seq is not its
	// memory's latest is stale (the memory was written again) and skipped by Fill.
	std::unordered_map<std::string, std::vector<Posting>> postings_;
	size_t posting_count_ = 0;
	std::vector<int64_t> touched_; // sorted
	std::vector<JournalDoc> docs_; // the latest rows with text, by id
	std::shared_ptr<const TextGeneration> generation_;
};

using CacheStats = JournalFoldCacheStats; // refolds: a fold asked for its Generation() after all

// Folds keyed by the text generation (id, nonce); the empty journal is not cached.
class Cache : public JournalFoldCache<std::pair<int64_t, int64_t>, Fold> {
public:
	static Cache &Instance();
	// The fold of `encoded`, scanned under the text generation (gen_id, nonce). The lean
	// path's two row forms (with and without postings) are two states of one generation.
	// as_generation: the fold carries Generation() (a cached fold without it is refolded).
	std::shared_ptr<const Fold> Get(int64_t gen_id, int64_t nonce, const std::string &encoded,
	                                bool as_generation = false);
};

// ---- implementation of the template ----------------------------------------------------
[[noreturn]] void ThrowBadPosting(std::string_view postings, std::string_view posting);

template <class Fn>
void ForEachPosting(std::string_view postings, Fn &&fn) {
	size_t pos = 0;
	while (pos < postings.size()) {
		size_t end = postings.find(' ', pos);
		if (end == std::string_view::npos) {
			end = postings.size();
		}
		const std::string_view posting = postings.substr(pos, end - pos);
		const size_t colon = posting.rfind(':');
		if (colon == std::string_view::npos || colon == 0 || colon + 1 == posting.size() ||
		    posting.size() - colon - 1 > 10) {
			ThrowBadPosting(postings, posting);
		}
		int64_t tf = 0;
		for (size_t i = colon + 1; i < posting.size(); i++) {
			const char c = posting[i];
			if (c < '0' || c > '9') {
				ThrowBadPosting(postings, posting);
			}
			tf = tf * 10 + (c - '0');
		}
		if (tf < 1 || tf > INT32_MAX) {
			ThrowBadPosting(postings, posting);
		}
		fn(posting.substr(0, colon), static_cast<int32_t>(tf));
		pos = end + 1;
	}
}

} // namespace text_journal
} // namespace anatid
