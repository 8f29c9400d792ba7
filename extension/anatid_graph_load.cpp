// anatid_graph_load(generation_id BIGINT, blob BLOB) -> BIGINT
//
// Parses a stored graph generation into the process-wide cache (a no-op when it is
// already resident) and returns its resident bytes. The Python engine calls it after
// anatid_graph_recall reported a miss; anatid.anatid_recall_2hop does not need it (it
// passes the BLOB to anatid_graph_recall itself). Loading is the function's purpose,
// so it is volatile: never folded, never skipped.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "graph_cache.hpp"

#include <stdexcept>
#include <string>

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	duckdb_vector ids = duckdb_data_chunk_get_vector(input, 0);
	duckdb_vector blobs = duckdb_data_chunk_get_vector(input, 1);
	auto *out = static_cast<int64_t *>(duckdb_vector_get_data(output));
	auto &cache = graph::GenerationCache::Instance();
	for (idx_t row = 0; row < n; row++) {
		int64_t id = 0;
		if (!Scalar(ids, row, id)) {
			throw std::invalid_argument("anatid_graph_load: generation_id is NULL");
		}
		auto resident = cache.Get(id);
		if (!resident) {
			const char *ptr = nullptr;
			size_t len = 0;
			if (!StringView(blobs, row, ptr, len)) {
				throw std::invalid_argument("anatid_graph_load: the BLOB of generation " + std::to_string(id) +
				                            " is NULL");
			}
			auto parsed = graph::Generation::Parse(ptr, len);
			if (parsed->header.generation_id != id) {
				throw std::invalid_argument("anatid_graph_load: the BLOB passed for generation " + std::to_string(id) +
				                            " holds generation " + std::to_string(parsed->header.generation_id));
			}
			cache.Put(id, parsed);
			resident = parsed;
		}
		out[row] = int64_t(resident->ByteSize());
	}
}

} // namespace

void RegisterAnatidGraphLoad(duckdb_connection connection) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_graph_load");
	duckdb_logical_type bigint = Type(DUCKDB_TYPE_BIGINT);
	duckdb_logical_type blob = Type(DUCKDB_TYPE_BLOB);
	duckdb_scalar_function_add_parameter(f, bigint);
	duckdb_scalar_function_add_parameter(f, blob);
	duckdb_scalar_function_set_return_type(f, bigint);
	duckdb_destroy_logical_type(&bigint);
	duckdb_destroy_logical_type(&blob);
	duckdb_scalar_function_set_volatile(f);
	duckdb_scalar_function_set_function(f, GuardScalar<Execute>);
	const duckdb_state state = duckdb_register_scalar_function(connection, f);
	duckdb_destroy_scalar_function(&f);
	if (state == DuckDBError) {
		throw std::runtime_error("anatid: could not register scalar function anatid_graph_load");
	}
}

} // namespace anatid
