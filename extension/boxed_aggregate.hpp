// Wiring an anatid aggregate (anatid_graph_build, anatid_graph_recall,
// anatid_ann_build, anatid_hybrid_recall). All keep their state as a BoxedState<S>
// (capi_util.hpp), wrap every callback in its guard and let NULL arguments reach Update
// (in their inputs NULL means "absent"); written once so the four cannot drift apart.
#pragma once

#include "anatid_extension.hpp"
#include "capi_util.hpp"

#include <vector>

namespace anatid {

// The aggregate `name(params...) -> result` over a BoxedState<S>: each callback behind its
// guard, the destructor freeing the box, and special handling for NULL arguments. Takes
// ownership of the logical types (destroys them).
template <class S, void (*Update)(duckdb_function_info, duckdb_data_chunk, duckdb_aggregate_state *),
          void (*Combine)(duckdb_function_info, duckdb_aggregate_state *, duckdb_aggregate_state *, idx_t),
          void (*Finalize)(duckdb_function_info, duckdb_aggregate_state *, duckdb_vector, idx_t, idx_t)>
duckdb_aggregate_function MakeBoxedAggregate(const char *name, std::vector<duckdb_logical_type> params,
                                             duckdb_logical_type result) {
	duckdb_aggregate_function f = duckdb_create_aggregate_function();
	duckdb_aggregate_function_set_name(f, name);
	for (duckdb_logical_type &p : params) {
		duckdb_aggregate_function_add_parameter(f, p);
		duckdb_destroy_logical_type(&p);
	}
	duckdb_aggregate_function_set_return_type(f, result);
	duckdb_destroy_logical_type(&result);
	using Boxed = BoxedState<S>;
	duckdb_aggregate_function_set_functions(f, Boxed::Size, GuardAggregateInit<Boxed::Init>, GuardAggregateUpdate<Update>,
	                                        GuardAggregateCombine<Combine>, GuardAggregateFinalize<Finalize>);
	duckdb_aggregate_function_set_destructor(f, Boxed::Destroy);
	duckdb_aggregate_function_set_special_handling(f);
	return f;
}

} // namespace anatid
