// HNSW approximate nearest neighbours over float32 vectors, cosine similarity (DuckDB-free core).
//
// The opt-in ANN backend of the vector arm (python/anatid/indexes/ann.py). Design choices:
// - Cosine on normalized vectors, without storing a normalized copy: each row keeps its stored
//   float32 vector and norm (the exact rescoring downstream needs exactly those), and the search
//   similarity is dot(row, q / |q|) * (1 / |row|). That halves the resident memory; a row of norm
//   0 scores 0.
// - Deterministic: rows are inserted in memory-id order, levels come from a seeded generator, the
//   build is single threaded, and every tie is broken by row index. The same rows and parameters
//   give the same bytes.
// - Approximate similarities only choose candidates. The caller rescores candidates exactly (in
//   double, like src/vector.cpp) so a returned score never differs from the exact path's.
// - A flat, versioned byte blob (Serialize/Deserialize) with every length checked and a checksum
//   over the whole blob: a damaged blob throws std::runtime_error, it never crashes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace anatid {

struct HnswParams {
	uint32_t m = 16;                // links per node on upper levels; level 0 keeps 2 * m
	uint32_t ef_construction = 200; // candidate list while inserting
	uint64_t seed = 42;             // level generator
};

struct HnswRow {
	int64_t id = 0;
	int64_t vf = 0, vt = 0; // validity in epoch microseconds, as of the build
	double norm = 0;        // the stored norm (anatid_embeddings.norm)
};

struct HnswCandidate {
	uint32_t row;     // index into the rows
	float similarity; // approximate cosine
};

class HnswIndex {
public:
	// rows: the rows, any order (sorted by id here); vectors: rows.size() * dim floats, row-major,
	// in the same order as rows.
	static std::shared_ptr<const HnswIndex> Build(size_t dim, std::vector<HnswRow> rows,
	                                              const std::vector<float> &vectors, const HnswParams &params);
	// Throws std::runtime_error naming the problem when the blob is short, long, of another
	// version or damaged.
	static std::shared_ptr<const HnswIndex> Deserialize(std::string_view blob);
	std::string Serialize() const;

	// The `count` best rows of an ef-wide search (ef is raised to count), best first,
	// ties by row index. query: dim doubles, any norm (a zero query returns nothing).
	std::vector<HnswCandidate> Search(const double *query, size_t count, size_t ef) const;

	size_t Size() const {
		return rows_.size();
	}
	size_t Dim() const {
		return dim_;
	}
	const HnswRow &Row(uint32_t i) const {
		return rows_[i];
	}
	const float *Vector(uint32_t i) const {
		return vectors_.data() + static_cast<size_t>(i) * dim_;
	}
	const HnswParams &Params() const {
		return params_;
	}
	int MaxLevel() const {
		return max_level_;
	}
	size_t MemoryBytes() const;

private:
	float Similarity(const float *q, uint32_t row) const;
	HnswCandidate GreedyDescent(const float *q, int level) const;
	const int32_t *Links(uint32_t row, int level) const; // [count, slot...]
	int32_t *MutableLinks(uint32_t row, int level);
	uint32_t Slots(int level) const {
		return level == 0 ? 2 * params_.m : params_.m;
	}
	void SearchLayer(const float *q, std::vector<HnswCandidate> &entry, size_t ef, int level,
	                 std::vector<HnswCandidate> &out) const;
	void Insert(uint32_t row);
	void SelectNeighbors(std::vector<HnswCandidate> &cands, size_t keep) const;
	void Connect(uint32_t from, uint32_t to, int level);
	void FinishLayout();

	size_t dim_ = 0;
	HnswParams params_;
	std::vector<HnswRow> rows_;
	std::vector<float> vectors_;     // stored vectors, row-major
	std::vector<float> inv_norms_;   // 1 / norm (0 for a zero vector)
	std::vector<int32_t> levels_;    // top level of each row
	std::vector<int32_t> links0_;    // rows * (1 + 2m): count then slots
	std::vector<uint64_t> upper_at_; // rows + 1 offsets into upper_ (levels 1..top, (1 + m) each)
	std::vector<int32_t> upper_;
	int32_t entry_ = -1;
	int max_level_ = -1;
};

} // namespace anatid
