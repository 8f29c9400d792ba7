// anatid_graph_recall(entry VARCHAR, request VARCHAR [, blob BLOB])
//   -> LIST(STRUCT(memory_id BIGINT, hop INTEGER, score DOUBLE))
//
// An aggregate over one tenant's anatid_graph_journal entries: the base marker (op 0,
// a = generation id, b = its nonce) names the generation, the other entries are writes
// since it was built. `request` is constant per call (src/graph_codec.hpp;
// anatid_graph_request builds it in SQL). The three-argument form also takes one row
// (op 9, a and b as in the marker) carrying the generation BLOB, passed only when this
// process has not parsed that generation. A NULL entry carries the request alone: over
// no row at all an aggregate never sees its request and answers NULL. The cache key is (id, nonce): ids are unique
// per file only (src/graph_cache.hpp). Why an aggregate over two
// text columns: it reads the journal in the caller's transaction with one scan and no
// subquery, and each scanned column and bound argument costs per call
// (docs/benchmarks.md has the measurements).
//
// When the generation is neither cached nor supplied: with strict, an error saying what
// to run; without (the Python engine's lean statement), a one-element list whose hop is
// -1 (memory_id = the generation to load) or -2 (the tenant has no generation), so the
// caller can load it or fall back without aborting its transaction; a marker without a
// nonce (a file written before nonces, opened read-only since) is refused the same way,
// with hop -3, since no cache key would tell it from another file's generation. A request in mode 2
// (empty_base) answers a journal without a base marker from the journal alone, folded once
// into the journal cache: the Python engine asks for it with one extra entry (op 8) carrying
// the canonical ABOUT edge and relates pair counts, and a journal with fewer ABOUT rows or
// distinct relates pairs than those (rows written by plain SQL) answers hop -4, so the SQL
// oracle answers instead (counting both sides in SQL cost about as much as the recall).
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "boxed_aggregate.hpp"
#include "capi_util.hpp"
#include "graph_cache.hpp"
#include "graph_codec.hpp"
#include "graph_overlay.hpp"
#include "graph_rank.hpp"
#include "graph_recall.hpp"
#include "spare_buffers.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace anatid {

namespace {

using namespace graph_binding;
using graph::JournalRow;

constexpr int8_t kOpBlob = 9;
constexpr int8_t kOpCounts = 8; // "8|about edges|relates pairs": the canonical counts (mode 2)
constexpr int32_t kHopNeedsLoad = -1;
constexpr int32_t kHopNoGeneration = -2;
constexpr int32_t kHopUnkeyed = -3;
constexpr int32_t kHopJournalShort = -4;
const graph::CacheKey kNoGenerationKey {0, 0}; // generation ids are allocator ids, always > 0

enum Arg : idx_t { kEntry, kRequest, kBlob };

// ---- state ------------------------------------------------------------------------
// Journal entries are not parsed here: they are kept as scanned (graph::AppendJournalEntry)
// so graph::JournalCache can recognise a journal it has already parsed and folded. Only
// the base marker and BLOB rows are parsed on arrival.
struct RecallState {
	RecallState() : journal(SpareBuffers::Take()) {
	}
	~RecallState() {
		SpareBuffers::Give(std::move(journal));
	}
	RecallState(const RecallState &) = delete;
	RecallState &operator=(const RecallState &) = delete;
	std::string journal; // encoded entries, base marker and BLOB rows excluded
	int markers = 0;
	int64_t generation = 0;
	int64_t nonce = 0;
	bool keyed = false; // the marker carried a nonce
	bool have_request = false;
	graph::RecallRequest request;
	bool strict = false;
	bool empty_base = false;
	bool have_blob = false;
	graph::CacheKey blob_key {0, 0};
	std::string blob;
	// the empty base's short check (kOpCounts): the canonical ABOUT edges and relates pairs,
	// against the journal's ABOUT rows and distinct relates pairs
	bool have_counts = false;
	int64_t canonical_about = 0, canonical_pairs = 0, journal_about = 0;
	std::unordered_set<std::pair<int64_t, int64_t>, graph::overlay_detail::PairHash> journal_pairs;
};

using Boxed = BoxedState<RecallState>;

RecallState *&StateOf(duckdb_aggregate_state state) {
	return Boxed::Of(state);
}

// "8|<canonical ABOUT edges>|<canonical relates pairs>" (native_graph._JOURNAL_ALONE).
void ReadCounts(std::string_view entry, RecallState &s) {
	const size_t bar = entry.find('|', 2);
	if (bar == std::string_view::npos) {
		throw std::invalid_argument("anatid_graph_recall: malformed counts entry");
	}
	s.canonical_about = std::stoll(std::string(entry.substr(2, bar - 2)));
	s.canonical_pairs = std::stoll(std::string(entry.substr(bar + 1)));
	s.have_counts = true;
}

// Counts what the short check compares: ABOUT rows (op 3) and distinct unordered pairs
// of relates rows (ops 1 and 2), as native_graph's SQL check counted them before.
void CountForShortCheck(std::string_view entry, RecallState &s) {
	if (IsOp(entry, graph::kOpAbout)) {
		s.journal_about++;
	} else if (IsOp(entry, graph::kOpEdgeInterval) || IsOp(entry, graph::kOpEdgeClosed)) {
		const JournalRow r = graph::ParseJournalEntry(entry);
		s.journal_pairs.emplace(std::min(r.a, r.b), std::max(r.a, r.b));
	}
}

int64_t NowMicros() {
	using namespace std::chrono;
	return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

void ReadRequest(duckdb_vector requests, idx_t row, RecallState &s) {
	std::string text;
	if (!String(requests, row, text)) {
		throw std::invalid_argument("anatid_graph_recall: request is NULL");
	}
	graph::ParsedRequest parsed = graph::ParseRequest(text);
	s.request = std::move(parsed.request);
	if (!parsed.has_valid_at) {
		s.request.valid_at_us = NowMicros();
	}
	s.strict = parsed.strict;
	s.empty_base = parsed.empty_base;
	s.have_request = true;
}

// ---- update / combine ---------------------------------------------------------------
void Update(duckdb_function_info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	duckdb_vector entries = duckdb_data_chunk_get_vector(input, kEntry);
	duckdb_vector requests = duckdb_data_chunk_get_vector(input, kRequest);
	const bool with_blob = duckdb_data_chunk_get_column_count(input) > kBlob;
	const Column entry_column(entries); // once per chunk: a fresh tenant's journal is every row it has
	for (idx_t row = 0; row < n; row++) {
		RecallState &s = *StateOf(states[row]);
		if (!s.have_request) {
			ReadRequest(requests, row, s);
		}
		const char *ptr = nullptr;
		size_t len = 0;
		if (!entry_column.View(row, ptr, len)) {
			// a request-only row: a caller that must be answered even when the tenant has no
			// journal row at all (anatid_hybrid fuses its first stage there) adds one NULL entry
			continue;
		}
		const std::string_view entry(ptr, len);
		if (IsOp(entry, kOpCounts)) {
			ReadCounts(entry, s);
			continue;
		}
		if (!IsOp(entry, graph::kOpBase) && !IsOp(entry, kOpBlob)) {
			graph::AppendJournalEntry(s.journal, entry);
			if (s.empty_base) {
				CountForShortCheck(entry, s);
			}
			continue;
		}
		JournalRow r = graph::ParseJournalEntry(entry);
		if (r.op == graph::kOpBase) {
			s.generation = r.a;
			s.nonce = r.b;
			s.keyed = HasB(entry);
			s.markers++;
			continue;
		}
		const char *blob = nullptr;
		size_t blob_len = 0;
		if (with_blob && StringView(duckdb_data_chunk_get_vector(input, kBlob), row, blob, blob_len)) {
			s.blob.assign(blob, blob_len);
			s.blob_key = graph::CacheKey {r.a, r.b};
			s.have_blob = HasB(entry);
		}
	}
}

void Combine(duckdb_function_info, duckdb_aggregate_state *source, duckdb_aggregate_state *target, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		RecallState &src = *StateOf(source[i]);
		RecallState &dst = *StateOf(target[i]);
		if (!dst.have_request && src.have_request) {
			dst.request = src.request;
			dst.strict = src.strict;
			dst.empty_base = src.empty_base;
			dst.have_request = true;
		}
		dst.journal += src.journal; // any order: the fold sorts rows by seq
		src.journal.clear();
		if (src.markers) {
			dst.generation = src.generation;
			dst.nonce = src.nonce;
			dst.keyed = src.keyed;
			dst.markers += src.markers;
			src.markers = 0;
		}
		if (src.have_counts) {
			dst.have_counts = true;
			dst.canonical_about = src.canonical_about;
			dst.canonical_pairs = src.canonical_pairs;
		}
		dst.journal_about += src.journal_about;
		src.journal_about = 0;
		dst.journal_pairs.insert(src.journal_pairs.begin(), src.journal_pairs.end());
		src.journal_pairs.clear();
		if (src.have_blob && !dst.have_blob) {
			dst.blob = std::move(src.blob);
			dst.blob_key = src.blob_key;
			dst.have_blob = true;
		}
	}
}

// ---- finalize -------------------------------------------------------------------------
// The hits of one state, or a one-element sentinel list (see the file comment).
std::vector<graph::RecallHit> Answer(RecallState &s) {
	const int64_t generation = s.generation;
	const int markers = s.markers;
	if (markers > 1) {
		throw std::invalid_argument("anatid_graph_recall: the journal names " + std::to_string(markers) +
		                            " base generations for one tenant; pass one tenant's rows");
	}
	if (markers == 0 && s.empty_base) {
		if (s.have_counts && (s.canonical_about > s.journal_about ||
		                      s.canonical_pairs > static_cast<int64_t>(s.journal_pairs.size()))) {
			return {graph::RecallHit {0, kHopJournalShort}}; // rows written by plain SQL: the oracle answers
		}
		// cached under generation 0, which no generation has: the fold cache checks the
		// scanned bytes, so tenants sharing the key cost a refold, never a wrong answer
		auto fold = graph::JournalCache::Instance().Fold(kNoGenerationKey, nullptr, s.journal,
		                                                 s.request.valid_at_us);
		return s.request.rank.enabled ? graph::Rank(*fold, s.request) : graph::Recall(*fold, s.request);
	}
	if (markers == 0) {
		if (s.strict) {
			throw std::invalid_argument("anatid_graph_recall: this tenant has no graph generation yet: build one "
			                            "with anatid's maintain_indexes()");
		}
		return {graph::RecallHit {0, kHopNoGeneration}};
	}
	if (!s.keyed) {
		if (s.strict) {
			throw std::invalid_argument("anatid_graph_recall: the base marker of graph generation " +
			                            std::to_string(generation) +
			                            " has no nonce (the file predates them): open it read-write with anatid "
			                            "once, which adds them, or run maintain_indexes()");
		}
		return {graph::RecallHit {generation, kHopUnkeyed}};
	}
	const graph::CacheKey key {generation, s.nonce};
	const bool blob = s.have_blob && s.blob_key == key;
	std::shared_ptr<const graph::Generation> base =
	    ResidentOrParse(key, blob ? s.blob.data() : nullptr, s.blob.size(), "anatid_graph_recall");
	if (!base) {
		if (s.strict) {
			throw std::invalid_argument("anatid_graph_recall: graph generation " + std::to_string(generation) +
			                            " is not loaded in this process and its BLOB was not passed; "
			                            "call anatid.anatid_recall_2hop, which passes it");
		}
		return {graph::RecallHit {generation, kHopNeedsLoad}};
	}
	auto fold = graph::JournalCache::Instance().Fold(key, base, s.journal, s.request.valid_at_us);
	return s.request.rank.enabled ? graph::Rank(*fold, s.request) : graph::Recall(*fold, s.request);
}

void Finalize(duckdb_function_info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
              idx_t offset) {
	auto *entries = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(result));
	idx_t total = duckdb_list_vector_get_size(result);
	for (idx_t i = 0; i < count; i++) {
		RecallState &s = *StateOf(source[i]);
		const idx_t out = offset + i;
		if (!s.have_request) { // no rows at all: nothing journalled, no generation
			SetNull(result, out);
			entries[out] = duckdb_list_entry {total, 0};
			continue;
		}
		std::vector<graph::RecallHit> hits = Answer(s);
		duckdb_list_vector_reserve(result, total + hits.size());
		duckdb_vector child = duckdb_list_vector_get_child(result);
		auto *ids = static_cast<int64_t *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 0)));
		auto *hops = static_cast<int32_t *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 1)));
		duckdb_vector score_vector = duckdb_struct_vector_get_child(child, 2);
		auto *scores = static_cast<double *>(duckdb_vector_get_data(score_vector));
		for (size_t h = 0; h < hits.size(); h++) {
			ids[total + h] = hits[h].memory_id;
			hops[total + h] = hits[h].hop;
			if (!std::isnan(hits[h].score)) { // a fused hybrid hit
				scores[total + h] = hits[h].score;
			} else if (hits[h].hop >= 0) {
				scores[total + h] = 1.0 / (1.0 + hits[h].hop);
			} else {
				duckdb_vector_ensure_validity_writable(score_vector);
				duckdb_validity_set_row_invalid(duckdb_vector_get_validity(score_vector), total + h);
			}
		}
		entries[out] = duckdb_list_entry {total, hits.size()};
		total += hits.size();
		duckdb_list_vector_set_size(result, total);
	}
}

} // namespace

namespace {

duckdb_aggregate_function RecallFunction(bool with_blob) {
	std::vector<duckdb_logical_type> params = {Type(DUCKDB_TYPE_VARCHAR), Type(DUCKDB_TYPE_VARCHAR)}; // entry, request
	if (with_blob) {
		params.push_back(Type(DUCKDB_TYPE_BLOB)); // NULL on most rows
	}
	return MakeBoxedAggregate<RecallState, Update, Combine, Finalize>(
	    "anatid_graph_recall", std::move(params),
	    ListOfStruct({{"memory_id", Type(DUCKDB_TYPE_BIGINT)},
	                  {"hop", Type(DUCKDB_TYPE_INTEGER)},
	                  {"score", Type(DUCKDB_TYPE_DOUBLE)}}));
}

} // namespace

void RegisterAnatidGraphRecall(duckdb_connection connection) {
	duckdb_aggregate_function_set set = duckdb_create_aggregate_function_set("anatid_graph_recall");
	for (bool with_blob : {false, true}) {
		duckdb_aggregate_function f = RecallFunction(with_blob);
		duckdb_add_aggregate_function_to_set(set, f);
		duckdb_destroy_aggregate_function(&f);
	}
	const duckdb_state state = duckdb_register_aggregate_function_set(connection, set);
	duckdb_destroy_aggregate_function_set(&set);
	if (state == DuckDBError) {
		throw std::runtime_error("anatid: could not register aggregate function anatid_graph_recall");
	}
}

} // namespace anatid
