// anatid_graph_build(row_kind TINYINT, x BIGINT, y BIGINT, text VARCHAR,
//                    generation_id BIGINT, tenant_id BIGINT, built_at TIMESTAMP) -> BLOB
//
// An aggregate over one tenant's build rows, returning the serialized generation that
// anatid_graph_recall parses. Row kinds: 0 entity (x = entity_id, text = name_key),
// 1 open relates edge (x, y = entity ids), 2 ABOUT link of a trusted memory (x =
// memory_id, y = entity_id, text = the memory's kind). Rows may arrive in any order
// and from several threads; the core sorts, so equal input gives an equal BLOB.
// python/anatid/indexes/graph.py selects the rows (what "trusted" means lives there).
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "boxed_aggregate.hpp"
#include "capi_util.hpp"
#include "graph_generation.hpp"

#include <stdexcept>
#include <string>

namespace anatid {

namespace {

using namespace graph_binding;

enum Arg : idx_t { kRowKind, kX, kY, kText, kGeneration, kTenant, kBuiltAt, kArgCount };

struct BuildState {
	graph::BuildInput input;
	graph::GenerationHeader header;
	bool have_header = false;
};

BuildState *&StateOf(duckdb_aggregate_state state) {
	return BoxedState<BuildState>::Of(state);
}

void Update(duckdb_function_info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	duckdb_vector kinds = duckdb_data_chunk_get_vector(input, kRowKind);
	duckdb_vector xs = duckdb_data_chunk_get_vector(input, kX);
	duckdb_vector ys = duckdb_data_chunk_get_vector(input, kY);
	duckdb_vector texts = duckdb_data_chunk_get_vector(input, kText);
	for (idx_t row = 0; row < n; row++) {
		BuildState &s = *StateOf(states[row]);
		if (!s.have_header) {
			auto arg = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
			if (!Scalar(arg(kGeneration), row, s.header.generation_id) || !Scalar(arg(kTenant), row, s.header.tenant_id) ||
			    !Scalar(arg(kBuiltAt), row, s.header.built_at_us)) {
				throw std::invalid_argument("anatid_graph_build: generation_id, tenant_id and built_at must not be NULL");
			}
			s.have_header = true;
		}
		int8_t kind = -1;
		int64_t x = 0, y = 0;
		std::string text;
		if (!Scalar(kinds, row, kind)) {
			continue; // a tenant with no rows (LEFT JOIN): an empty generation
		}
		if (!Scalar(xs, row, x)) {
			throw std::invalid_argument("anatid_graph_build: x must not be NULL");
		}
		switch (kind) {
		case 0:
			String(texts, row, text);
			s.input.entity_ids.push_back(x);
			s.input.entity_keys.push_back(std::move(text));
			break;
		case 1:
			if (!Scalar(ys, row, y)) {
				throw std::invalid_argument("anatid_graph_build: an edge row has a NULL y");
			}
			s.input.edge_a.push_back(x);
			s.input.edge_b.push_back(y);
			break;
		case 2:
			if (!Scalar(ys, row, y) || !String(texts, row, text)) {
				throw std::invalid_argument("anatid_graph_build: an ABOUT row needs y (entity) and text (kind)");
			}
			s.input.about_memory.push_back(x);
			s.input.about_entity.push_back(y);
			s.input.about_kind.push_back(std::move(text));
			break;
		default:
			throw std::invalid_argument("anatid_graph_build: row_kind must be 0, 1 or 2, got " + std::to_string(kind));
		}
	}
}

template <class T>
void Append(std::vector<T> &dst, std::vector<T> &src) {
	dst.insert(dst.end(), std::make_move_iterator(src.begin()), std::make_move_iterator(src.end()));
	src.clear();
}

void Combine(duckdb_function_info, duckdb_aggregate_state *source, duckdb_aggregate_state *target, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		BuildState &src = *StateOf(source[i]);
		BuildState &dst = *StateOf(target[i]);
		if (!dst.have_header && src.have_header) {
			dst.header = src.header;
			dst.have_header = true;
		}
		Append(dst.input.entity_ids, src.input.entity_ids);
		Append(dst.input.entity_keys, src.input.entity_keys);
		Append(dst.input.edge_a, src.input.edge_a);
		Append(dst.input.edge_b, src.input.edge_b);
		Append(dst.input.about_memory, src.input.about_memory);
		Append(dst.input.about_entity, src.input.about_entity);
		Append(dst.input.about_kind, src.input.about_kind);
	}
}

void Finalize(duckdb_function_info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
              idx_t offset) {
	for (idx_t i = 0; i < count; i++) {
		BuildState &s = *StateOf(source[i]);
		if (!s.have_header) {
			SetNull(result, offset + i);
			continue;
		}
		auto generation = graph::Generation::Build(s.header, std::move(s.input));
		const std::string blob = generation->Serialize();
		duckdb_vector_assign_string_element_len(result, offset + i, blob.data(), blob.size());
	}
}

} // namespace

void RegisterAnatidGraphBuild(duckdb_connection connection) {
	duckdb_aggregate_function f = MakeBoxedAggregate<BuildState, Update, Combine, Finalize>(
	    "anatid_graph_build",
	    {Type(DUCKDB_TYPE_TINYINT), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_VARCHAR),
	     Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_TIMESTAMP)},
	    Type(DUCKDB_TYPE_BLOB));
	RegisterAggregate(connection, f, "anatid_graph_build");
}

} // namespace anatid
