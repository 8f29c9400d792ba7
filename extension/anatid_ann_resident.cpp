// anatid_ann_resident(generation_id BIGINT, nonce BIGINT) -> BOOLEAN
//
// Whether this process holds the ANN generation parsed. ann.py filters anatid_ann_gen with
// it before calling anatid_ann_load, so the large BLOB column is read only on a miss.
// Volatile: the answer changes as the cache loads and evicts.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "hnsw_cache.hpp"

#include <stdexcept>

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	duckdb_vector ids = duckdb_data_chunk_get_vector(input, 0);
	duckdb_vector nonces = duckdb_data_chunk_get_vector(input, 1);
	auto *out = static_cast<bool *>(duckdb_vector_get_data(output));
	auto &cache = AnnCache::Instance();
	for (idx_t row = 0; row < n; row++) {
		AnnKey key {0, 0};
		out[row] = Scalar(ids, row, key.gen_id) && Scalar(nonces, row, key.nonce) && cache.Contains(key);
	}
}

} // namespace

void RegisterAnatidAnnResident(duckdb_connection connection) {
	RegisterVolatileScalar(connection, "anatid_ann_resident", {DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_BOOLEAN, GuardScalar<Execute>);
}

} // namespace anatid
