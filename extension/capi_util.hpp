// Small helpers over the C API shared by every binding file: exception guards for
// callbacks, running SQL on the load connection, constant scalar functions.
#pragma once

#include "anatid_extension.hpp"

#include <cstdint>
#include <exception>
#include <string>

namespace anatid {

// ---- callback guards ----------------------------------------------------------
// An exception escaping into DuckDB's C code is undefined behaviour, so every
// callback is wrapped: the C++ body may throw, the guard reports via *_set_error.
// Use: duckdb_scalar_function_set_function(f, GuardScalar<MyExecute>);

#define ANATID_GUARD_BODY(call, set_error, info)                                                                       \
	try {                                                                                                              \
		call;                                                                                                          \
	} catch (const std::exception &e) {                                                                                \
		set_error(info, e.what());                                                                                     \
	} catch (...) {                                                                                                    \
		set_error(info, "anatid: unknown C++ exception");                                                              \
	}

template <void (*Fn)(duckdb_function_info, duckdb_data_chunk, duckdb_vector)>
void GuardScalar(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
	ANATID_GUARD_BODY(Fn(info, input, output), duckdb_scalar_function_set_error, info)
}

template <void (*Fn)(duckdb_bind_info)>
void GuardTableBind(duckdb_bind_info info) {
	ANATID_GUARD_BODY(Fn(info), duckdb_bind_set_error, info)
}

template <void (*Fn)(duckdb_init_info)>
void GuardTableInit(duckdb_init_info info) {
	ANATID_GUARD_BODY(Fn(info), duckdb_init_set_error, info)
}

template <void (*Fn)(duckdb_function_info, duckdb_data_chunk)>
void GuardTableFunction(duckdb_function_info info, duckdb_data_chunk output) {
	ANATID_GUARD_BODY(Fn(info, output), duckdb_function_set_error, info)
}

template <void (*Fn)(duckdb_function_info, duckdb_aggregate_state)>
void GuardAggregateInit(duckdb_function_info info, duckdb_aggregate_state state) {
	ANATID_GUARD_BODY(Fn(info, state), duckdb_aggregate_function_set_error, info)
}

template <void (*Fn)(duckdb_function_info, duckdb_data_chunk, duckdb_aggregate_state *)>
void GuardAggregateUpdate(duckdb_function_info info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	ANATID_GUARD_BODY(Fn(info, input, states), duckdb_aggregate_function_set_error, info)
}

template <void (*Fn)(duckdb_function_info, duckdb_aggregate_state *, duckdb_aggregate_state *, idx_t)>
void GuardAggregateCombine(duckdb_function_info info, duckdb_aggregate_state *source, duckdb_aggregate_state *target,
                           idx_t count) {
	ANATID_GUARD_BODY(Fn(info, source, target, count), duckdb_aggregate_function_set_error, info)
}

template <void (*Fn)(duckdb_function_info, duckdb_aggregate_state *, duckdb_vector, idx_t, idx_t)>
void GuardAggregateFinalize(duckdb_function_info info, duckdb_aggregate_state *source, duckdb_vector result,
                            idx_t count, idx_t offset) {
	ANATID_GUARD_BODY(Fn(info, source, result, count, offset), duckdb_aggregate_function_set_error, info)
}

#undef ANATID_GUARD_BODY

// ---- SQL on a connection --------------------------------------------------------

// SQL string literal with single quotes doubled: 'it''s'.
std::string QuoteLiteral(const std::string &text);

// Runs one statement; returns "" on success, else DuckDB's error text.
std::string ExecuteSql(duckdb_connection connection, const std::string &sql);

// Runs a query and returns the first column of the first row as text via
// `found`/`value`. Returns "" on success, else the error text. NULL -> found=false.
std::string QueryFirstVarchar(duckdb_connection connection, const std::string &sql, bool &found, std::string &value);

// ---- registration helpers ---------------------------------------------------------

// Register `f` and destroy the handle; throw naming `name` when DuckDB refuses it (the
// entry point reports that as the LOAD error).
void RegisterScalar(duckdb_connection connection, duckdb_scalar_function f, const char *name);
void RegisterAggregate(duckdb_connection connection, duckdb_aggregate_function f, const char *name);

// Registers a zero-argument scalar `name() -> VARCHAR` returning `value` for every
// row. The value is owned by the function (extra info), so it is per database.
void RegisterConstantVarcharScalar(duckdb_connection connection, const char *name, const std::string &value);

// ---- reading one row of a vector ------------------------------------------------
inline bool IsValid(duckdb_vector v, idx_t row) {
	uint64_t *validity = duckdb_vector_get_validity(v);
	return !validity || duckdb_validity_row_is_valid(validity, row);
}

// The row's value, or false when it is NULL.
template <class T>
bool Scalar(duckdb_vector v, idx_t row, T &out) {
	if (!IsValid(v, row)) {
		return false;
	}
	out = static_cast<const T *>(duckdb_vector_get_data(v))[row];
	return true;
}

// The [offset, offset + length) slice of a list row (into the list's child vector); false
// for a NULL list.
inline bool ListSlice(duckdb_vector v, idx_t row, idx_t &offset, idx_t &length) {
	if (!IsValid(v, row)) {
		return false;
	}
	const auto *entries = static_cast<const duckdb_list_entry *>(duckdb_vector_get_data(v));
	offset = entries[row].offset;
	length = entries[row].length;
	return true;
}

// One input vector's data and validity, fetched once per chunk: an aggregate fed a whole
// journal (20,000 rows at 20,000 memories) spent more in per-row duckdb_vector_get_* calls
// than in its own work. Strings are read from duckdb_string_t's layout in duckdb.h
// (inlined up to 12 bytes, else a pointer), as DuckDB's own accessors do.
class Column {
public:
	explicit Column(duckdb_vector v)
	    : data_(duckdb_vector_get_data(v)), validity_(duckdb_vector_get_validity(v)) {
	}
	bool Valid(idx_t row) const {
		return !validity_ || ((validity_[row >> 6] >> (row & 63)) & 1);
	}
	// The row's value, or false when it is NULL.
	template <class T>
	bool Get(idx_t row, T &out) const {
		if (!Valid(row)) {
			return false;
		}
		out = static_cast<const T *>(data_)[row];
		return true;
	}
	// A VARCHAR or BLOB row as a view (valid while the chunk is), or false when NULL.
	bool View(idx_t row, const char *&ptr, size_t &len) const {
		if (!Valid(row)) {
			return false;
		}
		const duckdb_string_t &str = static_cast<const duckdb_string_t *>(data_)[row];
		len = str.value.inlined.length;
		ptr = len <= sizeof(str.value.inlined.inlined) ? str.value.inlined.inlined : str.value.pointer.ptr;
		return true;
	}

private:
	const void *data_;
	const uint64_t *validity_;
};

// Marks one row of an output vector NULL.
inline void SetNull(duckdb_vector v, idx_t row) {
	duckdb_vector_ensure_validity_writable(v);
	duckdb_validity_set_row_invalid(duckdb_vector_get_validity(v), row);
}

// An aggregate state that owns a heap object S: DuckDB hands out raw bytes, so the
// state is a pointer, created in Init and freed in Destroy.
template <class S>
struct BoxedState {
	static S *&Of(duckdb_aggregate_state state) {
		return *reinterpret_cast<S **>(state);
	}
	static idx_t Size(duckdb_function_info) {
		return sizeof(S *);
	}
	static void Init(duckdb_function_info, duckdb_aggregate_state state) {
		Of(state) = new S();
	}
	static void Destroy(duckdb_aggregate_state *states, idx_t count) {
		for (idx_t i = 0; i < count; i++) {
			delete Of(states[i]);
			Of(states[i]) = nullptr;
		}
	}
};

} // namespace anatid
