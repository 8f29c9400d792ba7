// HNSW: recall against brute force on seeded data, determinism, the blob round trip, and
// damaged blobs rejected (never a crash).
#include "check.hpp"
#include "hnsw.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace anatid;

namespace {

struct Data {
	size_t dim;
	std::vector<HnswRow> rows;
	std::vector<float> vectors;
};

// Seeded clustered data (centres plus noise), ids shuffled so the build must sort them.
Data Clustered(size_t n, size_t dim, uint64_t seed) {
	std::mt19937_64 rng(seed);
	std::normal_distribution<float> gauss(0.0f, 1.0f);
	const size_t n_centres = 32;
	std::vector<float> centres(n_centres * dim);
	for (auto &x : centres) {
		x = gauss(rng);
	}
	Data data {dim, {}, std::vector<float>(n * dim)};
	std::vector<int64_t> ids(n);
	for (size_t i = 0; i < n; i++) {
		ids[i] = int64_t(1) << 53 | int64_t(i * 7 + 3);
	}
	std::shuffle(ids.begin(), ids.end(), rng);
	for (size_t i = 0; i < n; i++) {
		const size_t c = rng() % n_centres;
		double s = 0;
		for (size_t d = 0; d < dim; d++) {
			const float x = centres[c * dim + d] + 0.6f * gauss(rng);
			data.vectors[i * dim + d] = x;
			s += double(x) * x;
		}
		data.rows.push_back(HnswRow {ids[i], 0, INT64_MAX, std::sqrt(s)});
	}
	return data;
}

std::vector<double> Query(size_t dim, std::mt19937_64 &rng) {
	std::normal_distribution<double> gauss(0.0, 1.0);
	std::vector<double> q(dim);
	for (auto &x : q) {
		x = gauss(rng);
	}
	return q;
}

// The exact top k ids by cosine (double), ties by id.
std::vector<int64_t> Exact(const Data &data, const std::vector<double> &q, size_t k) {
	std::vector<std::pair<double, int64_t>> all;
	for (size_t i = 0; i < data.rows.size(); i++) {
		double dot = 0;
		for (size_t d = 0; d < data.dim; d++) {
			dot += data.vectors[i * data.dim + d] * q[d];
		}
		all.push_back({-dot / data.rows[i].norm, data.rows[i].id});
	}
	std::sort(all.begin(), all.end());
	std::vector<int64_t> out;
	for (size_t i = 0; i < k && i < all.size(); i++) {
		out.push_back(all[i].second);
	}
	return out;
}

double RecallAt(const HnswIndex &index, const Data &data, size_t k, size_t ef, int queries, uint64_t seed) {
	std::mt19937_64 rng(seed);
	size_t found = 0, wanted = 0;
	for (int i = 0; i < queries; i++) {
		// queries near the data: a stored vector plus noise
		std::vector<double> q = Query(data.dim, rng);
		const size_t near = rng() % data.rows.size();
		for (size_t d = 0; d < data.dim; d++) {
			q[d] = data.vectors[near * data.dim + d] + 0.5 * q[d];
		}
		const std::vector<int64_t> truth = Exact(data, q, k);
		std::set<int64_t> got;
		for (const HnswCandidate &c : index.Search(q.data(), k, ef)) {
			got.insert(index.Row(c.row).id);
		}
		for (int64_t id : truth) {
			found += got.count(id);
		}
		wanted += truth.size();
	}
	return double(found) / double(wanted);
}

} // namespace

TEST_CASE("recall@10 and recall@50 against brute force on clustered data") {
	const Data data = Clustered(3000, 32, 11);
	auto index = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {16, 200, 42});
	CHECK_EQ(index->Size(), size_t(3000));
	const double r10 = RecallAt(*index, data, 10, 100, 50, 5);
	const double r50 = RecallAt(*index, data, 50, 150, 50, 6);
	CHECK(r10 >= 0.99);
	CHECK(r50 >= 0.99);
	// a search of ef 1 is a greedy walk: far below, which shows the graph (not luck) does the work
	CHECK(RecallAt(*index, data, 10, 1, 50, 5) < r10);
}

TEST_CASE("candidates come back best first with their rows") {
	const Data data = Clustered(500, 8, 3);
	auto index = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {8, 64, 1});
	std::mt19937_64 rng(9);
	const std::vector<double> q = Query(8, rng);
	const auto hits = index->Search(q.data(), 20, 64);
	CHECK_EQ(hits.size(), size_t(20));
	for (size_t i = 1; i < hits.size(); i++) {
		CHECK(hits[i - 1].similarity >= hits[i].similarity);
	}
	for (size_t i = 1; i < index->Size(); i++) {
		CHECK(index->Row(uint32_t(i - 1)).id < index->Row(uint32_t(i)).id); // rows sorted by id
	}
	const std::vector<double> zero(8, 0.0);
	CHECK(index->Search(zero.data(), 5, 10).empty());
}

TEST_CASE("the build is deterministic and the blob round-trips") {
	const Data data = Clustered(800, 16, 21);
	auto a = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {12, 100, 7});
	Data reversed = data;
	std::reverse(reversed.rows.begin(), reversed.rows.end());
	for (size_t i = 0; i < data.rows.size(); i++) {
		std::copy_n(data.vectors.begin() + (data.rows.size() - 1 - i) * data.dim, data.dim,
		            reversed.vectors.begin() + i * data.dim);
	}
	auto b = HnswIndex::Build(reversed.dim, reversed.rows, reversed.vectors, HnswParams {12, 100, 7});
	const std::string blob = a->Serialize();
	CHECK(blob == b->Serialize()); // input order does not matter
	auto c = HnswIndex::Deserialize(blob);
	CHECK(c->Serialize() == blob);
	CHECK_EQ(c->MaxLevel(), a->MaxLevel());
	std::mt19937_64 rng(4);
	for (int i = 0; i < 10; i++) {
		const std::vector<double> q = Query(16, rng);
		const auto x = a->Search(q.data(), 10, 40), y = c->Search(q.data(), 10, 40);
		CHECK_EQ(x.size(), y.size());
		for (size_t j = 0; j < x.size() && j < y.size(); j++) {
			CHECK_EQ(x[j].row, y[j].row);
			CHECK_EQ(x[j].similarity, y[j].similarity);
		}
	}
	auto other_seed = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {12, 100, 8});
	CHECK(other_seed->Serialize() != blob);
}

TEST_CASE("an empty index and a single row") {
	auto empty = HnswIndex::Build(4, {}, {}, HnswParams {});
	const std::vector<double> q {1, 0, 0, 0};
	CHECK(empty->Search(q.data(), 5, 10).empty());
	CHECK_EQ(HnswIndex::Deserialize(empty->Serialize())->Size(), size_t(0));
	auto one = HnswIndex::Build(4, {HnswRow {5, 0, 1, 1.0}}, {1, 0, 0, 0}, HnswParams {});
	const auto hits = HnswIndex::Deserialize(one->Serialize())->Search(q.data(), 5, 10);
	CHECK_EQ(hits.size(), size_t(1));
	CHECK_EQ(one->Row(hits[0].row).id, int64_t(5));
}

TEST_CASE("bad build input is refused") {
	CHECK_THROWS(HnswIndex::Build(0, {}, {}, HnswParams {}));
	CHECK_THROWS(HnswIndex::Build(2, {HnswRow {1, 0, 1, 1}}, {1, 0, 0}, HnswParams {}));
	CHECK_THROWS(HnswIndex::Build(1, {HnswRow {1, 0, 1, 1}, HnswRow {1, 0, 1, 1}}, {1, 1}, HnswParams {}));
	CHECK_THROWS(HnswIndex::Build(1, {}, {}, HnswParams {1, 10, 0}));
}

TEST_CASE("damaged blobs are rejected: every truncation, flipped bytes, another version") {
	const Data data = Clustered(200, 8, 5);
	const std::string blob = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {8, 32, 3})->Serialize();
	for (size_t len = 0; len < blob.size(); len += (len < 256 ? 1 : 97)) {
		CHECK_THROWS(HnswIndex::Deserialize(std::string_view(blob).substr(0, len)));
	}
	CHECK_THROWS(HnswIndex::Deserialize(blob + "x"));
	std::mt19937_64 rng(77);
	for (int i = 0; i < 300; i++) {
		std::string bad = blob;
		bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
		CHECK_THROWS(HnswIndex::Deserialize(bad));
	}
	std::string v1 = blob;
	v1[8] = 1; // the version field: format 1 had no calibration
	CHECK_THROWS(HnswIndex::Deserialize(v1));
	CHECK_THROWS(HnswIndex::ReadInfo(v1));
	for (size_t len = 0; len < 100; len++) {
		CHECK_THROWS(HnswIndex::ReadInfo(std::string_view(blob).substr(0, len)));
	}
}

// i.i.d. normal vectors: no structure, the hardest case for a graph index.
Data Normal(size_t n, size_t dim, uint64_t seed) {
	std::mt19937_64 rng(seed);
	std::normal_distribution<float> gauss(0.0f, 1.0f);
	Data data {dim, {}, std::vector<float>(n * dim)};
	for (size_t i = 0; i < n; i++) {
		double s = 0;
		for (size_t d = 0; d < dim; d++) {
			const float x = gauss(rng);
			data.vectors[i * dim + d] = x;
			s += double(x) * x;
		}
		data.rows.push_back(HnswRow {int64_t(i) * 3 + 1, 0, INT64_MAX, std::sqrt(s)});
	}
	return data;
}

double RecallOfNormalQueries(const HnswIndex &index, const Data &data, size_t k, size_t count, size_t ef,
                             int queries, uint64_t seed) {
	std::mt19937_64 rng(seed);
	size_t found = 0, wanted = 0;
	for (int i = 0; i < queries; i++) {
		const std::vector<double> q = Query(data.dim, rng);
		const std::vector<int64_t> truth = Exact(data, q, k);
		std::set<int64_t> got;
		const auto hits = index.Search(q.data(), count, ef);
		for (size_t h = 0; h < hits.size() && h < k; h++) {
			got.insert(index.Row(hits[h].row).id);
		}
		for (int64_t id : truth) {
			found += got.count(id);
		}
		wanted += truth.size();
	}
	return double(found) / double(wanted);
}

TEST_CASE("the thread count never changes the bytes") {
	const Data data = Normal(1500, 16, 8);
	const std::string one = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {8, 60, 5, 1})->Serialize();
	for (uint32_t threads : {2u, 3u, 7u}) {
		CHECK(HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {8, 60, 5, threads})->Serialize() == one);
	}
}

TEST_CASE("the calibrated width reaches the recall target on fresh queries where a fixed one does not") {
	// 4,000 i.i.d. 48-d rows: recall() asks for 100 candidates at depth 50
	const Data data = Normal(4000, 48, 13);
	auto index = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {16, 200, 42});
	const HnswCalibration &c = index->Calibration();
	CHECK_EQ(c.queries, 200u); // min(200, rows / 10) held out
	CHECK_EQ(c.at[0].depth, 10u);
	CHECK_EQ(c.at[0].candidates, 60u);
	CHECK_EQ(c.at[1].depth, 50u);
	CHECK_EQ(c.at[1].candidates, 100u);
	for (const HnswCalibration::Depth &at : c.at) {
		CHECK(at.ef >= at.candidates);
		CHECK(at.ef < 4000u); // the graph does the work: not an exhaustive search
		CHECK(at.recall_at_10 >= HnswCalibration::kTarget);
		CHECK(at.recall_at_depth >= HnswCalibration::kTarget);
	}
	const HnswInfo info = HnswIndex::ReadInfo(index->Serialize());
	CHECK_EQ(info.rows, uint64_t(4000));
	CHECK_EQ(info.calibration.at[1].ef, c.at[1].ef);
	CHECK_EQ(info.calibration.at[1].recall_at_depth, c.at[1].recall_at_depth);
	CHECK_EQ(HnswIndex::Deserialize(index->Serialize())->Calibration().at[0].ef, c.at[0].ef);
	// fresh queries (not the held-out rows): the calibrated width reaches 0.99, the width
	// of the candidates alone (100) falls short on this data
	CHECK(RecallOfNormalQueries(*index, data, 50, 100, c.at[1].ef, 100, 3) >= 0.99);
	CHECK(RecallOfNormalQueries(*index, data, 10, 60, c.at[0].ef, 100, 4) >= 0.99);
	CHECK(RecallOfNormalQueries(*index, data, 50, 100, 100, 100, 3) < 0.99);
}

TEST_CASE("below 1,000 rows nothing is held out and the width covers every row") {
	const Data data = Normal(400, 8, 2);
	const HnswCalibration c = HnswIndex::Build(data.dim, data.rows, data.vectors, HnswParams {})->Calibration();
	CHECK_EQ(c.queries, 0u);
	CHECK_EQ(c.at[0].ef, 400u);
	CHECK_EQ(c.at[1].ef, 400u);
}

ANATID_TEST_MAIN()
