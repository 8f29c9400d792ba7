// Vector readers, the generation lookup and the scalar registration shared by the
// anatid_graph_* bindings (inline, header only). Type() and the list types: logical_types.hpp.
#pragma once

#include "anatid_extension.hpp"
#include "capi_util.hpp"
#include "graph_cache.hpp"
#include "logical_types.hpp"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
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

// Whether a journal entry's op field is `op` (a single digit: ops are 0-5 and 9).
inline bool IsOp(std::string_view entry, int op) {
	return entry.size() >= 2 && entry[0] == char('0' + op) && entry[1] == '|';
}

// Whether the entry's fourth field (b) is non-empty: a nonce-less base marker has none.
inline bool HasB(std::string_view entry) {
	size_t pos = 0;
	for (int i = 0; i < 3; i++) {
		pos = entry.find('|', pos);
		if (pos == std::string_view::npos) {
			return false;
		}
		pos++;
	}
	return pos < entry.size() && entry[pos] != '|';
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

// The generation `key` as this process holds it; else, when `blob` is given, parsed from
// it (checked to hold that id) and put in the cache; else null. `fn` names the SQL
// function in errors.
inline std::shared_ptr<const graph::Generation> ResidentOrParse(const graph::CacheKey &key, const char *blob,
                                                                size_t len, const char *fn) {
	auto &cache = graph::GenerationCache::Instance();
	std::shared_ptr<const graph::Generation> resident = cache.Get(key);
	if (resident || !blob) {
		return resident;
	}
	auto parsed = graph::Generation::Parse(blob, len);
	if (parsed->header.generation_id != key.id) {
		throw std::invalid_argument(std::string(fn) + ": the BLOB passed for generation " + std::to_string(key.id) +
		                            " holds generation " + std::to_string(parsed->header.generation_id));
	}
	cache.Put(key, parsed);
	return parsed;
}

// Whether a NULL argument makes the result NULL without a call (DuckDB's default), or
// reaches the function, which decides (special handling).
enum class NullArguments { kNullResult, kReachFunction };

// Registers `name(params...) -> result` as a volatile scalar: the graph scalars read or
// change the process cache, so DuckDB must never fold or skip a call.
inline void RegisterVolatileScalar(duckdb_connection connection, const char *name,
                                   std::initializer_list<duckdb_type> params, duckdb_type result,
                                   duckdb_scalar_function_t execute,
                                   NullArguments nulls = NullArguments::kNullResult) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, name);
	for (duckdb_type p : params) {
		duckdb_logical_type t = Type(p);
		duckdb_scalar_function_add_parameter(f, t);
		duckdb_destroy_logical_type(&t);
	}
	duckdb_logical_type r = Type(result);
	duckdb_scalar_function_set_return_type(f, r);
	duckdb_destroy_logical_type(&r);
	if (nulls == NullArguments::kReachFunction) {
		duckdb_scalar_function_set_special_handling(f);
	}
	duckdb_scalar_function_set_volatile(f);
	duckdb_scalar_function_set_function(f, execute);
	RegisterScalar(connection, f, name);
}

} // namespace graph_binding
} // namespace anatid
