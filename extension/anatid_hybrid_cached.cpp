// anatid_hybrid_cached(kind VARCHAR, generation BIGINT, nonce BIGINT) -> BOOLEAN
//
// Whether this process holds the text or vector generation parsed (src/hybrid.hpp), so
// anatid.anatid_hybrid (anatid_hybrid_sql.hpp) reads a generation's BLOB parts only on a
// miss. A NULL argument answers false. Volatile: the answer changes as the cache fills.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "generation_scalar.hpp"
#include "hybrid.hpp"

#include <stdexcept>
#include <string_view>

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	duckdb_vector kinds = duckdb_data_chunk_get_vector(input, 0);
	duckdb_vector gens = duckdb_data_chunk_get_vector(input, 1);
	duckdb_vector nonces = duckdb_data_chunk_get_vector(input, 2);
	auto *kind_data = static_cast<duckdb_string_t *>(duckdb_vector_get_data(kinds));
	MapRows<bool>(input, output, [&](idx_t row) {
		GenerationKey key {0, 0};
		if (!IsValid(kinds, row) || !Scalar(gens, row, key.id) || !Scalar(nonces, row, key.nonce)) {
			return false;
		}
		const std::string_view kind(duckdb_string_t_data(&kind_data[row]), duckdb_string_t_length(kind_data[row]));
		if (kind == "text") {
			return HasGeneration(GenerationKind::kText, key);
		}
		if (kind == "vector") {
			return HasGeneration(GenerationKind::kVector, key);
		}
		throw std::invalid_argument("anatid_hybrid_cached: kind must be 'text' or 'vector'");
	});
}

} // namespace

void RegisterAnatidHybridCached(duckdb_connection connection) {
	RegisterVolatileScalar(connection, "anatid_hybrid_cached",
	                       {DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_BOOLEAN,
	                       GuardScalar<Execute>, NullArguments::kReachFunction);
}

} // namespace anatid
