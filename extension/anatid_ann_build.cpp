// anatid_ann_build(memory_id BIGINT, vf BIGINT, vt BIGINT, norm DOUBLE, embedding FLOAT[],
//                  m INTEGER, ef_construction INTEGER, seed BIGINT) -> BLOB
//
// An aggregate over one tenant's vector rows (python/anatid/indexes/ann.py selects the
// same rows as the vector generation), returning the serialized HNSW index (src/hnsw.hpp)
// that anatid_ann_load parses. Rows may arrive in any order and from several threads: the
// core sorts by memory id and builds from a seeded level generator in fixed batches on every
// core (src/hnsw.hpp), so equal input gives an equal BLOB whatever the thread count. The BLOB's
// header carries the search widths the build calibrated (anatid_ann_info reads them).
// m, ef_construction and seed must be constant.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "boxed_aggregate.hpp"
#include "capi_util.hpp"
#include "hnsw.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace anatid {

namespace {

using namespace graph_binding;

enum Arg : idx_t { kId, kVf, kVt, kNorm, kEmbedding, kM, kEf, kSeed, kArgCount };

struct State {
	bool have_params = false;
	HnswParams params;
	size_t dim = 0;
	std::vector<HnswRow> rows;
	std::vector<float> vectors;
};

using Boxed = BoxedState<State>;

void Update(duckdb_function_info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	auto vec = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	duckdb_vector emb = vec(kEmbedding);
	const auto *entries = static_cast<const duckdb_list_entry *>(duckdb_vector_get_data(emb));
	duckdb_vector child = duckdb_list_vector_get_child(emb);
	const float *values = static_cast<const float *>(duckdb_vector_get_data(child));
	for (idx_t row = 0; row < n; row++) {
		State &s = *Boxed::Of(states[row]);
		if (!s.have_params) {
			int32_t m = 0, ef = 0;
			int64_t seed = 0;
			if (!Scalar(vec(kM), row, m) || !Scalar(vec(kEf), row, ef) || !Scalar(vec(kSeed), row, seed)) {
				throw std::invalid_argument("anatid_ann_build: m, ef_construction and seed must not be NULL");
			}
			if (m < 2 || m > 256 || ef < 1 || ef > 100000) {
				throw std::invalid_argument("anatid_ann_build: m must be 2..256 and ef_construction 1..100000");
			}
			s.params = HnswParams {uint32_t(m), uint32_t(ef), uint64_t(seed)};
			s.have_params = true;
		}
		HnswRow r;
		if (!Scalar(vec(kId), row, r.id) || !Scalar(vec(kVf), row, r.vf) || !Scalar(vec(kVt), row, r.vt) ||
		    !Scalar(vec(kNorm), row, r.norm) || !IsValid(emb, row)) {
			throw std::invalid_argument("anatid_ann_build: memory_id, vf, vt, norm and embedding must not be NULL");
		}
		const duckdb_list_entry e = entries[row];
		if (s.dim == 0) {
			s.dim = e.length;
		}
		if (e.length != s.dim || e.length == 0) {
			throw std::invalid_argument("anatid_ann_build: memory " + std::to_string(r.id) + " has " +
			                            std::to_string(e.length) + " dimensions, others " + std::to_string(s.dim));
		}
		for (idx_t i = e.offset; i < e.offset + e.length; i++) {
			if (!IsValid(child, i)) {
				throw std::invalid_argument("anatid_ann_build: NULL element in the embedding of " +
				                            std::to_string(r.id));
			}
		}
		s.vectors.insert(s.vectors.end(), values + e.offset, values + e.offset + e.length);
		s.rows.push_back(r);
	}
}

void Combine(duckdb_function_info, duckdb_aggregate_state *source, duckdb_aggregate_state *target, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		State &src = *Boxed::Of(source[i]);
		State &dst = *Boxed::Of(target[i]);
		if (src.rows.empty() && !src.have_params) {
			continue;
		}
		if (!dst.have_params) {
			dst.params = src.params;
			dst.have_params = src.have_params;
		}
		if (dst.dim == 0) {
			dst.dim = src.dim;
		}
		if (src.dim != 0 && src.dim != dst.dim) {
			throw std::invalid_argument("anatid_ann_build: embeddings of " + std::to_string(src.dim) + " and " +
			                            std::to_string(dst.dim) + " dimensions");
		}
		dst.rows.insert(dst.rows.end(), src.rows.begin(), src.rows.end());
		dst.vectors.insert(dst.vectors.end(), src.vectors.begin(), src.vectors.end());
		src.rows.clear();
		src.vectors.clear();
	}
}

void Finalize(duckdb_function_info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
              idx_t offset) {
	for (idx_t i = 0; i < count; i++) {
		State &s = *Boxed::Of(source[i]);
		if (!s.have_params) { // no rows: no index
			SetNull(result, offset + i);
			continue;
		}
		const std::string blob = HnswIndex::Build(s.dim, std::move(s.rows), s.vectors, s.params)->Serialize();
		duckdb_vector_assign_string_element_len(result, offset + i, blob.data(), blob.size());
	}
}

} // namespace

void RegisterAnatidAnnBuild(duckdb_connection connection) {
	duckdb_aggregate_function f = MakeBoxedAggregate<State, Update, Combine, Finalize>(
	    "anatid_ann_build",
	    {Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_DOUBLE),
	     ListOf(DUCKDB_TYPE_FLOAT), Type(DUCKDB_TYPE_INTEGER), Type(DUCKDB_TYPE_INTEGER), Type(DUCKDB_TYPE_BIGINT)},
	    Type(DUCKDB_TYPE_BLOB));
	RegisterAggregate(connection, f, "anatid_ann_build");
}

} // namespace anatid
