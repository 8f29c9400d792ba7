// The `anatid` macro catalog: SQL table macros created at LOAD time.
//
// Why an attached in-memory catalog: a C API table function cannot read the caller's
// tables, so anything that must see the caller's transaction is a SQL table macro
// around native scalar/aggregate functions. Macros in `system` are refused and TEMP
// macros are per connection; a macro in an attached catalog is visible from every
// connection and cursor, and nothing is written to the user's file.
//
// The statements run on the entry point's load connection, which
// DUCKDB_EXTENSION_ENTRYPOINT closes before LOAD returns: we never keep one (it
// would hold the file lock and miss the caller's uncommitted writes).
#include "anatid_extension.hpp"
#include "anatid_hybrid_sql.hpp"
#include "anatid_recall_2hop_sql.hpp"
#include "capi_util.hpp"

#include <string>
#include <vector>

namespace anatid {

namespace {

constexpr const char *kCatalog = "anatid";
constexpr const char *kStatusFunction = "anatid_macro_status";

struct MacroDef {
	const char *name;       // created as anatid.<name>
	const char *parameters; // "(a, b := 10)"
	const char *body;       // SELECT ... (the AS TABLE body)
	// CREATE TEMP TABLE IF NOT EXISTS ... for every table the body reads. DuckDB 2.0
	// binds a macro body's table names at CREATE time (1.5.5 did not) although calls
	// bind against the caller's database; on a new file the tables do not exist yet at
	// LOAD, so creation binds against these column-compatible stubs, which live only
	// in the load connection's TEMP catalog and vanish with it.
	const char *stubs;
};

// Every table macro besides anatid_functions(), which is generated below from the
// registration table so the list can never drift from what is registered.
// Add one line per macro; keep long SQL in raw-string constants above it.
const std::vector<MacroDef> &Macros() {
	static const std::vector<MacroDef> macros = {
	    {"anatid_hybrid", kHybridMacroParameters, kHybridMacroBody, kHybridMacroStubs},
	    {"anatid_recall_2hop", kRecall2HopMacroParameters, kRecall2HopMacroBody, kRecall2HopMacroStubs},
	};
	return macros;
}

std::string FunctionsMacroBody(const SqlObject *natives, size_t native_count) {
	std::vector<std::pair<std::string, std::string>> rows;
	for (size_t i = 0; i < native_count; i++) {
		rows.emplace_back(natives[i].name, natives[i].kind);
	}
	rows.emplace_back(kStatusFunction, "scalar");
	rows.emplace_back("anatid_functions", "table_macro");
	for (const MacroDef &macro : Macros()) {
		rows.emplace_back(macro.name, "table_macro");
	}
	std::string values;
	for (const auto &row : rows) {
		values += values.empty() ? "" : ", ";
		values += "(" + QuoteLiteral(row.first) + ", " + QuoteLiteral(row.second) + ")";
	}
	return "SELECT name, kind FROM (VALUES " + values + ") AS t(name, kind) ORDER BY name";
}

std::string CreateMacroSql(const std::string &name, const std::string &parameters, const std::string &body) {
	return "CREATE MACRO " + std::string(kCatalog) + ".main." + name + parameters + " AS TABLE " + body;
}

// Attaches the catalog and creates every macro. Returns "ok" or the reason the
// macros are unavailable (what anatid_macro_status() reports).
std::string CreateMacroCatalog(duckdb_connection connection, const SqlObject *natives, size_t native_count) {
	bool exists = false;
	std::string existing_path;
	std::string error = QueryFirstVarchar(connection,
	                                      "SELECT coalesce(path, '(in-memory)') FROM duckdb_databases() "
	                                      "WHERE lower(database_name) = " +
	                                          QuoteLiteral(kCatalog),
	                                      exists, existing_path);
	if (!error.empty()) {
		return "could not inspect attached databases: " + error;
	}
	if (exists) {
		return "a database named 'anatid' is already attached (" + existing_path +
		       "), so the anatid.* macros were not created; a file called anatid.duckdb gets that name: "
		       "rename the file or attach it under another alias before LOAD";
	}
	// READ_WRITE even when the user's database is read-only: the macros live only here.
	error = ExecuteSql(connection, "ATTACH ':memory:' AS " + std::string(kCatalog) + " (READ_WRITE)");
	if (!error.empty()) {
		return "ATTACH ':memory:' AS anatid failed: " + error;
	}
	std::vector<std::pair<std::string, std::string>> statements;
	statements.emplace_back("anatid_functions", CreateMacroSql("anatid_functions", "()",
	                                                           FunctionsMacroBody(natives, native_count)));
	for (const MacroDef &macro : Macros()) {
		if (macro.stubs) {
			statements.emplace_back(std::string(macro.name) + " (stub tables)", macro.stubs);
		}
		statements.emplace_back(macro.name, CreateMacroSql(macro.name, macro.parameters, macro.body));
	}
	for (const auto &statement : statements) {
		error = ExecuteSql(connection, statement.second);
		if (!error.empty()) {
			return "CREATE MACRO anatid." + statement.first + " failed: " + error;
		}
	}
	return "ok";
}

} // namespace

void RegisterMacros(duckdb_connection connection, const SqlObject *natives, size_t native_count) {
	std::string status;
	try {
		status = CreateMacroCatalog(connection, natives, native_count);
	} catch (const std::exception &e) {
		status = std::string("creating the anatid macro catalog threw: ") + e.what();
	}
	RegisterConstantVarcharScalar(connection, kStatusFunction, status);
}

} // namespace anatid
