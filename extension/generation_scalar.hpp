// The shape shared by the small scalars over cached generations (anatid_graph_load,
// anatid_graph_resident, anatid_ann_load, anatid_ann_resident, anatid_hybrid_cached): one
// answer per row, from the generation key in the leading columns. The loop and the key
// reading live here so each of those files holds only what it answers and its errors.
#pragma once

#include "anatid_extension.hpp"
#include "capi_util.hpp"
#include "graph_cache.hpp"
#include "hnsw_cache.hpp"

#include <cstdint>

namespace anatid {
namespace graph_binding {

// Stores fn(row) for every row of `input` in `output`, whose C type is Out (bool for
// BOOLEAN, int64_t for BIGINT).
template <class Out, class Fn>
void MapRows(duckdb_data_chunk input, duckdb_vector output, Fn &&fn) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	auto *out = static_cast<Out *>(duckdb_vector_get_data(output));
	for (idx_t row = 0; row < n; row++) {
		out[row] = fn(row);
	}
}

// A graph generation's (generation_id, nonce) from columns 0 and 1; false when either is NULL.
inline bool GraphKeyArg(duckdb_data_chunk input, idx_t row, graph::CacheKey &key) {
	return Scalar(duckdb_data_chunk_get_vector(input, 0), row, key.id) &&
	       Scalar(duckdb_data_chunk_get_vector(input, 1), row, key.nonce);
}

// An ANN generation's (generation_id, nonce) from columns 0 and 1; false when either is NULL.
inline bool AnnKeyArg(duckdb_data_chunk input, idx_t row, AnnKey &key) {
	return Scalar(duckdb_data_chunk_get_vector(input, 0), row, key.gen_id) &&
	       Scalar(duckdb_data_chunk_get_vector(input, 1), row, key.nonce);
}

} // namespace graph_binding
} // namespace anatid
