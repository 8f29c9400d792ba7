// anatid_graph_load(generation_id BIGINT, nonce BIGINT, blob BLOB) -> BIGINT
//
// Parses a stored graph generation into the process-wide cache (a no-op when it is
// already resident) and returns its resident bytes. The Python engine calls it after
// anatid_graph_recall reported a miss; anatid.anatid_recall_2hop does not need it (it
// passes the BLOB to anatid_graph_recall itself). The cache key is (generation_id,
// nonce): ids are unique per file only (src/graph_cache.hpp). Loading is the function's
// purpose, so it is volatile: never folded, never skipped.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "generation_scalar.hpp"
#include "graph_cache.hpp"

#include <stdexcept>
#include <string>

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	duckdb_vector blobs = duckdb_data_chunk_get_vector(input, 2);
	MapRows<int64_t>(input, output, [&](idx_t row) {
		graph::CacheKey key {0, 0};
		if (!GraphKeyArg(input, row, key)) {
			throw std::invalid_argument("anatid_graph_load: generation_id and nonce must not be NULL");
		}
		const char *blob = nullptr;
		size_t len = 0;
		StringView(blobs, row, blob, len); // NULL leaves blob null: fine when resident
		auto resident = ResidentOrParse(key, blob, len, "anatid_graph_load");
		if (!resident) {
			throw std::invalid_argument("anatid_graph_load: the BLOB of generation " + std::to_string(key.id) +
			                            " is NULL");
		}
		return int64_t(resident->ByteSize());
	});
}

} // namespace

void RegisterAnatidGraphLoad(duckdb_connection connection) {
	RegisterVolatileScalar(connection, "anatid_graph_load", {DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BLOB},
	                       DUCKDB_TYPE_BIGINT, GuardScalar<Execute>);
}

} // namespace anatid
