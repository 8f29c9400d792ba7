// The hits anatid_hybrid_rank and anatid_hybrid_recall return start with the same six
// fields: memory_id BIGINT, score DOUBLE, rv, rt, rg BIGINT (each arm's 1-based rank, NULL
// where the arm did not find the memory) and hop INTEGER (NULL outside the graph arm);
// anatid_hybrid_recall appends content and kind. Declared and written once here so the
// two functions keep one answer shape.
#pragma once

#include "anatid_extension.hpp"
#include "capi_util.hpp"
#include "hybrid.hpp"
#include "logical_types.hpp"

#include <vector>

namespace anatid {

// The six leading fields, for ListOfStruct.
inline std::vector<StructField> HybridHitFields() {
	return {{"memory_id", Type(DUCKDB_TYPE_BIGINT)}, {"score", Type(DUCKDB_TYPE_DOUBLE)},
	        {"rv", Type(DUCKDB_TYPE_BIGINT)},        {"rt", Type(DUCKDB_TYPE_BIGINT)},
	        {"rg", Type(DUCKDB_TYPE_BIGINT)},        {"hop", Type(DUCKDB_TYPE_INTEGER)}};
}

// Writes HybridHits into the first six children of a hit STRUCT vector (the list child,
// after the list has been reserved for them).
class HybridHitWriter {
public:
	explicit HybridHitWriter(duckdb_vector hits)
	    : ids_(static_cast<int64_t *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(hits, 0)))),
	      scores_(static_cast<double *>(duckdb_vector_get_data(duckdb_struct_vector_get_child(hits, 1)))),
	      ranks_ {duckdb_struct_vector_get_child(hits, 2), duckdb_struct_vector_get_child(hits, 3),
	              duckdb_struct_vector_get_child(hits, 4)},
	      hop_vec_(duckdb_struct_vector_get_child(hits, 5)),
	      hops_(static_cast<int32_t *>(duckdb_vector_get_data(hop_vec_))) {
	}

	void Write(idx_t at, const HybridHit &h) const {
		ids_[at] = h.id;
		scores_[at] = h.score;
		const int64_t r[3] = {h.rank_vector, h.rank_text, h.rank_graph};
		for (int a = 0; a < 3; a++) {
			static_cast<int64_t *>(duckdb_vector_get_data(ranks_[a]))[at] = r[a];
			if (r[a] == 0) {
				SetNull(ranks_[a], at);
			}
		}
		hops_[at] = h.hop;
		if (h.hop < 0) {
			SetNull(hop_vec_, at);
		}
	}

private:
	int64_t *ids_;
	double *scores_;
	duckdb_vector ranks_[3];
	duckdb_vector hop_vec_;
	int32_t *hops_;
};

} // namespace anatid
