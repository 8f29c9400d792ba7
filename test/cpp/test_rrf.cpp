// Hand-computed reciprocal rank fusion cases. Exact comparisons are deliberate where
// the contract fixes the summation order; CHECK_NEAR pins the hand arithmetic.
#include "check.hpp"
#include "rrf.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using anatid::FusedHit;
using anatid::FuseRrf;
using anatid::RrfWeights;

namespace {

std::string Order(const std::vector<FusedHit> &hits) {
	std::string out;
	for (size_t i = 0; i < hits.size(); i++) {
		out += (i ? "," : "") + std::to_string(hits[i].id);
	}
	return out;
}

std::string Arms(const std::vector<FusedHit> &hits) {
	std::string out;
	for (size_t i = 0; i < hits.size(); i++) {
		out += (i ? "," : "") + std::to_string(int(hits[i].arms));
	}
	return out;
}

} // namespace

TEST_CASE("two arms, default weights and k = 60") {
	// 10: 1/61 = .016393; 20: 1/62 + 1/61 = .032522; 30: 1/63 = .015873; 40: 1/62 = .016129
	auto hits = FuseRrf({10, 20, 30}, {20, 40}, {});
	CHECK_EQ(Order(hits), std::string("20,10,40,30"));
	CHECK_EQ(Arms(hits), std::string("3,1,2,1"));
	CHECK_NEAR(hits[0].score, 0.0325224749, 1e-10);
	CHECK_NEAR(hits[1].score, 0.0163934426, 1e-10);
	CHECK_NEAR(hits[2].score, 0.0161290323, 1e-10);
	CHECK_NEAR(hits[3].score, 0.0158730159, 1e-10);
}

TEST_CASE("three arms; equal scores are ordered by id") {
	// 1: 1/61 + 1/62 + 1/63 = .048395; 2: 1/62 + 1/61; 3: 1/61 + 1/62 (same two terms,
	// and a + b == b + a exactly in IEEE double, so 2 and 3 tie and 2 goes first).
	auto hits = FuseRrf({1, 2}, {3, 1}, {2, 3, 1});
	CHECK_EQ(Order(hits), std::string("1,2,3"));
	CHECK_EQ(Arms(hits), std::string("7,5,6"));
	CHECK_NEAR(hits[0].score, 0.0483954907, 1e-10);
	CHECK_EQ(hits[1].score, hits[2].score);
}

TEST_CASE("single-arm tie broken by id ascending") {
	auto hits = FuseRrf({5}, {3}, {});
	CHECK_EQ(Order(hits), std::string("3,5"));
	CHECK_EQ(hits[0].score, hits[1].score);
}

TEST_CASE("scores are summed vector, then text, then graph") {
	const RrfWeights w {0.3, 0.7, 0.1};
	const double k = 1.0;
	const double expected = ((0.0 + 0.3 / (1.0 + 1)) + 0.7 / (1.0 + 2)) + 0.1 / (1.0 + 1);
	auto weighted = FuseRrf({8}, {9, 8}, {8}, w, k);
	CHECK_EQ(weighted[0].id, int64_t(8));
	CHECK_EQ(weighted[0].score, expected);
}

TEST_CASE("weights and k = 0 reorder exactly") {
	// 1: 2/1 = 2.0; 2: 2/2 + 0.5/1 = 1.5
	auto hits = FuseRrf({1, 2}, {2}, {}, RrfWeights {2.0, 0.5, 1.0}, 0.0);
	CHECK_EQ(Order(hits), std::string("1,2"));
	CHECK_EQ(hits[0].score, 2.0);
	CHECK_EQ(hits[1].score, 1.5);
	// a heavy text arm wins: 1: 1/61; 2: 3/61
	auto text_heavy = FuseRrf({1}, {2}, {}, RrfWeights {1.0, 3.0, 1.0});
	CHECK_EQ(Order(text_heavy), std::string("2,1"));
}

TEST_CASE("empty arms contribute nothing") {
	CHECK(FuseRrf({}, {}, {}).empty());
	auto hits = FuseRrf({}, {}, {9, 8});
	CHECK_EQ(Order(hits), std::string("9,8"));
	CHECK_EQ(Arms(hits), std::string("4,4"));
	CHECK_EQ(hits[0].score, 1.0 / 61);
	CHECK_EQ(hits[1].score, 1.0 / 62);
}

TEST_CASE("a duplicate within one arm keeps its first rank") {
	// 4 counted once at rank 1; 5 keeps its position, rank 3
	auto hits = FuseRrf({4, 4, 5}, {}, {});
	CHECK_EQ(Order(hits), std::string("4,5"));
	CHECK_EQ(hits[0].score, 1.0 / 61);
	CHECK_EQ(hits[1].score, 1.0 / 63);
}

TEST_CASE("negative ids and extreme ids keep id order on ties") {
	const int64_t lo = std::numeric_limits<int64_t>::min();
	const int64_t hi = std::numeric_limits<int64_t>::max();
	auto hits = FuseRrf({hi}, {lo}, {-1});
	CHECK_EQ(hits[0].id, lo);
	CHECK_EQ(hits[1].id, int64_t(-1));
	CHECK_EQ(hits[2].id, hi);
}

TEST_CASE("invalid k and weights are rejected") {
	const double nan = std::numeric_limits<double>::quiet_NaN();
	const double inf = std::numeric_limits<double>::infinity();
	CHECK_THROWS(FuseRrf({1}, {}, {}, RrfWeights(), -1.0));
	CHECK_THROWS(FuseRrf({1}, {}, {}, RrfWeights(), inf));
	CHECK_THROWS(FuseRrf({1}, {}, {}, RrfWeights {nan, 1.0, 1.0}));
	CHECK_THROWS(FuseRrf({1}, {}, {}, RrfWeights {1.0, 1.0, inf}));
}

ANATID_TEST_MAIN()
