// anatid_graph_request(seeds VARCHAR[], hops INTEGER, max_hits BIGINT, kinds VARCHAR[],
//                      valid_at TIMESTAMP, strict BOOLEAN) -> VARCHAR
//
// Encodes a recall request for anatid_graph_recall (format: src/graph_codec.hpp).
// anatid.anatid_recall_2hop calls it; the Python engine encodes the same text itself
// (python/anatid/native_graph.py) to save binding six arguments per call. Seeds are
// matched on entity name keys: this folds ASCII case and collapses whitespace, as
// Python's validate.name_key does for ASCII (Python also folds the rest of Unicode).
// NULL kinds: no kinds filter; NULL valid_at: the instant the recall runs.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "graph_codec.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace anatid {

namespace {

using namespace graph_binding;

enum Arg : idx_t { kSeeds, kHops, kMaxHits, kKinds, kValidAt, kStrict };

std::string NameKey(const std::string &name) {
	std::string out;
	bool space = false;
	for (unsigned char c : name) {
		if (c == ' ' || (c >= '\t' && c <= '\r')) {
			space = !out.empty();
			continue;
		}
		if (space) {
			out += ' ';
			space = false;
		}
		out += char(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	return out;
}

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	auto arg = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	for (idx_t row = 0; row < n; row++) {
		graph::RecallRequest r;
		std::vector<std::string> seeds;
		StringList(arg(kSeeds), row, seeds);
		for (const auto &s : seeds) {
			r.seed_keys.push_back(NameKey(s));
		}
		int32_t hops = 2;
		Scalar(arg(kHops), row, hops);
		r.hops = hops;
		int64_t max_hits = 50;
		Scalar(arg(kMaxHits), row, max_hits);
		r.limit = max_hits;
		if (r.hops < 0 || r.hops > graph::kMaxHops) {
			throw std::invalid_argument("anatid_graph_request: hops must be between 0 and " +
			                            std::to_string(graph::kMaxHops) + ", got " + std::to_string(r.hops));
		}
		if (r.limit < 1) {
			throw std::invalid_argument("anatid_graph_request: max_hits must be at least 1, got " +
			                            std::to_string(r.limit));
		}
		r.filter_kinds = StringList(arg(kKinds), row, r.kinds);
		const bool has_valid_at = Scalar(arg(kValidAt), row, r.valid_at_us);
		bool strict = false;
		Scalar(arg(kStrict), row, strict);
		const std::string text = graph::EncodeRequest(r, has_valid_at, strict);
		duckdb_vector_assign_string_element_len(output, row, text.data(), text.size());
	}
}

} // namespace

void RegisterAnatidGraphRequest(duckdb_connection connection) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_graph_request");
	duckdb_logical_type varchar = Type(DUCKDB_TYPE_VARCHAR);
	duckdb_logical_type list = duckdb_create_list_type(varchar);
	const duckdb_type scalars[] = {DUCKDB_TYPE_INTEGER, DUCKDB_TYPE_BIGINT};
	duckdb_scalar_function_add_parameter(f, list);
	for (duckdb_type type : scalars) {
		duckdb_logical_type t = Type(type);
		duckdb_scalar_function_add_parameter(f, t);
		duckdb_destroy_logical_type(&t);
	}
	duckdb_scalar_function_add_parameter(f, list);
	duckdb_logical_type ts = Type(DUCKDB_TYPE_TIMESTAMP);
	duckdb_logical_type boolean = Type(DUCKDB_TYPE_BOOLEAN);
	duckdb_scalar_function_add_parameter(f, ts);
	duckdb_scalar_function_add_parameter(f, boolean);
	duckdb_scalar_function_set_return_type(f, varchar);
	duckdb_destroy_logical_type(&ts);
	duckdb_destroy_logical_type(&boolean);
	duckdb_destroy_logical_type(&list);
	duckdb_destroy_logical_type(&varchar);
	duckdb_scalar_function_set_special_handling(f); // NULL kinds / valid_at mean something
	duckdb_scalar_function_set_function(f, GuardScalar<Execute>);
	RegisterScalar(connection, f, "anatid_graph_request");
}

} // namespace anatid
