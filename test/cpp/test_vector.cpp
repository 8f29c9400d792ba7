// Exact cosine top-k: the blocked kernel against a plain scalar loop (bit for bit),
// journal overrides, validity and the tie-break.
#include "check.hpp"
#include "vector.hpp"
#include "vector_data.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace anatid;

namespace {

float ScalarCosine(const float *e, const double *q, size_t dim, double norm, double qnorm) {
	double dot = 0.0;
	for (size_t d = 0; d < dim; d++) {
		dot += static_cast<double>(e[d]) * q[d];
	}
	return static_cast<float>(dot / (norm * qnorm));
}

} // namespace

TEST_CASE("blocked kernel equals the scalar loop bit for bit, any n and dim") {
	std::mt19937_64 rng(7);
	std::normal_distribution<float> gauss(0.0f, 1.0f);
	for (size_t dim : {1u, 3u, 64u, 67u}) {
		for (size_t n : {1u, 7u, 8u, 9u, 100u}) {
			const std::vector<float> rows = vector_data::Gaussian(rng, gauss, n * dim);
			const std::vector<double> norms = vector_data::RowNorms(rows, dim);
			std::vector<int64_t> ids(n), vf(n, 0), vt(n, kOpenEnd);
			for (size_t i = 0; i < n; i++) {
				ids[i] = int64_t(1000 - i);
			}
			const std::vector<double> q = vector_data::GaussianQuery(rng, gauss, dim);
			const double qn = vector_data::Norm(q.data(), dim);
			auto gen = VectorGeneration::FromRows(dim, ids, vf, vt, norms, rows);
			CosineInput in;
			in.base = gen.get();
			in.query = q.data();
			in.dim = dim;
			in.query_norm = qn;
			in.depth = n;
			auto hits = CosineTopK(in);
			CHECK_EQ(hits.size(), n);
			for (const ArmHit &h : hits) {
				const size_t i = size_t(1000 - h.id);
				CHECK_EQ(h.score, ScalarCosine(&rows[i * dim], q.data(), dim, norms[i], qn));
			}
			for (size_t i = 1; i < hits.size(); i++) {
				CHECK(hits[i - 1].score > hits[i].score ||
				      (hits[i - 1].score == hits[i].score && hits[i - 1].id < hits[i].id));
			}
		}
	}
}

TEST_CASE("journal overrides the base and validity is half-open") {
	std::vector<float> rows {1, 0, 0, 1};
	auto gen = VectorGeneration::FromRows(2, {1, 2}, {0, 0}, {kOpenEnd, 50}, {1.0, 1.0}, rows);
	std::vector<double> q {1, 0};
	CosineInput in;
	in.base = gen.get();
	in.query = q.data();
	in.dim = 2;
	in.query_norm = 1.0;
	in.valid_at = 10;
	CHECK_EQ(CosineTopK(in).size(), size_t(2));
	in.valid_at = 50; // doc 2 ended at 50
	CHECK_EQ(CosineTopK(in).size(), size_t(1));
	// doc 1 re-embedded in the journal as (0, 1): its base row no longer counts
	float fresh[2] = {0, 1};
	in.touched = {1};
	in.vectors = {JournalVector {1, 0, kOpenEnd, 1.0, fresh}};
	auto hits = CosineTopK(in);
	CHECK_EQ(hits.size(), size_t(1));
	CHECK_EQ(hits[0].score, 0.0f);
	CHECK_EQ(CosineVisibleRows(in), int64_t(1));
}

TEST_CASE("equal scores rank by id ascending within depth") {
	std::vector<float> rows(20 * 2, 1.0f);
	std::vector<int64_t> ids;
	for (int i = 0; i < 20; i++) {
		ids.push_back(100 - i);
	}
	auto gen = VectorGeneration::FromRows(2, ids, std::vector<int64_t>(20, 0), std::vector<int64_t>(20, kOpenEnd),
	                                      std::vector<double>(20, std::sqrt(2.0)), rows);
	std::vector<double> q {1, 1};
	CosineInput in;
	in.base = gen.get();
	in.query = q.data();
	in.dim = 2;
	in.query_norm = std::sqrt(2.0);
	in.depth = 3;
	auto hits = CosineTopK(in);
	CHECK_EQ(hits.size(), size_t(3));
	CHECK_EQ(hits[0].id, int64_t(81));
	CHECK_EQ(hits[2].id, int64_t(83));
}

TEST_CASE("the int8 screen returns exactly the exact scan's ids, scores and order") {
	std::mt19937_64 rng(11);
	std::normal_distribution<float> gauss(0.0f, 1.0f);
	std::uniform_int_distribution<int> pick(0, 9);
	size_t rescored_max = 0;
	for (size_t dim : {1u, 2u, 5u, 64u, 100u, 384u}) {
		for (size_t n : {1u, 15u, 16u, 17u, 300u, 3000u}) {
			// clustered rows with duplicates (ties), tiny and huge ones (validation refuses zero vectors)
			const std::vector<float> centers = vector_data::Gaussian(rng, gauss, 8 * dim);
			std::vector<float> rows(n * dim);
			for (size_t i = 0; i < n; i++) {
				const int kind = pick(rng);
				for (size_t d = 0; d < dim; d++) {
					float &x = rows[i * dim + d];
					if (kind == 0 && i > 0) {
						x = rows[(i - 1) * dim + d]; // a duplicate of the previous row
					} else if (kind == 1) {
						x = gauss(rng) * 1e-30f;
					} else if (kind == 2) {
						x = gauss(rng) * 1e30f;
					} else {
						x = centers[(i % 8) * dim + d] + 0.05f * gauss(rng);
					}
				}
			}
			const std::vector<double> norms = vector_data::RowNorms(rows, dim);
			std::vector<int64_t> ids(n), vf(n, 0), vt(n, kOpenEnd);
			for (size_t i = 0; i < n; i++) {
				ids[i] = int64_t(5000 - i);
				if (i % 13 == 5) {
					vt[i] = 50; // closed before valid_at
				}
			}
			auto gen = VectorGeneration::FromRows(dim, ids, vf, vt, norms, rows);
			for (int trial = 0; trial < 4; trial++) {
				std::vector<double> q(dim);
				for (size_t d = 0; d < dim; d++) {
					// a query near a stored row (a dense top) or a random one
					q[d] = trial == 0 ? double(rows[(n / 2) * dim + d]) + 0.01 * gauss(rng) : gauss(rng);
				}
				if (trial == 3) {
					q[0] *= 1e5; // one spike: the screen's integer query rounds the rest to about 0
				}
				const double qn = vector_data::Norm(q.data(), dim);
				CosineInput in;
				in.base = gen.get();
				in.query = q.data();
				in.dim = dim;
				in.query_norm = qn;
				in.valid_at = 100;
				in.touched = {ids[0], ids[n - 1]};
				int64_t visible = 0; // rows 0 and n - 1 are touched, every 13th from 5 closed at 50
				for (size_t i = 1; i + 1 < n; i++) {
					visible += i % 13 != 5;
				}
				CHECK_EQ(CosineVisibleRows(in), visible);
				in.valid_at = 40; // before the closings: every untouched row
				CHECK_EQ(CosineVisibleRows(in), int64_t(n >= 2 ? n - 2 : 0));
				in.valid_at = 100;
				for (size_t depth : {1u, 10u, 50u}) {
					in.depth = depth;
					auto fast = CosineTopK(in);
					if (n >= 300) {
						rescored_max = std::max(rescored_max, LastCosineRescored());
						if (dim >= 64 && (trial == 1 || trial == 2)) {
							CHECK(LastCosineRescored() < n / 2); // the screen does screen
						}
					}
					auto exact = CosineTopKExact(in);
					CHECK_EQ(fast.size(), exact.size());
					for (size_t i = 0; i < fast.size() && i < exact.size(); i++) {
						CHECK_EQ(fast[i].id, exact[i].id);
						CHECK_EQ(fast[i].score, exact[i].score);
					}
				}
			}
		}
	}
	CHECK(rescored_max > 0);
}

TEST_CASE("the screen's bound covers the query's rounding to integers") {
	// Codes represent these rows exactly (integers, each row holds 127: scale 1), so only the
	// query's rounding separates the screen from the exact score. Every row is 127 and then
	// a shuffle of the same values (one norm for all), and the query a spike on dimension 0
	// plus noise: its integers are coarse on the dimensions that decide the ranks. Without
	// that term of the bound the screen drops true hits.
	std::mt19937_64 rng(13);
	std::uniform_int_distribution<int> code(-127, 127);
	std::normal_distribution<double> gauss(0.0, 1.0);
	const size_t n = 2000, dim = 384;
	std::vector<float> values(dim - 1);
	for (auto &x : values) {
		x = static_cast<float>(code(rng));
	}
	std::vector<float> rows(n * dim);
	std::vector<int64_t> ids(n);
	for (size_t i = 0; i < n; i++) {
		std::shuffle(values.begin(), values.end(), rng);
		rows[i * dim] = 127.0f;
		std::copy(values.begin(), values.end(), rows.begin() + static_cast<std::ptrdiff_t>(i * dim + 1));
		ids[i] = int64_t(i + 1);
	}
	const std::vector<double> norms = vector_data::RowNorms(rows, dim);
	auto gen = VectorGeneration::FromRows(dim, ids, std::vector<int64_t>(n, 0), std::vector<int64_t>(n, kOpenEnd),
	                                      norms, rows);
	size_t differ = 0;
	for (int trial = 0; trial < 5; trial++) {
		std::vector<double> q(dim);
		for (size_t d = 0; d < dim; d++) {
			q[d] = d == 0 ? 3e4 : gauss(rng);
		}
		CosineInput in;
		in.base = gen.get();
		in.query = q.data();
		in.dim = dim;
		in.query_norm = vector_data::Norm(q.data(), dim);
		in.valid_at = 1;
		in.depth = 20;
		auto fast = CosineTopK(in);
		auto exact = CosineTopKExact(in);
		CHECK_EQ(fast.size(), exact.size());
		for (size_t i = 0; i < fast.size() && i < exact.size(); i++) {
			differ += fast[i].id != exact[i].id || fast[i].score != exact[i].score;
		}
	}
	CHECK_EQ(differ, size_t(0));
}

ANATID_TEST_MAIN()
