// Episode neighbours (src/episode_neighbours.cpp): hand-checked cases, and on random
// episodes a brute force written from the contract in its header.
#include "check.hpp"
#include "episode_neighbours.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

using namespace anatid;

namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

Pairs BruteForce(const std::vector<EvidenceRow> &ev, const std::vector<int64_t> &sources,
                 const std::set<int64_t> &hidden) {
	Pairs out;
	for (int64_t t : sources) {
		std::set<int64_t> episodes;
		for (const auto &r : ev) {
			if (r.memory_id == t) {
				episodes.insert(r.episode_id);
			}
		}
		for (int64_t e : episodes) {
			bool self = false;
			int64_t prev = -1, next = -1;
			for (const auto &r : ev) {
				if (r.episode_id != e || hidden.count(r.memory_id)) {
					continue;
				}
				self = self || r.memory_id == t;
				if (r.memory_id < t && (prev < 0 || r.memory_id > prev)) {
					prev = r.memory_id;
				}
				if (r.memory_id > t && (next < 0 || r.memory_id < next)) {
					next = r.memory_id;
				}
			}
			if (!self) {
				continue;
			}
			if (prev >= 0) {
				out.emplace_back(prev, t);
			}
			if (next >= 0) {
				out.emplace_back(next, t);
			}
		}
	}
	std::sort(out.begin(), out.end(), [](const std::pair<int64_t, int64_t> &a, const std::pair<int64_t, int64_t> &b) {
		return a.second != b.second ? a.second < b.second : a.first < b.first;
	});
	return out;
}

} // namespace

TEST_CASE("the turn before and after, in each episode, visible ones only") {
	// episode 1: 10 20 30 40; episode 2: 30 50; 20 is hidden
	const std::vector<EvidenceRow> ev = {{10, 1}, {20, 1}, {30, 1}, {40, 1}, {30, 2}, {50, 2}, {30, 2}};
	auto visible = [](int64_t id) { return id != 20; };
	const Pairs got = EpisodeNeighbours(ev, {30}, visible);
	const Pairs want = {{10, 30}, {40, 30}, {50, 30}};
	CHECK_EQ(got.size(), want.size());
	CHECK(got == want);
	// a hidden source has no neighbours; an unknown one neither
	CHECK(EpisodeNeighbours(ev, {20, 99}, visible).empty());
	// a neighbour shared through two episodes counts twice
	const std::vector<EvidenceRow> twice = {{1, 7}, {2, 7}, {1, 8}, {2, 8}};
	const Pairs both = EpisodeNeighbours(twice, {2}, [](int64_t) { return true; });
	CHECK_EQ(both.size(), size_t(2));
	CHECK(both[0] == std::make_pair(int64_t(1), int64_t(2)));
}

TEST_CASE("random episodes agree with a brute force of the contract") {
	std::mt19937_64 rng(17);
	for (int round = 0; round < 200; round++) {
		std::vector<EvidenceRow> ev;
		const int n = 1 + int(rng() % 40);
		for (int i = 0; i < n; i++) {
			ev.push_back(EvidenceRow {int64_t(rng() % 30), int64_t(rng() % 4)});
		}
		std::set<int64_t> hidden;
		for (int i = 0; i < 5; i++) {
			hidden.insert(int64_t(rng() % 30));
		}
		std::vector<int64_t> sources;
		for (int i = 0; i < 3; i++) {
			const int64_t s = int64_t(rng() % 30);
			if (std::find(sources.begin(), sources.end(), s) == sources.end()) {
				sources.push_back(s);
			}
		}
		const Pairs got = EpisodeNeighbours(ev, sources, [&](int64_t id) { return !hidden.count(id); });
		CHECK(got == BruteForce(ev, sources, hidden));
	}
}

ANATID_TEST_MAIN()
