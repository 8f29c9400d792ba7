// anatid_ann_info(blob BLOB) -> STRUCT(format_version INTEGER, dim INTEGER, rows BIGINT, m INTEGER,
//     ef_construction INTEGER, calibration_queries INTEGER, depth INTEGER[], candidates INTEGER[],
//     ef INTEGER[], recall_at_10 DOUBLE[], recall_at_depth DOUBLE[], visited DOUBLE[])
//
// The header of a serialized ANN generation (src/hnsw.hpp, HnswInfo): its settings and the
// search widths its build calibrated on held-out rows, one list element per calibrated depth.
// python/anatid/indexes/ann.py records them in anatid_ann_calibration right after the build,
// so a recall plans its width without reading the BLOB. Reads the header only (anatid_ann_load
// verifies the checksum); a BLOB that is not a header of this format version is an error, NULL
// gives NULL. Deterministic, unlike the cache functions beside it.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "hnsw.hpp"

#include <stdexcept>
#include <string>

namespace anatid {

namespace {

using namespace graph_binding;

enum Field : idx_t {
	kVersion, kDim, kRows, kM, kEfConstruction, kQueries, kDepth, kCandidates, kEf, kRecall10, kRecallDepth,
	kVisited, kFields
};

template <class T>
T *Data(duckdb_vector output, Field f) {
	return static_cast<T *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(output, f)));
}

// Appends the calibrated depths' values of one field to the list child `f` of row `row`.
template <class T, class Get>
void PutList(duckdb_vector output, Field f, idx_t row, const HnswCalibration &c, Get get) {
	duckdb_vector list = duckdb_struct_vector_get_child(output, f);
	const idx_t at = duckdb_list_vector_get_size(list);
	const idx_t count = sizeof(c.at) / sizeof(c.at[0]);
	duckdb_list_vector_reserve(list, at + count);
	duckdb_list_vector_set_size(list, at + count);
	T *values = static_cast<T *>(duckdb_vector_get_data(duckdb_list_vector_get_child(list)));
	for (idx_t i = 0; i < count; i++) {
		values[at + i] = get(c.at[i]);
	}
	static_cast<duckdb_list_entry *>(duckdb_vector_get_data(list))[row] = duckdb_list_entry {at, count};
}

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	duckdb_vector blobs = duckdb_data_chunk_get_vector(input, 0);
	for (idx_t row = 0; row < n; row++) {
		const char *ptr = nullptr;
		size_t len = 0;
		if (!StringView(blobs, row, ptr, len)) {
			duckdb_vector_ensure_validity_writable(output);
			duckdb_validity_set_row_invalid(duckdb_vector_get_validity(output), row);
			for (idx_t f = kDepth; f < kFields; f++) { // empty lists under the NULL row
				duckdb_vector list = duckdb_struct_vector_get_child(output, f);
				static_cast<duckdb_list_entry *>(duckdb_vector_get_data(list))[row] =
				    duckdb_list_entry {duckdb_list_vector_get_size(list), 0};
			}
			continue;
		}
		HnswInfo info;
		try {
			info = HnswIndex::ReadInfo(std::string_view(ptr, len));
		} catch (const std::runtime_error &e) {
			throw std::runtime_error(std::string("anatid_ann_info: ") + e.what());
		}
		Data<int32_t>(output, kVersion)[row] = int32_t(info.version);
		Data<int32_t>(output, kDim)[row] = int32_t(info.dim);
		Data<int64_t>(output, kRows)[row] = int64_t(info.rows);
		Data<int32_t>(output, kM)[row] = int32_t(info.m);
		Data<int32_t>(output, kEfConstruction)[row] = int32_t(info.ef_construction);
		Data<int32_t>(output, kQueries)[row] = int32_t(info.calibration.queries);
		using D = HnswCalibration::Depth;
		PutList<int32_t>(output, kDepth, row, info.calibration, [](const D &d) { return int32_t(d.depth); });
		PutList<int32_t>(output, kCandidates, row, info.calibration, [](const D &d) { return int32_t(d.candidates); });
		PutList<int32_t>(output, kEf, row, info.calibration, [](const D &d) { return int32_t(d.ef); });
		PutList<double>(output, kRecall10, row, info.calibration, [](const D &d) { return d.recall_at_10; });
		PutList<double>(output, kRecallDepth, row, info.calibration, [](const D &d) { return d.recall_at_depth; });
		PutList<double>(output, kVisited, row, info.calibration, [](const D &d) { return d.visited; });
	}
}

} // namespace

void RegisterAnatidAnnInfo(duckdb_connection connection) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_ann_info");
	duckdb_logical_type blob = Type(DUCKDB_TYPE_BLOB);
	duckdb_scalar_function_add_parameter(f, blob);
	duckdb_logical_type integer = Type(DUCKDB_TYPE_INTEGER);
	duckdb_logical_type bigint = Type(DUCKDB_TYPE_BIGINT);
	duckdb_logical_type dbl = Type(DUCKDB_TYPE_DOUBLE);
	duckdb_logical_type int_list = duckdb_create_list_type(integer);
	duckdb_logical_type dbl_list = duckdb_create_list_type(dbl);
	duckdb_logical_type members[kFields] = {integer,  integer,  bigint,   integer,  integer,  integer,
	                                        int_list, int_list, int_list, dbl_list, dbl_list, dbl_list};
	const char *names[kFields] = {"format_version", "dim",          "rows",         "m",
	                              "ef_construction", "calibration_queries", "depth", "candidates",
	                              "ef",             "recall_at_10", "recall_at_depth", "visited"};
	duckdb_logical_type result = duckdb_create_struct_type(members, names, kFields);
	duckdb_scalar_function_set_return_type(f, result);
	for (duckdb_logical_type *t : {&blob, &integer, &bigint, &dbl, &int_list, &dbl_list, &result}) {
		duckdb_destroy_logical_type(t);
	}
	duckdb_scalar_function_set_special_handling(f); // a NULL BLOB is handled above (NULL result)
	duckdb_scalar_function_set_function(f, GuardScalar<Execute>);
	RegisterScalar(connection, f, "anatid_ann_info");
}

} // namespace anatid
