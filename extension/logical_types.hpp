// Building the logical types the bindings declare. The C API hands out logical types that
// must each be destroyed; these helpers own the intermediate ones, so a function's
// registration names its types instead of spelling out create/destroy pairs.
#pragma once

#include "anatid_extension.hpp"

#include <vector>

namespace anatid {

inline duckdb_logical_type Type(duckdb_type t) {
	return duckdb_create_logical_type(t);
}

// LIST(t).
inline duckdb_logical_type ListOf(duckdb_type t) {
	duckdb_logical_type element = Type(t);
	duckdb_logical_type list = duckdb_create_list_type(element);
	duckdb_destroy_logical_type(&element);
	return list;
}

// One member of a STRUCT; ListOfStruct takes ownership of `type`.
struct StructField {
	const char *name;
	duckdb_logical_type type;
};

// LIST(STRUCT(name type, ...)), the shape of every ranked answer; destroys the field types.
inline duckdb_logical_type ListOfStruct(std::vector<StructField> fields) {
	std::vector<const char *> names;
	std::vector<duckdb_logical_type> types;
	for (const StructField &f : fields) {
		names.push_back(f.name);
		types.push_back(f.type);
	}
	duckdb_logical_type row = duckdb_create_struct_type(types.data(), names.data(), types.size());
	duckdb_logical_type list = duckdb_create_list_type(row);
	duckdb_destroy_logical_type(&row);
	for (duckdb_logical_type &t : types) {
		duckdb_destroy_logical_type(&t);
	}
	return list;
}

} // namespace anatid
