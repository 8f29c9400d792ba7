// Entry point: DuckDB calls anatid_init_c_api on LOAD. It only walks the
// registration table; each registrar lives in the file named after its SQL object.
#define DUCKDB_EXTENSION_NAME anatid
#define DUCKDB_EXTENSION_API_VERSION_MAJOR 1
#define DUCKDB_EXTENSION_API_VERSION_MINOR 2
#define DUCKDB_EXTENSION_API_VERSION_PATCH 0

#include "anatid_extension.hpp"

#include <exception>
#include <string>

namespace {

// One line per native SQL function, in registration order. The macros (and
// anatid_macro_status) come last from RegisterMacros: they call these functions.
const anatid::SqlObject kNativeFunctions[] = {
    {"anatid_version", "scalar", anatid::RegisterAnatidVersion},
    {"anatid_graph_build", "aggregate", anatid::RegisterAnatidGraphBuild},
    {"anatid_graph_recall", "aggregate", anatid::RegisterAnatidGraphRecall},
    {"anatid_graph_request", "scalar", anatid::RegisterAnatidGraphRequest},
    {"anatid_graph_load", "scalar", anatid::RegisterAnatidGraphLoad},
    {"anatid_graph_resident", "scalar", anatid::RegisterAnatidGraphResident},
    {"anatid_graph_cache_stats", "scalar", anatid::RegisterAnatidGraphCacheStats},
    {"anatid_hybrid_rank", "scalar", anatid::RegisterAnatidHybridRank},
    {"anatid_hybrid_cached", "scalar", anatid::RegisterAnatidHybridCached},
    {"anatid_hybrid_recall", "aggregate", anatid::RegisterAnatidHybridRecall},
    {"anatid_text_content", "scalar", anatid::RegisterAnatidTextContent},
    {"anatid_ann_build", "aggregate", anatid::RegisterAnatidAnnBuild},
    {"anatid_ann_load", "scalar", anatid::RegisterAnatidAnnLoad},
    {"anatid_ann_resident", "scalar", anatid::RegisterAnatidAnnResident},
    {"anatid_ann_search", "scalar", anatid::RegisterAnatidAnnSearch},
    {"anatid_ann_info", "scalar", anatid::RegisterAnatidAnnInfo},
};

} // namespace

DUCKDB_EXTENSION_ENTRYPOINT(duckdb_connection connection, duckdb_extension_info info,
                            struct duckdb_extension_access *access) {
	try {
		for (const anatid::SqlObject &object : kNativeFunctions) {
			object.register_fn(connection);
		}
		anatid::RegisterMacros(connection, kNativeFunctions, sizeof(kNativeFunctions) / sizeof(kNativeFunctions[0]));
		return true;
	} catch (const std::exception &e) {
		access->set_error(info, (std::string("anatid: ") + e.what()).c_str());
	} catch (...) {
		access->set_error(info, "anatid: unknown C++ exception during LOAD");
	}
	return false;
}
