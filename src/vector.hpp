// Exact cosine top-k over a base generation plus a journal (DuckDB-free core).
//
// cosine = dot(e, q) / (norm(e) * norm(q)), the dot product accumulated in double in
// dimension order (as DuckDB's list_dot_product does for the SQL oracle), over the
// stored float32 vector and its stored norm; the score is then rounded to float32.
// To keep that exact order and still use SIMD, vectors are stored in blocks of
// kVectorBlock documents, dimension-major inside a block: the inner loop runs across
// documents, one lane per document, so the compiler vectorizes it without
// reassociating any sum.
//
// The scan is two passes so that it reads a quarter of the bytes: a screen over int8
// codes of every vector (one scale per vector), summed exactly in int32 against an int16
// copy of the query, bounds each exact score from above and below with a proven error bound, and only the vectors whose upper bound reaches the
// depth-th best lower bound are scored exactly, as above. The ids, scores and order are
// those of the exact scan (test/cpp/test_vector.cpp compares the two on random data).
#pragma once

#include "bm25.hpp" // ArmHit, RankArm, kOpenEnd

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace anatid {

constexpr size_t kVectorBlock = 8;
constexpr size_t kScreenBlock = 16;
constexpr int64_t kVectorMagic = 0x31305856414e41LL; // "ANAVX01"

struct VectorGeneration {
	size_t dim = 0;
	std::vector<int64_t> ids;
	std::vector<int64_t> vf, vt;   // validity, epoch microseconds (vt kOpenEnd when open)
	std::vector<double> norms;
	std::vector<float> blocks;     // ceil(n / kVectorBlock) blocks of dim * kVectorBlock floats
	std::unordered_map<int64_t, int32_t> doc_of;
	// The screen: codes[i][d] = round(e[i][d] / scale[i]) in [-127, 127], stored in blocks
	// of kScreenBlock vectors, by pairs of dimensions (see ScreenOffset in vector.cpp);
	// slack[i] bounds |e[i][d] - scale[i] * codes[i][d]| plus the exact score's own double
	// accumulation error per unit of |q|_1 (see Quantize in vector.cpp); +inf: always rescore.
	std::vector<int8_t> codes;
	std::vector<float> scale;
	std::vector<double> slack;
	std::vector<double> inv_norms; // 1 / norms (the screen's cheap first test)
	// Rows visible at an instant >= max_vf: all but the closed ones with vt <= it
	// (closed_vt ascending), so CosineVisibleRows needs no pass over every row.
	bool visibility_index = false;
	int64_t max_vf = INT64_MIN;
	std::vector<int64_t> closed_vt;

	// Parts written by anatid.indexes.vector: header int64[4] = {magic, n, dim, 0}, ids int64[n],
	// vf int64[n], vt int64[n], norms double[n], vectors float32[n * dim] row-major.
	static std::shared_ptr<const VectorGeneration> Parse(const std::vector<std::string_view> &parts);
	// From plain rows (tests and journals).
	static std::shared_ptr<const VectorGeneration> FromRows(size_t dim, const std::vector<int64_t> &ids,
	                                                       const std::vector<int64_t> &vf,
	                                                       const std::vector<int64_t> &vt,
	                                                       const std::vector<double> &norms,
	                                                       const std::vector<float> &row_major);
	size_t MemoryBytes() const;
};

struct JournalVector {
	int64_t id;
	int64_t vf, vt;
	double norm;
	const float *values; // dim floats, owned by the caller
};

struct CosineInput {
	const VectorGeneration *base = nullptr;
	std::vector<int64_t> touched;          // ids journalled since the base was built
	std::vector<JournalVector> vectors;    // their current vectors (visible rows only)
	const double *query = nullptr;         // dim doubles
	size_t dim = 0;
	double query_norm = 0;
	int64_t valid_at = 0;
	size_t depth = 50;
};

// Dot products of one block of kVectorBlock documents with q, in dimension order.
void DotBlock(const float *block, const double *q, size_t dim, double *out);

// The screen's exact int32 sums of one block of kScreenBlock code vectors with the query's
// integers, two dimensions per qpairs entry (int16 each, the lower dimension in the low half).
void ScreenBlock(const int8_t *block, const int32_t *qpairs, size_t pairs, int32_t *out);

// Number of vectors visible at valid_at (what BRUTE_FORCE_CEILING counts).
int64_t CosineVisibleRows(const CosineInput &in);

std::vector<ArmHit> CosineTopK(const CosineInput &in);

// The same answer by scoring every visible vector exactly (the reference for tests and
// for queries the screen cannot bound, e.g. a zero or non-finite query).
std::vector<ArmHit> CosineTopKExact(const CosineInput &in);

// How many base vectors the last CosineTopK on this thread scored exactly (tests, benchmarks).
size_t LastCosineRescored();

} // namespace anatid
