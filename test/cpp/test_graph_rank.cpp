// The hybrid graph arm's ranking (src/graph_rank.cpp): hand-checked hub damping, named
// seeds, extras and the codec block; and on random graphs with hubs, a base plus a journal
// ranks exactly as a brute-force model of the contract over the final state.
#include "check.hpp"
#include "graph_codec.hpp"
#include "graph_generation.hpp"
#include "graph_rank.hpp"
#include "graph_recall.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace anatid::graph;

namespace {

std::string Ids(const std::vector<RecallHit> &hits) {
	std::string out;
	for (const auto &h : hits) {
		out += (out.empty() ? "" : ",") + std::to_string(h.memory_id) + "@" + std::to_string(h.hop);
	}
	return out;
}

std::vector<RecallHit> RankOver(const Generation *base, std::vector<JournalRow> journal, const RecallRequest &r) {
	SortBySeq(journal);
	std::vector<JournalSegment> segments {std::make_shared<const std::vector<JournalRow>>(std::move(journal))};
	JournalFold fold(base, std::move(segments), r.valid_at_us);
	return Rank(fold, r);
}

RecallRequest Ask(std::vector<int64_t> trusted, std::vector<std::string> seeds = {}, int64_t limit = 50) {
	RecallRequest r;
	r.seed_keys = std::move(seeds);
	r.hops = 2;
	r.limit = limit;
	r.valid_at_us = 1000;
	r.rank.enabled = true;
	r.rank.trusted = std::move(trusted);
	return r;
}

// Hub h (entity 1) is on memories 100..129 and 200; rare r (entity 2) on 200 and 201.
BuildInput HubAndRare() {
	BuildInput in;
	in.entity_ids = {1, 2};
	in.entity_keys = {"h", "r"};
	for (int64_t m = 100; m < 130; m++) {
		in.about_memory.push_back(m);
		in.about_entity.push_back(1);
		in.about_kind.push_back("fact");
	}
	for (auto [m, e] : std::vector<std::pair<int64_t, int64_t>> {{200, 1}, {200, 2}, {201, 2}}) {
		in.about_memory.push_back(m);
		in.about_entity.push_back(e);
		in.about_kind.push_back(m == 201 ? "note" : "fact");
	}
	return in;
}

} // namespace

TEST_CASE("a hub's mass is gated; a rare entity links a trusted hit to its other memory") {
	auto g = Generation::Build({1, 0, 10}, HubAndRare());
	// N = 32 visible memories, deg(h) = 31 > max(20, 1.6): a hub; deg(r) = 2
	CHECK_EQ(Ids(RankOver(g.get(), {}, Ask({200}))), "201@1,200@1"); // tie on score: hop, then newest first
	// the hub named by the query is gated too; named by the caller, it keeps its mass
	// (it is said: the gated seed's index in seed_keys, its share of the visible memories)
	const auto gated = RankOver(g.get(), {}, Ask({}, {"x", "h"}));
	CHECK_EQ(Ids(gated), "1@-11");
	CHECK(gated[0].score == 31.0 / 32.0);
	RecallRequest named = Ask({}, {"h"}, 3);
	named.rank.named_ungated = true;
	CHECK_EQ(Ids(RankOver(g.get(), {}, named)), "200@0,129@0,128@0"); // and nothing is said
	// kinds filter the candidates, not the degrees
	RecallRequest kinds = Ask({200});
	kinds.filter_kinds = true;
	kinds.kinds = {"fact"};
	CHECK_EQ(Ids(RankOver(g.get(), {}, kinds)), "200@1");
	// extras (episode neighbours) add as given; a tombstone removes a memory
	RecallRequest extra = Ask({200});
	extra.rank.extra_ids = {300};
	extra.rank.extra_src = {200};
	extra.rank.extra_c = {100.0};
	JournalRow gone;
	gone.seq = 2;
	gone.op = kOpMemoryClosed;
	gone.a = 201;
	CHECK_EQ(Ids(RankOver(g.get(), {gone}, extra)), "300@1,200@1");
}

TEST_CASE("codec: the ranking block round-trips; a request without it asks for plain recall") {
	ParsedRequest plain = ParseRequest("2|50|1000|0|1|1:h|-1");
	CHECK(!plain.request.rank.enabled);
	ParsedRequest p = ParseRequest("2|50|1000|0|1|1:h|-1|1.0|0.5|0.05|20|1|2|200|7|1|300|200|0.1|1.5|3|10|2|200|0.5|7|0.25");
	CHECK(p.request.rank.enabled);
	CHECK(p.request.rank.expand == 0.5 && p.request.rank.hub_share == 0.05 && p.request.rank.hub_floor == 20);
	CHECK(p.request.rank.named_ungated);
	CHECK(p.request.rank.trusted == (std::vector<int64_t> {200, 7}));
	CHECK(p.request.rank.extra_ids == (std::vector<int64_t> {300}) && p.request.rank.extra_c[0] == 0.1);
	CHECK(p.request.rank.wg == 1.5 && p.request.rank.protect == 3 && p.request.rank.k == 10);
	CHECK(p.request.rank.first_ids == (std::vector<int64_t> {200, 7}));
	CHECK(p.request.rank.first_scores == (std::vector<double> {0.5, 0.25}));
	CHECK_THROWS(ParseRequest("2|50|1000|0|1|1:h|-1|1.0|x|0.05|20|1|0|0|1.0|3|10|0"));
	CHECK_THROWS(ParseRequest("2|50|1000|0|1|1:h|-1|1.0|0.5|0.05|20|1|0|0|1.0|3|10|2|200|0.5"));  // one first hit short
}

TEST_CASE("fusion: the protected head keeps its places, the rest by first score + wg / (60 + graph rank)") {
	RankRequest r;
	r.first_ids = {5, 6, 7, 8};
	r.first_scores = {0.03, 0.02, 0.016, 0.015};
	r.protect = 2;
	r.wg = 1.0;
	r.k = 10;
	// 8: 0.015 + 1/61 = 0.0314; 9 (graph only): 1/62 = 0.016129 > 7's 0.016
	std::vector<RecallHit> fused = Fuse(r, {RecallHit {8, 1}, RecallHit {9, 0}});
	CHECK_EQ(Ids(fused), "5@-10,6@-10,8@1,9@0,7@-10");
	CHECK(fused[2].score == 0.015 + 1.0 / 61.0);
	CHECK(fused[0].score == 0.03);
	r.k = 3;
	CHECK_EQ(Ids(Fuse(r, {RecallHit {8, 1}, RecallHit {9, 0}})), "5@-10,6@-10,8@1");
	r.protect = 0;   // nothing protected: 8 overtakes 5
	r.k = 10;
	CHECK_EQ(Ids(Fuse(r, {RecallHit {8, 1}})), "8@1,5@-10,6@-10,7@-10");
}

// The contract over a final state, written plainly: about links (memory, entity, kind),
// undirected relates pairs, keys.
std::vector<RecallHit> Model(const std::vector<std::tuple<int64_t, int64_t, std::string>> &about,
                             const std::vector<std::pair<int64_t, int64_t>> &edges,
                             const std::map<std::string, int64_t> &keys, const RecallRequest &r) {
	std::map<int64_t, std::set<int64_t>> of_entity, of_memory;
	std::map<int64_t, std::string> kind;
	for (const auto &[m, e, k] : about) {
		of_entity[e].insert(m);
		of_memory[m].insert(e);
		kind[m] = k;
	}
	const double n = double(of_memory.size());
	std::map<int64_t, int> dist;
	std::vector<int64_t> frontier;
	for (const auto &key : r.seed_keys) {
		auto it = keys.find(key);
		if (it != keys.end() && !dist.count(it->second)) {
			dist[it->second] = 0;
			frontier.push_back(it->second);
		}
	}
	for (int h = 1; h <= r.hops; h++) {
		std::vector<int64_t> next;
		for (int64_t v : frontier) {
			for (const auto &[a, b] : edges) {
				for (int64_t u : {a == v ? b : -1, b == v ? a : -1}) {
					if (u >= 0 && !dist.count(u)) {
						dist[u] = h;
						next.push_back(u);
					}
				}
			}
		}
		frontier = next;
	}
	struct C {
		int kind;
		int64_t src;
		double c;
		int hop;
	};
	std::vector<std::tuple<int64_t, int, int, double>> mass; // entity, kind, hop, m
	for (const auto &[e, h] : dist) {
		mass.emplace_back(e, 0, h, r.rank.named * std::pow(0.5, h));
	}
	std::vector<std::pair<int64_t, double>> trusted;
	for (size_t i = 0; i < r.rank.trusted.size(); i++) {
		trusted.emplace_back(r.rank.trusted[i], 1.0 / double(i + 1));
	}
	std::sort(trusted.begin(), trusted.end());
	std::map<int64_t, double> trust;
	for (const auto &[m, w] : trusted) {
		for (int64_t e : of_memory[m]) {
			trust[e] = trust.count(e) ? trust[e] + w : 0.0 + w;
		}
	}
	for (const auto &[e, w] : trust) {
		mass.emplace_back(e, 1, 1, r.rank.expand * w);
	}
	std::map<int64_t, std::vector<C>> got;
	std::vector<RecallHit> gated;
	for (const auto &[e, k, h, m] : mass) {
		const auto &ms = of_entity[e];
		const double deg = double(ms.size());
		if (deg == 0 || (deg > std::max(double(r.rank.hub_floor), r.rank.hub_share * n) &&
		                 !(k == 0 && r.rank.named_ungated))) {
			if (deg > 0 && k == 0 && h == 0) {
				gated.push_back(RecallHit {0, kHopGatedSeed, deg / n}); // the one seed is key 0
			}
			continue;
		}
		int taken = 0;
		for (auto it = ms.rbegin(); it != ms.rend() && taken < r.limit; ++it, ++taken) {
			got[*it].push_back(C {k, e, m * std::log(1 + n / deg), h});
		}
	}
	std::vector<std::tuple<double, int, int64_t>> scored;
	for (auto &[m, cs] : got) {
		std::sort(cs.begin(), cs.end(), [](const C &x, const C &y) {
			return x.kind != y.kind ? x.kind < y.kind : x.src < y.src;
		});
		double s = 0;
		int hop = 99;
		for (const C &c : cs) {
			s += c.c;
			hop = std::min(hop, c.hop);
		}
		if (s > 0) {
			scored.emplace_back(s, hop, m);
		}
	}
	std::sort(scored.begin(), scored.end(), [](const auto &x, const auto &y) {
		if (std::get<0>(x) != std::get<0>(y)) {
			return std::get<0>(x) > std::get<0>(y);
		}
		return std::get<1>(x) != std::get<1>(y) ? std::get<1>(x) < std::get<1>(y) : std::get<2>(x) > std::get<2>(y);
	});
	std::vector<RecallHit> out;
	for (size_t i = 0; i < scored.size() && int64_t(i) < r.limit; i++) {
		out.push_back(RecallHit {std::get<2>(scored[i]), int32_t(std::get<1>(scored[i]))});
	}
	out.insert(out.end(), gated.begin(), gated.end());
	return out;
}

TEST_CASE("random graphs with hubs: base + journal ranks as the model over the final state") {
	std::mt19937_64 rng(7);
	for (int round = 0; round < 200; round++) {
		const int entities = 3 + int(rng() % 10);
		const int memories = 5 + int(rng() % 60);
		std::vector<std::tuple<int64_t, int64_t, std::string>> about;
		for (int m = 0; m < memories; m++) {
			std::set<int64_t> es {1}; // entity 1 is on every memory: a hub
			for (int k = int(rng() % 3); k > 0; k--) {
				es.insert(1 + int64_t(rng() % uint64_t(entities)));
			}
			for (int64_t e : es) {
				about.emplace_back(1000 + m, e, rng() % 4 ? "fact" : "note");
			}
		}
		std::vector<std::pair<int64_t, int64_t>> edges;
		for (int k = int(rng() % 6); k > 0; k--) {
			const int64_t a = 1 + int64_t(rng() % uint64_t(entities)), b = 1 + int64_t(rng() % uint64_t(entities));
			if (a != b) {
				edges.emplace_back(std::min(a, b), std::max(a, b));
			}
		}
		std::map<std::string, int64_t> keys;
		BuildInput in;
		for (int e = 1; e <= entities; e++) {
			in.entity_ids.push_back(e);
			in.entity_keys.push_back("e" + std::to_string(e));
			keys["e" + std::to_string(e)] = e;
		}
		for (const auto &[a, b] : edges) {
			in.edge_a.push_back(a);
			in.edge_b.push_back(b);
		}
		// the base holds the first part of the memories, the journal the rest
		const int split = int(rng() % uint64_t(memories + 1));
		std::vector<JournalRow> journal;
		int64_t seq = 1;
		for (const auto &[m, e, k] : about) {
			if (m - 1000 < split) {
				in.about_memory.push_back(m);
				in.about_entity.push_back(e);
				in.about_kind.push_back(k);
			} else {
				JournalRow row;
				row.seq = seq++;
				row.op = kOpAbout;
				row.a = m;
				row.b = e;
				row.b_key = "e" + std::to_string(e);
				row.kind = k;
				journal.push_back(row);
			}
		}
		auto g = Generation::Build({1, 0, 10}, in);
		RecallRequest r = Ask({});
		for (int t = int(rng() % 5); t > 0; t--) {
			r.rank.trusted.push_back(1000 + int64_t(rng() % uint64_t(memories)));
		}
		if (rng() % 2) {
			r.seed_keys.push_back("e" + std::to_string(1 + rng() % uint64_t(entities)));
		}
		r.rank.named_ungated = rng() % 2;
		r.rank.hub_floor = int64_t(rng() % 8);
		r.rank.hub_share = 0.3;
		r.limit = 1 + int64_t(rng() % 20);
		CHECK_EQ(Ids(RankOver(g.get(), journal, r)), Ids(Model(about, edges, keys, r)));
	}
}

ANATID_TEST_MAIN()
