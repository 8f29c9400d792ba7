// anatid_ann_load(generation_id BIGINT, nonce BIGINT, blob BLOB) -> BIGINT
//
// Parses a stored ANN generation (src/hnsw.hpp) into the process-wide cache (a no-op when
// it is resident) and returns its resident bytes. A damaged BLOB is an error naming the
// generation; python/anatid/indexes/ann.py then answers exactly and reports it. Volatile:
// loading is the purpose, so it is never folded or skipped.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "generation_scalar.hpp"
#include "hnsw_cache.hpp"

#include <stdexcept>
#include <string>

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	duckdb_vector blobs = duckdb_data_chunk_get_vector(input, 2);
	auto &cache = AnnCache::Instance();
	MapRows<int64_t>(input, output, [&](idx_t row) {
		AnnKey key {0, 0};
		if (!AnnKeyArg(input, row, key)) {
			throw std::invalid_argument("anatid_ann_load: generation_id and nonce must not be NULL");
		}
		auto resident = cache.Get(key);
		if (!resident) {
			const char *ptr = nullptr;
			size_t len = 0;
			if (!StringView(blobs, row, ptr, len)) {
				throw std::invalid_argument("anatid_ann_load: the BLOB of ANN generation " +
				                            std::to_string(key.gen_id) + " is NULL");
			}
			try {
				resident = HnswIndex::Deserialize(std::string_view(ptr, len));
			} catch (const std::runtime_error &e) {
				throw std::runtime_error("anatid_ann_load: ANN generation " + std::to_string(key.gen_id) + ": " +
				                         e.what() + " (rebuild it with build_ann_index())");
			}
			cache.Put(key, resident);
		}
		return int64_t(resident->MemoryBytes());
	});
}

} // namespace

void RegisterAnatidAnnLoad(duckdb_connection connection) {
	RegisterVolatileScalar(connection, "anatid_ann_load", {DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BLOB}, DUCKDB_TYPE_BIGINT, GuardScalar<Execute>);
}

} // namespace anatid
