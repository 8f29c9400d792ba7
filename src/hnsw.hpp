// HNSW approximate nearest neighbours over float32 vectors, cosine similarity (DuckDB-free core).
//
// The opt-in ANN backend of the vector arm (python/anatid/indexes/ann.py). Design choices:
// - Cosine on normalized vectors, without storing a normalized copy: each row keeps its stored
//   float32 vector and norm (the exact rescoring downstream needs exactly those), and the search
//   similarity is dot(row, q / |q|) * (1 / |row|). That halves the resident memory; a row of norm
//   0 scores 0.
// - Deterministic: rows are inserted in memory-id order (the held-out rows last, see below),
//   levels come from a seeded generator and every tie is broken by row index. The build runs on
//   several threads in fixed batches: the rows of a batch search the graph as it stood before the
//   batch (and each other by brute force), then the link updates are applied per target row in
//   the sequential order. The thread count never changes the result: the same rows and
//   parameters give the same bytes.
// - Calibrated: the search width a recall needs depends on the data (i.i.d. 64-d vectors need
//   several times the width clustered ones do), so the build measures it. A stride sample of
//   rows is held out and inserted last; before that, each held-out row queries the graph of the
//   others and is compared with the exact top k by brute force, and for each calibrated depth the
//   smallest ef on a ladder reaching the target recall is stored with the index.
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
	uint32_t threads = 0;           // build threads (0: the hardware's); never changes the result
};

// What the build measured on its held-out rows (see the header comment). recall() asks the
// index for `candidates` rows at a depth (python/anatid/indexes/ann.py: max(2 depth, depth + 50));
// ef is the smallest width on the ladder (from the candidates, or depth 10's width for depth 50,
// in x1.25 steps up to every row) whose recall@10 and recall@depth over those candidates
// reached kTarget, or every row.
struct HnswCalibration {
	static constexpr double kTarget = 0.995; // on the sample; margin for the 0.99 the docs promise
	static constexpr uint32_t kMaxQueries = 200;
	struct Depth {
		uint32_t depth = 0, candidates = 0, ef = 0;
		double recall_at_10 = 0, recall_at_depth = 0; // measured with that ef (0: not measured)
		double visited = 0; // similarities computed per query at that ef, as a share of the rows
	};
	uint32_t queries = 0; // held-out rows (0 below 1,000 rows: ef is then the row count, exhaustive)
	Depth at[2];
};

// The header of a blob, read without parsing (or checksumming) the rest.
struct HnswInfo {
	uint32_t version = 0, dim = 0, m = 0, ef_construction = 0;
	uint64_t rows = 0, seed = 0;
	HnswCalibration calibration;
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
	// Throws std::runtime_error when the blob is not a complete header of this version.
	static HnswInfo ReadInfo(std::string_view blob);

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
	const HnswCalibration &Calibration() const {
		return calibration_;
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
	// evaluations, when given, is increased by the similarities computed.
	void SearchLayer(const float *q, std::vector<HnswCandidate> &entry, size_t ef, int level,
	                 std::vector<HnswCandidate> &out, size_t *evaluations = nullptr) const;
	std::vector<HnswCandidate> SearchUnit(const float *q, size_t count, size_t ef,
	                                      size_t *evaluations = nullptr) const;
	void UnitVector(uint32_t row, std::vector<float> &out) const;
	void InsertBatch(const uint32_t *batch, size_t count, size_t threads);
	void Calibrate(const std::vector<uint32_t> &held_out, const std::vector<uint32_t> &graph, size_t threads);
	void SelectNeighbors(std::vector<HnswCandidate> &cands, size_t keep) const;
	void Connect(uint32_t from, uint32_t to, int level);
	void FinishLayout();

	size_t dim_ = 0;
	HnswParams params_;
	HnswCalibration calibration_;
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
