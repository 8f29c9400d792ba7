// anatid_graph_cache_stats() -> VARCHAR
//
// The process-wide graph generation cache as JSON: budget_bytes, resident_bytes,
// entries, hits, misses, loads, evictions and resident generation ids (most recently
// used first, as strings: ids exceed 2^53), and under "journal" the cache of folded
// journals (graph::JournalCache). What stats() reports under "graph_cache".
// The budget is ANATID_GRAPH_CACHE_BYTES when set at LOAD, else 512 MiB.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "graph_cache.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	const graph::CacheStats s = graph::GenerationCache::Instance().Stats();
	std::string json = "{\"budget_bytes\": " + std::to_string(s.budget_bytes) +
	                   ", \"resident_bytes\": " + std::to_string(s.resident_bytes) +
	                   ", \"entries\": " + std::to_string(s.entries) + ", \"hits\": " + std::to_string(s.hits) +
	                   ", \"misses\": " + std::to_string(s.misses) + ", \"loads\": " + std::to_string(s.loads) +
	                   ", \"evictions\": " + std::to_string(s.evictions) + ", \"resident_ids\": [";
	for (size_t i = 0; i < s.resident_ids.size(); i++) {
		json += (i ? ", \"" : "\"") + std::to_string(s.resident_ids[i]) + "\"";
	}
	const graph::JournalCacheStats j = graph::JournalCache::Instance().Stats();
	json += "], \"journal\": {\"entries\": " + std::to_string(j.entries) +
	        ", \"resident_bytes\": " + std::to_string(j.resident_bytes) + ", \"hits\": " + std::to_string(j.hits) +
	        ", \"refolds\": " + std::to_string(j.refolds) + ", \"extends\": " + std::to_string(j.extends) +
	        ", \"misses\": " + std::to_string(j.misses) + ", \"evictions\": " + std::to_string(j.evictions) + "}}";
	for (idx_t row = 0; row < (n ? n : 1); row++) {
		duckdb_vector_assign_string_element_len(output, row, json.data(), json.size());
	}
}

} // namespace

void RegisterAnatidGraphCacheStats(duckdb_connection connection) {
	if (const char *budget = std::getenv("ANATID_GRAPH_CACHE_BYTES")) {
		char *end = nullptr;
		const unsigned long long bytes = std::strtoull(budget, &end, 10);
		if (end && *end == '\0' && end != budget) {
			graph::GenerationCache::Instance().SetBudget(size_t(bytes));
		}
	}
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_graph_cache_stats");
	duckdb_logical_type varchar = Type(DUCKDB_TYPE_VARCHAR);
	duckdb_scalar_function_set_return_type(f, varchar);
	duckdb_destroy_logical_type(&varchar);
	duckdb_scalar_function_set_volatile(f);
	duckdb_scalar_function_set_function(f, GuardScalar<Execute>);
	RegisterScalar(connection, f, "anatid_graph_cache_stats");
}

} // namespace anatid
