#include "capi_util.hpp"

#include <stdexcept>

namespace anatid {

std::string QuoteLiteral(const std::string &text) {
	std::string quoted = "'";
	for (char c : text) {
		quoted += c;
		if (c == '\'') {
			quoted += '\'';
		}
	}
	quoted += "'";
	return quoted;
}

namespace {

// Owns a duckdb_result so every return path destroys it.
struct ResultHolder {
	duckdb_result result {};
	~ResultHolder() {
		duckdb_destroy_result(&result);
	}
};

std::string ResultError(duckdb_result &result) {
	const char *message = duckdb_result_error(&result);
	return message ? message : "unknown DuckDB error";
}

} // namespace

std::string ExecuteSql(duckdb_connection connection, const std::string &sql) {
	ResultHolder holder;
	if (duckdb_query(connection, sql.c_str(), &holder.result) == DuckDBError) {
		return ResultError(holder.result);
	}
	return "";
}

std::string QueryFirstVarchar(duckdb_connection connection, const std::string &sql, bool &found, std::string &value) {
	found = false;
	value.clear();
	ResultHolder holder;
	if (duckdb_query(connection, sql.c_str(), &holder.result) == DuckDBError) {
		return ResultError(holder.result);
	}
	if (duckdb_column_type(&holder.result, 0) != DUCKDB_TYPE_VARCHAR) {
		return "QueryFirstVarchar: first column is not VARCHAR in: " + sql;
	}
	duckdb_data_chunk chunk = duckdb_fetch_chunk(holder.result);
	while (chunk && duckdb_data_chunk_get_size(chunk) == 0) {
		duckdb_destroy_data_chunk(&chunk);
		chunk = duckdb_fetch_chunk(holder.result);
	}
	if (!chunk) {
		return "";
	}
	duckdb_vector column = duckdb_data_chunk_get_vector(chunk, 0);
	uint64_t *validity = duckdb_vector_get_validity(column);
	if (!validity || duckdb_validity_row_is_valid(validity, 0)) {
		auto *strings = static_cast<duckdb_string_t *>(duckdb_vector_get_data(column));
		value.assign(duckdb_string_t_data(&strings[0]), duckdb_string_t_length(strings[0]));
		found = true;
	}
	duckdb_destroy_data_chunk(&chunk);
	return "";
}

namespace {

void DeleteString(void *data) {
	delete static_cast<std::string *>(data);
}

void ConstantVarcharExecute(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
	const auto *value = static_cast<const std::string *>(duckdb_scalar_function_get_extra_info(info));
	const idx_t rows = duckdb_data_chunk_get_size(input);
	for (idx_t row = 0; row < rows; row++) {
		duckdb_vector_assign_string_element_len(output, row, value->data(), value->size());
	}
}

} // namespace

void RegisterConstantVarcharScalar(duckdb_connection connection, const char *name, const std::string &value) {
	duckdb_scalar_function function = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(function, name);
	duckdb_logical_type varchar = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
	duckdb_scalar_function_set_return_type(function, varchar);
	duckdb_destroy_logical_type(&varchar);
	duckdb_scalar_function_set_extra_info(function, new std::string(value), DeleteString);
	duckdb_scalar_function_set_function(function, GuardScalar<ConstantVarcharExecute>);
	RegisterScalar(connection, function, name);
}

void RegisterScalar(duckdb_connection connection, duckdb_scalar_function f, const char *name) {
	const duckdb_state state = duckdb_register_scalar_function(connection, f);
	duckdb_destroy_scalar_function(&f);
	if (state == DuckDBError) {
		throw std::runtime_error(std::string("anatid: could not register scalar function ") + name);
	}
}

void RegisterAggregate(duckdb_connection connection, duckdb_aggregate_function f, const char *name) {
	const duckdb_state state = duckdb_register_aggregate_function(connection, f);
	duckdb_destroy_aggregate_function(&f);
	if (state == DuckDBError) {
		throw std::runtime_error(std::string("anatid: could not register aggregate function ") + name);
	}
}

} // namespace anatid
