// anatid_graph_recall(op, seq, a, b, a_key, b_key, kind, valid_from, valid_to, blob,
//                     seeds, hops, max_hits, kinds, valid_at, strict)
//   -> LIST(STRUCT(memory_id BIGINT, hop INTEGER, score DOUBLE))
//
// An aggregate over one tenant's rows of anatid_graph_journal (the base marker names the
// generation; the other rows are writes since it was built), optionally plus one row
// (op 9) carrying the generation BLOB when this process has not parsed it yet. The rest
// of the arguments are the request, constant per call. Why an aggregate: it reads the
// journal in the caller's transaction with one scan and no subquery, the cheapest SQL
// around a native call (docs/benchmarks.md has the measurements).
//
// When the generation is neither cached nor supplied: with strict, an error saying what
// to run; without (the Python engine's lean statement), a one-element list whose hop is
// -1 (memory_id = the generation to load) or -2 (the tenant has no generation), so the
// caller can load it or fall back without aborting its transaction.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "graph_cache.hpp"
#include "graph_recall.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace anatid {

namespace {

using namespace graph_binding;
using graph::GenerationCache;
using graph::JournalRow;

constexpr int8_t kOpBlob = 9;
constexpr int32_t kHopNeedsLoad = -1;
constexpr int32_t kHopNoGeneration = -2;

enum Arg : idx_t {
	kOp, kSeq, kA, kB, kAKey, kBKey, kKind, kValidFrom, kValidTo, kBlob,
	kSeeds, kHops, kMaxHits, kKinds, kValidAt, kStrict, kArgCount
};

// ---- state ------------------------------------------------------------------------
struct RecallState {
	std::vector<JournalRow> rows;
	bool have_request = false;
	graph::RecallRequest request;
	bool strict = false;
	bool have_blob = false;
	int64_t blob_generation = 0;
	std::string blob;
};

RecallState *&StateOf(duckdb_aggregate_state state) {
	return *reinterpret_cast<RecallState **>(state);
}

idx_t StateSize(duckdb_function_info) {
	return sizeof(RecallState *);
}

void StateInit(duckdb_function_info, duckdb_aggregate_state state) {
	StateOf(state) = new RecallState();
}

void StateDestroy(duckdb_aggregate_state *states, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		delete StateOf(states[i]);
		StateOf(states[i]) = nullptr;
	}
}

// Entity name keys as Python's validate.name_key makes them, for ASCII: whitespace
// runs collapsed to one space, trimmed, lower-cased. Keys from Python pass unchanged.
std::string NameKey(const std::string &name) {
	std::string out;
	bool space = false;
	for (unsigned char c : name) {
		if (c == ' ' || (c >= '\t' && c <= '\r')) {
			space = !out.empty();
			continue;
		}
		if (space) {
			out += ' ';
			space = false;
		}
		out += char(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	return out;
}

int64_t NowMicros() {
	using namespace std::chrono;
	return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

void ReadRequest(duckdb_data_chunk input, idx_t row, RecallState &s) {
	auto arg = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	std::vector<std::string> seeds;
	StringList(arg(kSeeds), row, seeds);
	for (auto &seed : seeds) {
		s.request.seed_keys.push_back(NameKey(seed));
	}
	int32_t hops = 2;
	Scalar(arg(kHops), row, hops);
	s.request.hops = hops;
	int64_t max_hits = 50;
	Scalar(arg(kMaxHits), row, max_hits);
	s.request.limit = max_hits;
	s.request.filter_kinds = StringList(arg(kKinds), row, s.request.kinds);
	int64_t valid_at = 0; // TIMESTAMP is microseconds since the epoch
	s.request.valid_at_us = Scalar(arg(kValidAt), row, valid_at) ? valid_at : NowMicros();
	bool strict = false;
	Scalar(arg(kStrict), row, strict);
	s.strict = strict;
	s.have_request = true;
}

// ---- update / combine ---------------------------------------------------------------
void Update(duckdb_function_info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	auto arg = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	for (idx_t row = 0; row < n; row++) {
		RecallState &s = *StateOf(states[row]);
		if (!s.have_request) {
			ReadRequest(input, row, s);
		}
		int8_t op = 0;
		if (!Scalar(arg(kOp), row, op)) {
			throw std::invalid_argument("anatid_graph_recall: op is NULL");
		}
		if (op == kOpBlob) {
			const char *ptr = nullptr;
			size_t len = 0;
			if (StringView(arg(kBlob), row, ptr, len) && Scalar(arg(kA), row, s.blob_generation)) {
				s.blob.assign(ptr, len);
				s.have_blob = true;
			}
			continue;
		}
		JournalRow r;
		r.op = op;
		Scalar(arg(kSeq), row, r.seq);
		Scalar(arg(kA), row, r.a);
		Scalar(arg(kB), row, r.b);
		String(arg(kAKey), row, r.a_key);
		String(arg(kBKey), row, r.b_key);
		String(arg(kKind), row, r.kind);
		if (!Scalar(arg(kValidFrom), row, r.valid_from_us)) {
			r.valid_from_us = graph::kOpenLow;
		}
		if (!Scalar(arg(kValidTo), row, r.valid_to_us)) {
			r.valid_to_us = graph::kOpenHigh;
		}
		s.rows.push_back(std::move(r));
	}
}

void Combine(duckdb_function_info, duckdb_aggregate_state *source, duckdb_aggregate_state *target, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		RecallState &src = *StateOf(source[i]);
		RecallState &dst = *StateOf(target[i]);
		if (!dst.have_request && src.have_request) {
			dst.request = src.request;
			dst.strict = src.strict;
			dst.have_request = true;
		}
		for (auto &r : src.rows) {
			dst.rows.push_back(std::move(r));
		}
		src.rows.clear();
		if (src.have_blob && !dst.have_blob) {
			dst.blob = std::move(src.blob);
			dst.blob_generation = src.blob_generation;
			dst.have_blob = true;
		}
	}
}

// ---- finalize -------------------------------------------------------------------------
// The hits of one state, or a one-element sentinel list (see the file comment).
std::vector<graph::RecallHit> Answer(RecallState &s) {
	int64_t generation = 0;
	int markers = 0;
	for (const JournalRow &r : s.rows) {
		if (r.op == graph::kOpBase) {
			generation = r.a;
			markers++;
		}
	}
	if (markers > 1) {
		throw std::invalid_argument("anatid_graph_recall: the journal names " + std::to_string(markers) +
		                            " base generations for one tenant; pass one tenant's rows");
	}
	if (markers == 0) {
		if (s.strict) {
			throw std::invalid_argument("anatid_graph_recall: this tenant has no graph generation yet: build one "
			                            "with anatid's maintain_indexes()");
		}
		return {graph::RecallHit {0, kHopNoGeneration}};
	}
	auto &cache = GenerationCache::Instance();
	std::shared_ptr<const graph::Generation> base = cache.Get(generation);
	if (!base && s.have_blob && s.blob_generation == generation) {
		auto parsed = graph::Generation::Parse(s.blob.data(), s.blob.size());
		if (parsed->header.generation_id != generation) {
			throw std::invalid_argument("anatid_graph_recall: the BLOB of generation " + std::to_string(generation) +
			                            " holds generation " + std::to_string(parsed->header.generation_id));
		}
		cache.Put(generation, parsed);
		base = parsed;
	}
	if (!base) {
		if (s.strict) {
			throw std::invalid_argument("anatid_graph_recall: graph generation " + std::to_string(generation) +
			                            " is not loaded in this process and its BLOB was not passed; "
			                            "call anatid.anatid_recall_2hop, which passes it");
		}
		return {graph::RecallHit {generation, kHopNeedsLoad}};
	}
	return graph::Recall(base.get(), std::move(s.rows), s.request);
}

void Finalize(duckdb_function_info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
              idx_t offset) {
	auto *entries = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(result));
	idx_t total = duckdb_list_vector_get_size(result);
	for (idx_t i = 0; i < count; i++) {
		RecallState &s = *StateOf(source[i]);
		const idx_t out = offset + i;
		if (!s.have_request) { // no rows at all: nothing journalled, no generation
			duckdb_vector_ensure_validity_writable(result);
			duckdb_validity_set_row_invalid(duckdb_vector_get_validity(result), out);
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
			if (hits[h].hop >= 0) {
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

void RegisterAnatidGraphRecall(duckdb_connection connection) {
	duckdb_aggregate_function f = duckdb_create_aggregate_function();
	duckdb_aggregate_function_set_name(f, "anatid_graph_recall");
	const duckdb_type scalar_types[kArgCount] = {
	    DUCKDB_TYPE_TINYINT,   DUCKDB_TYPE_BIGINT,    DUCKDB_TYPE_BIGINT,  DUCKDB_TYPE_BIGINT,
	    DUCKDB_TYPE_VARCHAR,   DUCKDB_TYPE_VARCHAR,   DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_TIMESTAMP,
	    DUCKDB_TYPE_TIMESTAMP, DUCKDB_TYPE_BLOB,      DUCKDB_TYPE_LIST,    DUCKDB_TYPE_INTEGER,
	    DUCKDB_TYPE_BIGINT,    DUCKDB_TYPE_LIST,      DUCKDB_TYPE_TIMESTAMP, DUCKDB_TYPE_BOOLEAN};
	duckdb_logical_type varchar = Type(DUCKDB_TYPE_VARCHAR);
	for (idx_t i = 0; i < kArgCount; i++) {
		duckdb_logical_type t =
		    scalar_types[i] == DUCKDB_TYPE_LIST ? duckdb_create_list_type(varchar) : Type(scalar_types[i]);
		duckdb_aggregate_function_add_parameter(f, t);
		duckdb_destroy_logical_type(&t);
	}
	duckdb_logical_type members[3] = {Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_INTEGER), Type(DUCKDB_TYPE_DOUBLE)};
	const char *names[3] = {"memory_id", "hop", "score"};
	duckdb_logical_type hit = duckdb_create_struct_type(members, names, 3);
	duckdb_logical_type list = duckdb_create_list_type(hit);
	duckdb_aggregate_function_set_return_type(f, list);
	duckdb_destroy_logical_type(&list);
	duckdb_destroy_logical_type(&hit);
	for (auto &m : members) {
		duckdb_destroy_logical_type(&m);
	}
	duckdb_destroy_logical_type(&varchar);
	duckdb_aggregate_function_set_functions(f, StateSize, GuardAggregateInit<StateInit>, GuardAggregateUpdate<Update>,
	                                        GuardAggregateCombine<Combine>, GuardAggregateFinalize<Finalize>);
	duckdb_aggregate_function_set_destructor(f, StateDestroy);
	duckdb_aggregate_function_set_special_handling(f); // journal rows carry NULLs
	const duckdb_state state = duckdb_register_aggregate_function(connection, f);
	duckdb_destroy_aggregate_function(&f);
	if (state == DuckDBError) {
		throw std::runtime_error("anatid: could not register aggregate function anatid_graph_recall");
	}
}

} // namespace anatid
