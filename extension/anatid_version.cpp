// anatid_version() -> VARCHAR
//
// The Python package compares this with its own version before trusting the
// binary, so a stale build in a dev tree is reported instead of half-working.
#include "anatid_extension.hpp"
#include "capi_util.hpp"

#ifndef ANATID_VERSION
#error "ANATID_VERSION must be defined by the build (CMakeLists.txt reads python/anatid/_version.py)"
#endif

namespace anatid {

void RegisterAnatidVersion(duckdb_connection connection) {
	RegisterConstantVarcharScalar(connection, "anatid_version", ANATID_VERSION);
}

} // namespace anatid
