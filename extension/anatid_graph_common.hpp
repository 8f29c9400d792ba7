// Vector readers shared by the anatid_graph_* bindings (inline, header only).
#pragma once

#include "anatid_extension.hpp"
#include "capi_util.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace anatid {
namespace graph_binding {

using ::anatid::IsValid; // capi_util.hpp
using ::anatid::Scalar;

// VARCHAR or BLOB; false for NULL.
inline bool String(duckdb_vector v, idx_t row, std::string &out) {
	if (!IsValid(v, row)) {
		return false;
	}
	auto *data = static_cast<duckdb_string_t *>(duckdb_vector_get_data(v));
	out.assign(duckdb_string_t_data(&data[row]), duckdb_string_t_length(data[row]));
	return true;
}

// Pointer and length of a VARCHAR/BLOB without copying (valid during the callback).
inline bool StringView(duckdb_vector v, idx_t row, const char *&ptr, size_t &len) {
	if (!IsValid(v, row)) {
		return false;
	}
	auto *data = static_cast<duckdb_string_t *>(duckdb_vector_get_data(v));
	ptr = duckdb_string_t_data(&data[row]);
	len = duckdb_string_t_length(data[row]);
	return true;
}

// A VARCHAR[] row; false for a NULL list. NULL elements are skipped.
inline bool StringList(duckdb_vector v, idx_t row, std::vector<std::string> &out) {
	out.clear();
	if (!IsValid(v, row)) {
		return false;
	}
	const auto *entries = static_cast<const duckdb_list_entry *>(duckdb_vector_get_data(v));
	duckdb_vector child = duckdb_list_vector_get_child(v);
	for (idx_t i = entries[row].offset; i < entries[row].offset + entries[row].length; i++) {
		std::string s;
		if (String(child, i, s)) {
			out.push_back(std::move(s));
		}
	}
	return true;
}

inline duckdb_logical_type Type(duckdb_type t) {
	return duckdb_create_logical_type(t);
}

} // namespace graph_binding
} // namespace anatid
