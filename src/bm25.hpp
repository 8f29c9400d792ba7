// Okapi BM25 over a base generation plus a journal (DuckDB-free core).
//
// The base generation is an immutable snapshot of one tenant's postings, built by
// anatid.indexes.text and parsed once per process (see hybrid.hpp's cache). Every
// memory written, corrected, closed or erased since then is in the journal: its base
// entry is ignored and its current state (if it still has text) comes in as a
// JournalDoc with its postings for the query terms. Statistics (N, avgdl, df) are
// computed over the union, restricted to documents valid at the reading instant, so
// a document scores the same whether it sits in the base or in the journal.
//
// Arithmetic follows the SQL oracle (python/anatid/verbs/recall_sql.py) operation by
// operation, including DuckDB's DECIMAL literals, so scores agree bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace anatid {

constexpr int64_t kOpenEnd = INT64_MAX; // valid_to of an open interval, in microseconds

// One ranked candidate of an arm: score already rounded to float32 (the contract).
struct ArmHit {
	int64_t id;
	float score;
};

// Orders an arm: score desc, id asc; keeps the first `depth`.
void RankArm(std::vector<ArmHit> &hits, size_t depth);

// Immutable base generation of one tenant's text index.
struct TextGeneration {
	std::vector<int64_t> ids;   // memory ids, one per document
	std::vector<int32_t> lens;  // token counts
	std::vector<int64_t> vf;    // valid_from, epoch microseconds
	std::vector<int64_t> vt;    // valid_to, kOpenEnd when open
	std::vector<int64_t> term_start;       // postings of term t: [term_start[t], term_start[t+1])
	std::vector<int32_t> post_doc;         // document index
	std::vector<int32_t> post_tf;          // term frequency
	std::string term_bytes;                // the terms, concatenated
	std::unordered_map<std::string_view, int32_t> term_of; // views into term_bytes
	std::unordered_map<int64_t, int32_t> doc_of;
	int64_t all_len = 0;                   // sum of lens
	// For N and avgdl without a pass over every document: the largest valid_from, and the
	// closed documents' valid_to ascending with their lengths' running sums, so the
	// documents visible at any instant >= max_vf are all but a prefix of these.
	bool visibility_index = false;         // set by Parse
	int64_t max_vf = INT64_MIN;
	std::vector<int64_t> closed_vt;
	std::vector<int64_t> closed_len_sum;   // closed_len_sum[i]: lens of closed_vt[0..i)
	// Each document's content and kind at build time (parts 10-13; a generation written
	// before they existed has none): what recall returns for a hit that no write has
	// touched since, without reading anatid_memories.
	bool has_content = false;
	std::vector<int64_t> content_off, kind_off; // n + 1 offsets into the bytes
	std::string content_bytes, kind_bytes;
	std::string_view Content(size_t doc) const;
	std::string_view Kind(size_t doc) const;
	// The document of memory `id` when this generation can vouch for its content and kind
	// at `valid_at` (it has content, holds the memory and the memory is valid then); -1
	// otherwise. The caller still rules out memories a journal row touched since the build.
	int64_t VouchedDoc(int64_t id, int64_t valid_at) const;

	// Parses the parts written by anatid.indexes.text (see docs/indexes.md):
	// header int64[4] = {magic, n_docs, n_terms, n_postings}, ids int64[n], lens int32[n],
	// vf int64[n], vt int64[n], term offsets int64[n_terms+1], term bytes,
	// term starts int64[n_terms+1], post_doc int32[P], post_tf int32[P], then optionally
	// content offsets int64[n+1], content bytes, kind offsets int64[n+1], kind bytes.
	// Throws std::runtime_error naming the first inconsistency.
	static std::shared_ptr<const TextGeneration> Parse(const std::vector<std::string_view> &parts);
	size_t MemoryBytes() const;
	// Sets the visibility index above from the closed documents' (valid_to, length) pairs
	// (any order): Parse and a journal laid out as a generation (text_journal.hpp) build it alike.
	void SetClosed(std::vector<std::pair<int64_t, int32_t>> closed);
};

constexpr int64_t kTextMagic = 0x31305854414e41LL; // "ANATX01"

// A journalled document's current state.
struct JournalDoc {
	int64_t id;
	int32_t len;
	int64_t vf, vt;
};

// One posting of a journalled document for a query term.
struct JournalPosting {
	int64_t id;
	std::string_view term;
	int32_t tf;
};

struct Bm25Input {
	const TextGeneration *base = nullptr;    // may be null: everything is in the journal
	std::vector<int64_t> touched;            // ids journalled since the base was built
	std::vector<JournalDoc> docs;            // their current state (believed rows with text)
	std::vector<JournalPosting> postings;    // their postings for the query terms
	std::vector<std::string_view> terms;     // distinct query terms, in summation order
	int64_t valid_at = 0;                    // epoch microseconds
	size_t depth = 50;
};

// BM25 contribution of one (term, document), exactly as the SQL oracle evaluates
//   ln(1 + (n - df + 0.5) / (df + 0.5)) * (tf * (1.2 + 1)) / (tf + 1.2 * (1 - 0.75 + 0.75 * len / avgdl))
// where DuckDB types 1.2 + 1 and 0.75 * len as DECIMAL (exact) before casting to DOUBLE.
double Bm25Contribution(double n, double df, int32_t tf, int32_t len, double avgdl);

// Number of documents of the union visible at valid_at (the N of BM25).
int64_t Bm25VisibleDocs(const Bm25Input &in);

// The ranked text arm.
std::vector<ArmHit> Bm25TopK(const Bm25Input &in);

} // namespace anatid
