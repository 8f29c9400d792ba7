// Seeded random vectors for the C++ benchmarks (ann_build.cpp, vector_scan.cpp) and the core's
// unit tests (test/cpp/test_vector.cpp). Header only, std:: only: no DuckDB, no core types.
//
// The order of the draws is part of the contract: a seed must keep giving the data the
// published numbers (docs/benchmarks.md, benchmark/results/) were measured on. The callers
// pass the one Gauss they draw everything else from, because std::normal_distribution keeps
// a spare value between calls.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace anatid {
namespace vector_data {

using Rng = std::mt19937_64;
using Gauss = std::normal_distribution<float>;

// n draws N(0, 1), in order.
inline std::vector<float> Gaussian(Rng &rng, Gauss &gauss, size_t n) {
	std::vector<float> out(n);
	for (float &x : out) {
		x = gauss(rng);
	}
	return out;
}

// A query vector: dim draws N(0, 1), widened to double (the core's query type).
inline std::vector<double> GaussianQuery(Rng &rng, Gauss &gauss, size_t dim) {
	std::vector<double> q(dim);
	for (double &x : q) {
		x = gauss(rng);
	}
	return q;
}

// The L2 norm, summed in double in dimension order (as anatid_embeddings.norm is).
template <class T>
double Norm(const T *x, size_t dim) {
	double s = 0;
	for (size_t d = 0; d < dim; d++) {
		s += double(x[d]) * x[d];
	}
	return std::sqrt(s);
}

// The norm of each dim-long row.
inline std::vector<double> RowNorms(const std::vector<float> &rows, size_t dim) {
	std::vector<double> norms(rows.size() / dim);
	for (size_t i = 0; i < norms.size(); i++) {
		norms[i] = Norm(&rows[i * dim], dim);
	}
	return norms;
}

// How a row draws its centre. The two benchmarks drew it differently before they shared this
// generator; both draws stay so that their seeds still give the same data.
enum class CentrePick {
	kLowBits, // rng() % centres (ann_build.cpp)
	kUniform, // std::uniform_int_distribution<int>(0, centres - 1) (vector_scan.cpp)
};

// n rows of dim floats, row-major: first `centres` Gaussian centres N(0, 1), then for each row
// its centre and dim values centre + noise * N(0, 1), or N(0, 1) alone when iid (the centres
// and each row's pick are drawn all the same, so the draws after the rows, such as queries,
// start from the same point for both kinds of data).
inline std::vector<float> ClusteredRows(Rng &rng, Gauss &gauss, size_t n, size_t dim, size_t centres, float noise,
                                        bool iid, CentrePick pick) {
	const std::vector<float> centre = Gaussian(rng, gauss, centres * dim);
	std::uniform_int_distribution<int> uniform(0, int(centres) - 1);
	std::vector<float> rows(n * dim);
	for (size_t i = 0; i < n; i++) {
		const size_t c = pick == CentrePick::kLowBits ? size_t(rng() % centres) : size_t(uniform(rng));
		for (size_t d = 0; d < dim; d++) {
			rows[i * dim + d] = iid ? gauss(rng) : centre[c * dim + d] + noise * gauss(rng);
		}
	}
	return rows;
}

} // namespace vector_data
} // namespace anatid
