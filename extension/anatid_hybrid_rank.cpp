// anatid_hybrid_rank(...) -> LIST(STRUCT(memory_id, score, rv, rt, rg, hop))
//
// The native half of anatid.anatid_hybrid (the table macro in anatid_hybrid_sql.hpp
// gathers these arguments from the caller's tables in the caller's transaction).
// anatid_hybrid_rank takes the base generations (BLOB parts, NULL when cached), the
// journal rows, the query and the graph arm's ranked ids, runs the core
// (src/hybrid.hpp) and returns the fused top k. anatid_hybrid_cached
// (anatid_hybrid_cached.cpp) lets the macro skip reading generation BLOBs that this
// process has already parsed.
#include "anatid_extension.hpp"
#include "capi_util.hpp"
#include "hybrid.hpp"
#include "hybrid_hits.hpp"
#include "logical_types.hpp"
#include "text_journal.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace anatid {

namespace {

// ---- argument layout ------------------------------------------------------------
enum Arg : idx_t {
	kTextGen, kTextNonce, kTextParts, kQueryTerms, kTextTouched,
	kDocId, kDocLen, kDocFrom, kDocTo, kDocPostings, kTextDocCount,
	kVecGen, kVecNonce, kVecParts, kQueryVec, kQueryNorm, kVecTouched,
	kJvecId, kJvecFrom, kJvecTo, kJvecNorm, kJvecValues, kVecRowCount,
	kGraphId, kGraphHop,
	kValidAt, kDepth, kK, kWv, kWt, kWg, kTextCeiling, kVecCeiling,
	kArgCount
};

struct ArgSpec {
	const char *name;
	duckdb_type type;  // scalar type, or the element type when list_depth > 0
	int list_depth;
};

const ArgSpec kArgs[kArgCount] = {
    {"text_gen", DUCKDB_TYPE_BIGINT, 0},     {"text_nonce", DUCKDB_TYPE_BIGINT, 0},
    {"text_parts", DUCKDB_TYPE_BLOB, 1},     {"query_terms", DUCKDB_TYPE_VARCHAR, 1},
    {"text_touched", DUCKDB_TYPE_BIGINT, 1}, {"doc_id", DUCKDB_TYPE_BIGINT, 1},
    {"doc_len", DUCKDB_TYPE_INTEGER, 1},     {"doc_from", DUCKDB_TYPE_BIGINT, 1},
    {"doc_to", DUCKDB_TYPE_BIGINT, 1},       {"doc_postings", DUCKDB_TYPE_VARCHAR, 1},
    {"text_doc_count", DUCKDB_TYPE_BIGINT, 0},
    {"vec_gen", DUCKDB_TYPE_BIGINT, 0},      {"vec_nonce", DUCKDB_TYPE_BIGINT, 0},
    {"vec_parts", DUCKDB_TYPE_BLOB, 1},      {"query_vec", DUCKDB_TYPE_DOUBLE, 1},
    {"query_norm", DUCKDB_TYPE_DOUBLE, 0},   {"vec_touched", DUCKDB_TYPE_BIGINT, 1},
    {"jvec_id", DUCKDB_TYPE_BIGINT, 1},      {"jvec_from", DUCKDB_TYPE_BIGINT, 1},
    {"jvec_to", DUCKDB_TYPE_BIGINT, 1},      {"jvec_norm", DUCKDB_TYPE_DOUBLE, 1},
    {"jvec_values", DUCKDB_TYPE_FLOAT, 2},   {"vec_row_count", DUCKDB_TYPE_BIGINT, 0},
    {"graph_id", DUCKDB_TYPE_BIGINT, 1},
    {"graph_hop", DUCKDB_TYPE_INTEGER, 1},   {"valid_at", DUCKDB_TYPE_BIGINT, 0},
    {"depth", DUCKDB_TYPE_BIGINT, 0},        {"k", DUCKDB_TYPE_BIGINT, 0},
    {"wv", DUCKDB_TYPE_DOUBLE, 0},           {"wt", DUCKDB_TYPE_DOUBLE, 0},
    {"wg", DUCKDB_TYPE_DOUBLE, 0},           {"text_ceiling", DUCKDB_TYPE_BIGINT, 0},
    {"vector_ceiling", DUCKDB_TYPE_BIGINT, 0},
};

// ---- reading one row's arguments ------------------------------------------------
// IsValid, Scalar and ListSlice: capi_util.hpp

template <class T>
std::vector<T> List(duckdb_vector v, idx_t row, const char *name) {
	idx_t offset = 0, length = 0;
	std::vector<T> out;
	if (!ListSlice(v, row, offset, length)) {
		return out;
	}
	duckdb_vector child = duckdb_list_vector_get_child(v);
	const T *data = static_cast<const T *>(duckdb_vector_get_data(child));
	out.reserve(length);
	for (idx_t i = offset; i < offset + length; i++) {
		if (!IsValid(child, i)) {
			throw std::invalid_argument(std::string("anatid_hybrid_rank: NULL element in ") + name);
		}
		out.push_back(data[i]);
	}
	return out;
}

// Strings and BLOBs as views into DuckDB's vectors (valid for this call).
std::vector<std::string_view> StringList(duckdb_vector v, idx_t row, const char *name) {
	idx_t offset = 0, length = 0;
	std::vector<std::string_view> out;
	if (!ListSlice(v, row, offset, length)) {
		return out;
	}
	duckdb_vector child = duckdb_list_vector_get_child(v);
	auto *data = static_cast<duckdb_string_t *>(duckdb_vector_get_data(child));
	out.reserve(length);
	for (idx_t i = offset; i < offset + length; i++) {
		if (!IsValid(child, i)) {
			throw std::invalid_argument(std::string("anatid_hybrid_rank: NULL element in ") + name);
		}
		out.emplace_back(duckdb_string_t_data(&data[i]), duckdb_string_t_length(data[i]));
	}
	return out;
}

void CheckSameLength(size_t a, size_t b, const char *name) {
	if (a != b) {
		throw std::invalid_argument(std::string("anatid_hybrid_rank: ") + name + " lists differ in length");
	}
}

HybridRequest ReadRequest(duckdb_data_chunk input, idx_t row, std::shared_ptr<const TextGeneration> &base) {
	auto arg = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	HybridRequest req;
	int64_t depth = 50, k = 10, valid_at = 0;
	if (!Scalar(arg(kValidAt), row, valid_at)) {
		throw std::invalid_argument("anatid_hybrid_rank: valid_at is NULL");
	}
	Scalar(arg(kDepth), row, depth);
	Scalar(arg(kK), row, k);
	if (k < 1 || depth < 1) {
		throw std::invalid_argument("anatid_hybrid_rank: k and depth must be positive");
	}
	depth = std::max(depth, k);
	Scalar(arg(kWv), row, req.weights.vector);
	Scalar(arg(kWt), row, req.weights.text);
	Scalar(arg(kWg), row, req.weights.graph);
	req.k = static_cast<size_t>(k);
	if (!Scalar(arg(kTextCeiling), row, req.text_ceiling)) {
		req.text_ceiling = INT64_MAX;
	}
	if (!Scalar(arg(kVecCeiling), row, req.vector_ceiling)) {
		req.vector_ceiling = INT64_MAX;
	}

	// text arm: runs when the query has terms
	auto terms = StringList(arg(kQueryTerms), row, "query_terms");
	req.use_text = !terms.empty();
	if (req.use_text) {
		Bm25Input &t = req.text;
		t.terms = std::move(terms);
		t.valid_at = valid_at;
		t.depth = static_cast<size_t>(depth);
		GenerationKey key {0, 0};
		if (Scalar(arg(kTextGen), row, key.id)) {
			Scalar(arg(kTextNonce), row, key.nonce);
			idx_t off, len;
			const bool have = ListSlice(arg(kTextParts), row, off, len);
			auto parts = StringList(arg(kTextParts), row, "text_parts");
			req.text_has_base = true;
			base = TextGenerationFor(key, parts, have); // held by the caller for this call
			t.base = base.get();
		}
		t.touched = List<int64_t>(arg(kTextTouched), row, "text_touched");
		auto ids = List<int64_t>(arg(kDocId), row, "doc_id");
		auto lens = List<int32_t>(arg(kDocLen), row, "doc_len");
		auto from = List<int64_t>(arg(kDocFrom), row, "doc_from");
		auto to = List<int64_t>(arg(kDocTo), row, "doc_to");
		CheckSameLength(ids.size(), lens.size(), "doc");
		CheckSameLength(ids.size(), from.size(), "doc");
		CheckSameLength(ids.size(), to.size(), "doc");
		for (size_t i = 0; i < ids.size(); i++) {
			t.docs.push_back(JournalDoc {ids[i], lens[i], from[i], to[i]});
		}
		// postings of the journalled documents ("term:tf ..." strings, src/text_journal.hpp),
		// kept only for the query's terms; a term view points into the query terms
		std::unordered_map<std::string_view, std::string_view> wanted;
		for (std::string_view term : t.terms) {
			wanted.emplace(term, term);
		}
		duckdb_vector postings = arg(kDocPostings);
		idx_t poff = 0, plen = 0;
		if (ListSlice(postings, row, poff, plen)) {
			CheckSameLength(plen, ids.size(), "doc_postings");
			duckdb_vector inner = duckdb_list_vector_get_child(postings);
			auto *strings = static_cast<duckdb_string_t *>(duckdb_vector_get_data(inner));
			for (idx_t i = 0; i < plen; i++) {
				if (!IsValid(inner, poff + i)) {
					continue; // a document with no tokens
				}
				const std::string_view text(duckdb_string_t_data(&strings[poff + i]),
				                            duckdb_string_t_length(strings[poff + i]));
				text_journal::ForEachPosting(text, [&](std::string_view term, int32_t tf) {
					auto w = wanted.find(term);
					if (w != wanted.end()) {
						t.postings.push_back(JournalPosting {ids[i], w->second, tf});
					}
				});
			}
		}
		int64_t expected = 0;
		if (!req.text_has_base && Scalar(arg(kTextDocCount), row, expected) &&
		    expected > static_cast<int64_t>(t.docs.size())) {
			throw std::runtime_error("anatid: tenant has " + std::to_string(expected) +
			                         " indexed documents but no text generation, and only " +
			                         std::to_string(t.docs.size()) +
			                         " of them are journalled (the rest were written by plain SQL): "
			                         "run rebuild_fts_index() (or maintain_indexes()) once");
		}
	}
	return req;
}

// Vector arm arguments; kept apart because the journal's float lists need owners.
void ReadVectorArm(duckdb_data_chunk input, idx_t row, HybridRequest &req, std::vector<double> &query,
                   std::shared_ptr<const VectorGeneration> &base) {
	auto arg = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	query = List<double>(arg(kQueryVec), row, "query_vec");
	req.use_vector = !query.empty();
	if (!req.use_vector) {
		return;
	}
	CosineInput &v = req.vector;
	v.query = query.data();
	v.dim = query.size();
	if (!Scalar(arg(kQueryNorm), row, v.query_norm)) {
		throw std::invalid_argument("anatid_hybrid_rank: query_norm is NULL");
	}
	Scalar(arg(kValidAt), row, v.valid_at);
	int64_t depth = 50, k = 10;
	Scalar(arg(kDepth), row, depth);
	Scalar(arg(kK), row, k);
	v.depth = static_cast<size_t>(std::max(depth, k));
	GenerationKey key {0, 0};
	if (Scalar(arg(kVecGen), row, key.id)) {
		Scalar(arg(kVecNonce), row, key.nonce);
		idx_t off, len;
		const bool have = ListSlice(arg(kVecParts), row, off, len);
		base = VectorGenerationFor(key, StringList(arg(kVecParts), row, "vec_parts"), have);
		v.base = base.get();
	}
	v.touched = List<int64_t>(arg(kVecTouched), row, "vec_touched");
	auto ids = List<int64_t>(arg(kJvecId), row, "jvec_id");
	auto from = List<int64_t>(arg(kJvecFrom), row, "jvec_from");
	auto to = List<int64_t>(arg(kJvecTo), row, "jvec_to");
	auto norms = List<double>(arg(kJvecNorm), row, "jvec_norm");
	CheckSameLength(ids.size(), from.size(), "jvec");
	CheckSameLength(ids.size(), to.size(), "jvec");
	CheckSameLength(ids.size(), norms.size(), "jvec");
	// FLOAT[][]: outer list -> inner lists -> floats, contiguous per inner list
	duckdb_vector outer = arg(kJvecValues);
	idx_t off = 0, len = 0;
	if (!ListSlice(outer, row, off, len)) {
		len = 0;
	}
	CheckSameLength(len, ids.size(), "jvec_values/jvec_id");
	duckdb_vector inner = duckdb_list_vector_get_child(outer);
	const auto *inner_entries = static_cast<const duckdb_list_entry *>(duckdb_vector_get_data(inner));
	const float *floats = static_cast<const float *>(duckdb_vector_get_data(duckdb_list_vector_get_child(inner)));
	for (idx_t i = 0; i < len; i++) {
		const duckdb_list_entry e = inner_entries[off + i];
		if (e.length != v.dim) {
			throw std::invalid_argument("anatid_hybrid_rank: a stored vector has " + std::to_string(e.length) +
			                            " dimensions, the query " + std::to_string(v.dim));
		}
		v.vectors.push_back(JournalVector {ids[i], from[i], to[i], norms[i], floats + e.offset});
	}
	int64_t expected = 0;
	if (!v.base && Scalar(arg(kVecRowCount), row, expected) && expected > static_cast<int64_t>(v.vectors.size())) {
		throw std::runtime_error("anatid: tenant has " + std::to_string(expected) +
		                         " embeddings but no vector generation, and only " + std::to_string(v.vectors.size()) +
		                         " of them are journalled (the rest were written by plain SQL): "
		                         "run rebuild_vector_index() (or maintain_indexes()) once");
	}
}

// ---- execute ----------------------------------------------------------------------
void RankExecute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t rows = duckdb_data_chunk_get_size(input);
	auto *out_lists = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(output));
	idx_t total = duckdb_list_vector_get_size(output);
	for (idx_t row = 0; row < rows; row++) {
		std::shared_ptr<const TextGeneration> tbase;
		HybridRequest req = ReadRequest(input, row, tbase);
		std::vector<double> query;
		std::shared_ptr<const VectorGeneration> vbase;
		ReadVectorArm(input, row, req, query, vbase);
		auto gids = List<int64_t>(duckdb_data_chunk_get_vector(input, kGraphId), row, "graph_id");
		auto ghops = List<int32_t>(duckdb_data_chunk_get_vector(input, kGraphHop), row, "graph_hop");
		CheckSameLength(gids.size(), ghops.size(), "graph");
		req.use_graph = !gids.empty();
		req.graph_ids = std::move(gids);
		req.graph_hops = std::move(ghops);
		const std::vector<HybridHit> hits = HybridRecall(req);

		duckdb_list_vector_reserve(output, total + hits.size());
		duckdb_list_vector_set_size(output, total + hits.size());
		const HybridHitWriter writer(duckdb_list_vector_get_child(output));
		for (size_t i = 0; i < hits.size(); i++) {
			writer.Write(total + i, hits[i]);
		}
		out_lists[row].offset = total;
		out_lists[row].length = hits.size();
		total += hits.size();
	}
}

// ---- registration -----------------------------------------------------------------
duckdb_logical_type MakeType(duckdb_type type, int list_depth) {
	duckdb_logical_type t = duckdb_create_logical_type(type);
	for (int i = 0; i < list_depth; i++) {
		duckdb_logical_type list = duckdb_create_list_type(t);
		duckdb_destroy_logical_type(&t);
		t = list;
	}
	return t;
}

} // namespace

void RegisterAnatidHybridRank(duckdb_connection connection) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_hybrid_rank");
	for (const ArgSpec &a : kArgs) {
		duckdb_logical_type t = MakeType(a.type, a.list_depth);
		duckdb_scalar_function_add_parameter(f, t);
		duckdb_destroy_logical_type(&t);
	}
	duckdb_logical_type result = ListOfStruct(HybridHitFields());
	duckdb_scalar_function_set_return_type(f, result);
	duckdb_destroy_logical_type(&result);
	duckdb_scalar_function_set_special_handling(f); // NULL arguments mean "absent", not "NULL result"
	duckdb_scalar_function_set_volatile(f);         // reads the process-wide generation cache
	duckdb_scalar_function_set_function(f, GuardScalar<RankExecute>);
	RegisterScalar(connection, f, "anatid_hybrid_rank");
}

} // namespace anatid
