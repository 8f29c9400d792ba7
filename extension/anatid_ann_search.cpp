// anatid_ann_search(generation_id BIGINT, nonce BIGINT, query DOUBLE[], count INTEGER, ef INTEGER)
//   -> LIST(STRUCT(memory_id BIGINT, vf BIGINT, vt BIGINT, norm DOUBLE, embedding FLOAT[]))
//
// The `count` best candidates of an HNSW search of width ef (raised to count) in a resident
// ANN generation, best first, each with the row as it was at build time: the stored vector,
// norm and validity. Candidates carry no score on purpose: python/anatid/indexes/ann.py
// feeds them to anatid_hybrid_recall as rows of kind 5, which scores them exactly (the same
// double-precision cosine as the exact arm) and lets newer vector-journal rows override them.
// A generation that is not resident is an error naming the fix (anatid_ann_load); a NULL
// query gives NULL.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "hnsw_cache.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace anatid {

namespace {

using namespace graph_binding;

enum Arg : idx_t { kGen, kNonce, kQuery, kCount, kEf };

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	auto vec = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	duckdb_vector qv = vec(kQuery);
	const auto *q_entries = static_cast<const duckdb_list_entry *>(duckdb_vector_get_data(qv));
	duckdb_vector q_child = duckdb_list_vector_get_child(qv);
	const double *q_values = static_cast<const double *>(duckdb_vector_get_data(q_child));
	auto *entries = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(output));
	auto &cache = AnnCache::Instance();
	std::vector<double> query;
	for (idx_t row = 0; row < n; row++) {
		AnnKey key {0, 0};
		int32_t count = 0, ef = 0;
		if (!Scalar(vec(kGen), row, key.gen_id) || !Scalar(vec(kNonce), row, key.nonce) ||
		    !Scalar(vec(kCount), row, count) || !Scalar(vec(kEf), row, ef)) {
			throw std::invalid_argument("anatid_ann_search: generation_id, nonce, count and ef must not be NULL");
		}
		if (count < 1 || count > 100000 || ef < 1 || ef > 100000) {
			throw std::invalid_argument("anatid_ann_search: count and ef must be 1..100000");
		}
		const idx_t total = duckdb_list_vector_get_size(output);
		if (!IsValid(qv, row)) {
			duckdb_vector_ensure_validity_writable(output);
			duckdb_validity_set_row_invalid(duckdb_vector_get_validity(output), row);
			entries[row] = duckdb_list_entry {total, 0};
			continue;
		}
		auto index = cache.Get(key);
		if (!index) {
			throw std::runtime_error("anatid_ann_search: ANN generation " + std::to_string(key.gen_id) +
			                         " is not resident: call anatid_ann_load(generation_id, nonce, payload) first");
		}
		const duckdb_list_entry qe = q_entries[row];
		if (qe.length != index->Dim()) {
			throw std::invalid_argument("anatid_ann_search: the query has " + std::to_string(qe.length) +
			                            " dimensions, the index " + std::to_string(index->Dim()));
		}
		query.assign(q_values + qe.offset, q_values + qe.offset + qe.length);
		for (idx_t i = qe.offset; i < qe.offset + qe.length; i++) {
			if (!IsValid(q_child, i)) {
				throw std::invalid_argument("anatid_ann_search: NULL element in the query");
			}
		}
		const auto hits = index->Search(query.data(), size_t(count), size_t(ef));
		duckdb_list_vector_reserve(output, total + hits.size());
		duckdb_list_vector_set_size(output, total + hits.size());
		duckdb_vector child = duckdb_list_vector_get_child(output);
		auto *ids = static_cast<int64_t *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 0)));
		auto *vfs = static_cast<int64_t *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 1)));
		auto *vts = static_cast<int64_t *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 2)));
		auto *norms = static_cast<double *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 3)));
		duckdb_vector emb = duckdb_struct_vector_get_child(child, 4);
		const size_t dim = index->Dim();
		const idx_t floats_at = duckdb_list_vector_get_size(emb);
		duckdb_list_vector_reserve(emb, floats_at + hits.size() * dim);
		duckdb_list_vector_set_size(emb, floats_at + hits.size() * dim);
		auto *emb_entries = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(emb));
		auto *floats = static_cast<float *>(duckdb_vector_get_data(duckdb_list_vector_get_child(emb)));
		for (size_t h = 0; h < hits.size(); h++) {
			const HnswRow &r = index->Row(hits[h].row);
			const idx_t at = total + h;
			ids[at] = r.id;
			vfs[at] = r.vf;
			vts[at] = r.vt;
			norms[at] = r.norm;
			emb_entries[at] = duckdb_list_entry {floats_at + h * dim, dim};
			std::memcpy(floats + floats_at + h * dim, index->Vector(hits[h].row), dim * sizeof(float));
		}
		entries[row] = duckdb_list_entry {total, hits.size()};
	}
}

} // namespace

void RegisterAnatidAnnSearch(duckdb_connection connection) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_ann_search");
	for (duckdb_logical_type p : {Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT), ListOf(DUCKDB_TYPE_DOUBLE),
	                              Type(DUCKDB_TYPE_INTEGER), Type(DUCKDB_TYPE_INTEGER)}) {
		duckdb_scalar_function_add_parameter(f, p);
		duckdb_destroy_logical_type(&p);
	}
	duckdb_logical_type result =
	    ListOfStruct({{"memory_id", Type(DUCKDB_TYPE_BIGINT)}, {"vf", Type(DUCKDB_TYPE_BIGINT)},
	                  {"vt", Type(DUCKDB_TYPE_BIGINT)}, {"norm", Type(DUCKDB_TYPE_DOUBLE)},
	                  {"embedding", ListOf(DUCKDB_TYPE_FLOAT)}});
	duckdb_scalar_function_set_return_type(f, result);
	duckdb_destroy_logical_type(&result);
	// Volatile: the answer depends on what this process has resident (and a miss is an error).
	duckdb_scalar_function_set_volatile(f);
	duckdb_scalar_function_set_special_handling(f);
	duckdb_scalar_function_set_function(f, GuardScalar<Execute>);
	RegisterScalar(connection, f, "anatid_ann_search");
}

} // namespace anatid
