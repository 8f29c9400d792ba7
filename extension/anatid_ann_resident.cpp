// anatid_ann_resident(generation_id BIGINT, nonce BIGINT) -> BOOLEAN
//
// Whether this process holds the ANN generation parsed. ann.py filters anatid_ann_gen with
// it before calling anatid_ann_load, so the large BLOB column is read only on a miss.
// Volatile: the answer changes as the cache loads and evicts.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "generation_scalar.hpp"
#include "hnsw_cache.hpp"

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	auto &cache = AnnCache::Instance();
	MapRows<bool>(input, output, [&](idx_t row) {
		AnnKey key {0, 0};
		return AnnKeyArg(input, row, key) && cache.Contains(key);
	});
}

} // namespace

void RegisterAnatidAnnResident(duckdb_connection connection) {
	RegisterVolatileScalar(connection, "anatid_ann_resident", {DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_BOOLEAN, GuardScalar<Execute>);
}

} // namespace anatid
