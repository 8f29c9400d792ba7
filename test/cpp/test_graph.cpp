// The graph core against hand-checked cases and a brute-force model on random graphs:
// base + journal must answer exactly what a plain BFS over the final state answers.
#include "check.hpp"
#include "graph_cache.hpp"
#include "graph_codec.hpp"
#include "graph_generation.hpp"
#include "graph_recall.hpp"

#include <algorithm>
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

// a - b - c - d, plus e isolated; memories 100.. about them.
BuildInput Chain() {
	BuildInput in;
	in.entity_ids = {1, 2, 3, 4, 5};
	in.entity_keys = {"a", "b", "c", "d", "e"};
	in.edge_a = {1, 3, 2};
	in.edge_b = {2, 2, 4};
	in.about_memory = {100, 101, 102, 103, 104, 104};
	in.about_entity = {1, 2, 3, 4, 5, 4};
	in.about_kind = {"fact", "fact", "note", "fact", "fact", "fact"};
	return in;
}

// The text SQL writes for a journal row (python/anatid/indexes/graph.py, _ENTRY).
std::string Entry(const JournalRow &r) {
	auto num = [](int64_t v, int64_t open) { return v == open ? std::string() : std::to_string(v); };
	auto str = [](const std::string &v) { return v.empty() ? std::string() : std::to_string(v.size()) + ":" + v; };
	return std::to_string(int(r.op)) + "|" + std::to_string(r.seq) + "|" + std::to_string(r.a) + "|" +
	       std::to_string(r.b) + "|" + num(r.valid_from_us, kOpenLow) + "|" + num(r.valid_to_us, kOpenHigh) + "|" +
	       str(r.a_key) + "|" + str(r.b_key) + "|" + str(r.kind);
}

std::string Encoded(const std::vector<JournalRow> &rows, size_t from = 0, size_t to = size_t(-1)) {
	std::string out;
	for (size_t i = from; i < std::min(to, rows.size()); i++) {
		AppendJournalEntry(out, Entry(rows[i]));
	}
	return out;
}

RecallRequest Ask(std::vector<std::string> seeds, int hops, int64_t limit = 50) {
	RecallRequest r;
	r.seed_keys = std::move(seeds);
	r.hops = hops;
	r.limit = limit;
	r.valid_at_us = 1000;
	return r;
}

} // namespace

TEST_CASE("chain: hops, order and dedup") {
	auto g = Generation::Build({7, 0, 10}, Chain());
	CHECK_EQ(Ids(Recall(g.get(), {}, Ask({"a"}, 0))), std::string("100@0"));
	CHECK_EQ(Ids(Recall(g.get(), {}, Ask({"a"}, 1))), std::string("100@0,101@1"));
	// c and d are both at hop 2 from a; 104 is about d and e, so it appears once
	CHECK_EQ(Ids(Recall(g.get(), {}, Ask({"a"}, 2))), std::string("100@0,101@1,104@2,103@2,102@2"));
	CHECK_EQ(Ids(Recall(g.get(), {}, Ask({"a"}, 2, 3))), std::string("100@0,101@1,104@2"));
	CHECK_EQ(Ids(Recall(g.get(), {}, Ask({"e", "a"}, 1))), std::string("104@0,100@0,101@1"));
	CHECK_EQ(Ids(Recall(g.get(), {}, Ask({"nobody"}, 2))), std::string(""));
	RecallRequest kinds = Ask({"a"}, 2);
	kinds.filter_kinds = true;
	kinds.kinds = {"note"};
	CHECK_EQ(Ids(Recall(g.get(), {}, kinds)), std::string("102@2"));
}

TEST_CASE("journal: new edges, closed pairs, new memories, tombstones") {
	auto g = Generation::Build({7, 0, 10}, Chain());
	std::vector<JournalRow> j;
	JournalRow close;
	close.seq = 5;
	close.op = kOpEdgeClosed;
	close.a = 2;
	close.b = 1; // either order closes pair {1, 2}
	j.push_back(close);
	JournalRow edge;
	edge.seq = 6;
	edge.op = kOpEdgeInterval;
	edge.a = 1;
	edge.b = 9; // a new entity
	edge.a_key = "a";
	edge.b_key = "z";
	j.push_back(edge);
	JournalRow about;
	about.seq = 7;
	about.op = kOpAbout;
	about.a = 200;
	about.b = 9;
	about.b_key = "z";
	about.kind = "fact";
	j.push_back(about);
	JournalRow future = about;
	future.seq = 8;
	future.a = 201;
	future.valid_from_us = 5000; // not yet valid at 1000
	j.push_back(future);
	JournalRow gone;
	gone.seq = 9;
	gone.op = kOpMemoryClosed;
	gone.a = 100;
	j.push_back(gone);
	CHECK_EQ(Ids(Recall(g.get(), j, Ask({"a"}, 2))), std::string("200@1"));
	CHECK_EQ(Ids(Recall(g.get(), j, Ask({"z"}, 1))), std::string("200@0"));
	// a later restatement reopens {1, 2}
	JournalRow reopen = edge;
	reopen.seq = 10;
	reopen.a = 2;
	reopen.b = 1;
	j.push_back(reopen);
	CHECK_EQ(Ids(Recall(g.get(), j, Ask({"a"}, 1))), std::string("200@1,101@1"));
}

TEST_CASE("serialize and parse round trip; corrupt BLOBs are refused") {
	auto g = Generation::Build({7, 3, 10}, Chain());
	const std::string blob = g->Serialize();
	auto p = Generation::Parse(blob.data(), blob.size());
	CHECK_EQ(p->header.generation_id, int64_t(7));
	CHECK_EQ(p->header.tenant_id, int64_t(3));
	CHECK_EQ(Ids(Recall(p.get(), {}, Ask({"a"}, 2))), Ids(Recall(g.get(), {}, Ask({"a"}, 2))));
	CHECK_EQ(p->Serialize(), blob);
	CHECK_THROWS(Generation::Parse(blob.data(), blob.size() - 1));
	CHECK_THROWS(Generation::Parse("nonsense", 8));
	std::string bad = blob;
	bad[bad.size() - 1] = char(0x7f); // an ABOUT entry pointing past the memories
	CHECK_THROWS(Generation::Parse(bad.data(), bad.size()));
}

TEST_CASE("bad requests are refused") {
	auto g = Generation::Build({7, 0, 10}, Chain());
	CHECK_THROWS(Recall(g.get(), {}, Ask({"a"}, 5)));
	CHECK_THROWS(Recall(g.get(), {}, Ask({"a"}, 2, 0)));
	RecallRequest past = Ask({"a"}, 2);
	past.valid_at_us = 9; // before built_at
	CHECK_THROWS(Recall(g.get(), {}, past));
	BuildInput dangling = Chain();
	dangling.edge_b[0] = 99;
	CHECK_THROWS(Generation::Build({7, 0, 10}, dangling));
}

TEST_CASE("cache: LRU eviction within the byte budget") {
	auto &cache = GenerationCache::Instance();
	cache.Clear();
	auto g = Generation::Build({1, 0, 10}, Chain());
	const size_t one = g->ByteSize();
	cache.SetBudget(one * 2 + one / 2);
	cache.Put({1, 0}, g);
	cache.Put({2, 0}, Generation::Build({2, 0, 10}, Chain()));
	CHECK(cache.Get({1, 0}) != nullptr); // 1 is now most recent
	cache.Put({3, 0}, Generation::Build({3, 0, 10}, Chain()));
	CHECK(cache.Contains({1, 0}));
	CHECK(!cache.Contains({2, 0}));
	CHECK(cache.Contains({3, 0}));
	auto s = cache.Stats();
	CHECK_EQ(s.entries, size_t(2));
	CHECK_EQ(s.evictions, uint64_t(1));
	CHECK(s.resident_bytes <= s.budget_bytes);
	cache.SetBudget(GenerationCache::kDefaultBudget);
	cache.Clear();
}

TEST_CASE("journal cache: reuse only the exact bytes, extend appends, refold outside the range") {
	auto &cache = JournalCache::Instance();
	cache.Clear();
	std::shared_ptr<const Generation> g = Generation::Build({7, 0, 10}, Chain());
	std::vector<JournalRow> j(3);
	j[0].seq = 5; // memory 200 ABOUT b, visible from 2000
	j[0].op = kOpAbout;
	j[0].a = 200;
	j[0].b = 2;
	j[0].b_key = "b";
	j[0].kind = "fact";
	j[0].valid_from_us = 2000;
	j[1].seq = 6; // close pair {b, c}
	j[1].op = kOpEdgeClosed;
	j[1].a = 3;
	j[1].b = 2;
	j[2].seq = 7; // forget 100
	j[2].op = kOpMemoryClosed;
	j[2].a = 100;
	auto answer = [&](const std::string &encoded, int64_t at) {
		RecallRequest r = Ask({"a"}, 2);
		r.valid_at_us = at;
		return Ids(Recall(*cache.Fold({7, 0}, g, encoded, at), r));
	};
	auto fresh = [&](std::vector<JournalRow> rows, int64_t at) {
		RecallRequest r = Ask({"a"}, 2);
		r.valid_at_us = at;
		return Ids(Recall(g.get(), std::move(rows), r));
	};
	const std::string two = Encoded(j, 0, 2);
	CHECK_EQ(answer(two, 1000), std::string("100@0,101@1,104@2,103@2"));
	auto first = cache.Fold({7, 0}, g, two, 1500);
	CHECK(first == cache.Fold({7, 0}, g, two, 1999)); // the same bytes, no bound crossed: reused
	CHECK_EQ(cache.Stats().misses, uint64_t(1));
	CHECK_EQ(cache.Stats().hits, uint64_t(2));
	CHECK(!first->Covers(2000));
	CHECK_EQ(answer(two, 3000), std::string("100@0,200@1,101@1,104@2,103@2")); // crosses valid_from: refolded
	CHECK_EQ(answer(two, 3000), fresh({j[0], j[1]}, 3000));
	CHECK_EQ(cache.Stats().refolds, uint64_t(1));
	const std::string all = Encoded(j);
	CHECK_EQ(answer(all, 3000), fresh(j, 3000)); // appended: only j[2] parsed
	CHECK_EQ(answer(all, 3000), std::string("200@1,101@1,104@2,103@2"));
	CHECK_EQ(cache.Stats().extends, uint64_t(1));
	const std::string rolled_back = Encoded(j, 1); // j[0] gone (a rollback): parsed in full
	CHECK_EQ(answer(rolled_back, 3000), fresh({j[1], j[2]}, 3000));
	CHECK_EQ(cache.Stats().misses, uint64_t(2));
	// the same generation id parsed again into another object: refolded over it
	std::shared_ptr<const Generation> again = Generation::Build({7, 0, 10}, Chain());
	auto over_again = cache.Fold({7, 0}, again, rolled_back, 3000);
	CHECK(over_again->Base() == again.get());
	CHECK_EQ(cache.Stats().refolds, uint64_t(2));
	// readers in different transactions alternate between journal states: each stays cached
	const uint64_t hits = cache.Stats().hits;
	for (int i = 0; i < 3; i++) {
		cache.Fold({7, 0}, g, two, 3000);
		cache.Fold({7, 0}, g, all, 3000);
	}
	CHECK_EQ(cache.Stats().hits, hits + 6);
	for (size_t n = 0; n <= JournalCache::kPerGeneration; n++) { // more states than kept: the oldest goes
		std::vector<JournalRow> more = j;
		more[2].a = 300 + int64_t(n);
		cache.Fold({9, 0}, g, Encoded(more, 2), 3000);
	}
	const uint64_t misses = cache.Stats().misses;
	std::vector<JournalRow> first_state = j;
	first_state[2].a = 300;
	cache.Fold({9, 0}, g, Encoded(first_state, 2), 3000);
	CHECK_EQ(cache.Stats().misses, misses + 1);
	// one write after another, each read extending the last: segments, merged past a bound
	std::vector<JournalRow> grown = j;
	for (int w = 0; w < 40; w++) {
		JournalRow more = j[0];
		more.seq = 100 + w;
		more.a = 400 + w;
		more.b = 1 + w % 5;
		more.b_key = std::string(1, char('a' + w % 5));
		more.valid_from_us = w % 3 ? kOpenLow : 2500; // some not yet visible at 2000
		grown.push_back(more);
		if (w % 7 == 3) { // and an out-of-order row now and then (re-sorted)
			JournalRow early = j[2];
			early.seq = 1;
			early.a = 400 + w - 1;
			grown.push_back(early);
		}
		RecallRequest r = Ask({"a"}, 2);
		r.valid_at_us = 2000 + (w % 2) * 1000;
		if (Ids(Recall(*cache.Fold({11, 0}, g, Encoded(grown), r.valid_at_us), r)) != Ids(Recall(g.get(), grown, r))) {
			CHECK_EQ(Ids(Recall(*cache.Fold({11, 0}, g, Encoded(grown), r.valid_at_us), r)), Ids(Recall(g.get(), grown, r)));
			break;
		}
	}
	CHECK(cache.Stats().extends >= 40);
	RecallRequest outside = Ask({"a"}, 2);
	outside.valid_at_us = 1000;
	CHECK_THROWS(Recall(*cache.Fold({7, 0}, g, all, 3000), outside)); // a fold answers only its range
	std::string bad;
	AppendJournalEntry(bad, "3|x");
	CHECK_THROWS(cache.Fold({8, 0}, g, bad, 3000));
	bad.resize(bad.size() - 1);
	CHECK_THROWS(cache.Fold({8, 0}, g, bad, 3000)); // truncated
	cache.Clear();
	CHECK_EQ(cache.Stats().entries, size_t(0));
}

TEST_CASE("journal cache: without a base the journal is the whole graph") {
	// what a tenant that never had a generation reads (anatid_graph_recall, mode 2); the rows
	// in their stored text form: op|seq|a|b|valid_from_us|valid_to_us|a_key|b_key|kind
	auto &cache = JournalCache::Instance();
	cache.Clear();
	std::vector<JournalRow> j;
	for (const char *entry : {
	         "1|3|1|2|||1:a|1:b|",      // entities 1 (a) and 2 (b) connected
	         "3|4|500|2||||1:b|4:fact", // memory 500 ABOUT b
	         "3|5|400|1||||1:a|4:note", // memory 400 ABOUT a
	         "3|6|600|2|5000|||1:b|4:fact", // memory 600 ABOUT b, visible from 5000
	         "2|2|2|1|||||",            // an older restatement (seq 2): the open interval wins;
	                                    // out of seq order and without keys on purpose
	     }) {
		j.push_back(ParseJournalEntry(entry));
	}
	const JournalRow closed = j.back();
	RecallRequest r = Ask({"a"}, 2);
	r.valid_at_us = 1000;
	const std::string encoded = Encoded(j);
	CHECK_EQ(Ids(Recall(*cache.Fold({0, 0}, nullptr, encoded, 1000), r)), std::string("400@0,500@1"));
	CHECK_EQ(Ids(Recall(*cache.Fold({0, 0}, nullptr, encoded, 1000), r)), Ids(Recall(nullptr, j, r)));
	r.filter_kinds = true;
	r.kinds = {"fact"};
	CHECK_EQ(Ids(Recall(*cache.Fold({0, 0}, nullptr, encoded, 1000), r)), std::string("500@1"));
	r.filter_kinds = false;
	r.kinds.clear();
	r.valid_at_us = 6000;
	CHECK_EQ(Ids(Recall(*cache.Fold({0, 0}, nullptr, encoded, 6000), r)), std::string("400@0,600@1,500@1"));
	JournalRow reclosed = closed;
	reclosed.seq = 7; // now the pair is closed: b's memories are out of reach from a
	j.push_back(reclosed);
	CHECK_EQ(Ids(Recall(*cache.Fold({0, 0}, nullptr, Encoded(j), 6000), r)), std::string("400@0"));
	CHECK_EQ(Ids(Recall(nullptr, j, r)), std::string("400@0"));
	cache.Clear();
}

TEST_CASE("cache: equal generation ids with different nonces are different generations") {
	// two files maintained in the same millisecond hold equal ids (python/anatid/ids.py)
	auto &cache = GenerationCache::Instance();
	cache.Clear();
	auto mine = Generation::Build({5, 0, 10}, Chain());
	auto theirs = Generation::Build({5, 0, 10}, Chain());
	cache.Put({5, 111}, mine);
	CHECK(!cache.Contains({5, 222}));
	CHECK(cache.Get({5, 222}) == nullptr);
	cache.Put({5, 222}, theirs);
	CHECK(cache.Get({5, 111}) == mine);
	CHECK(cache.Get({5, 222}) == theirs);
	CHECK_EQ(cache.Stats().entries, size_t(2));
	// the journal fold over each is its own, though the bytes are equal
	auto &journal = JournalCache::Instance(); // after the journal cache tests: they count stats from zero
	journal.Clear();
	const uint64_t misses = journal.Stats().misses;
	const std::string none;
	auto a = journal.Fold({5, 111}, mine, none, 1000);
	auto b = journal.Fold({5, 222}, theirs, none, 1000);
	CHECK(a->Base() == mine.get());
	CHECK(b->Base() == theirs.get());
	CHECK_EQ(journal.Stats().misses, misses + 2);
	journal.Clear();
	cache.Clear();
}

TEST_CASE("codec: journal entries and requests") {
	JournalRow r = ParseJournalEntry("3|17|100|7|5|9||6:a|b c:|4:fact");
	CHECK_EQ(int(r.op), 3);
	CHECK_EQ(r.seq, int64_t(17));
	CHECK_EQ(r.a, int64_t(100));
	CHECK_EQ(r.b, int64_t(7));
	CHECK_EQ(r.valid_from_us, int64_t(5));
	CHECK_EQ(r.valid_to_us, int64_t(9));
	CHECK_EQ(r.a_key, std::string(""));
	CHECK_EQ(r.b_key, std::string("a|b c:"));
	CHECK_EQ(r.kind, std::string("fact"));
	JournalRow marker = ParseJournalEntry("0|1|77||||||");
	CHECK_EQ(marker.a, int64_t(77));
	CHECK_EQ(marker.valid_from_us, kOpenLow);
	CHECK_EQ(marker.valid_to_us, kOpenHigh);
	CHECK_THROWS(ParseJournalEntry("3|x"));
	CHECK_THROWS(ParseJournalEntry("3|1|2|3|4|5|99:short"));
	RecallRequest q = Ask({"ada", "pipe|key"}, 3, 7);
	q.filter_kinds = true;
	q.kinds = {"fact"};
	ParsedRequest p = ParseRequest(EncodeRequest(q, true, true));
	CHECK_EQ(p.request.hops, 3);
	CHECK_EQ(p.request.limit, int64_t(7));
	CHECK_EQ(p.request.valid_at_us, int64_t(1000));
	CHECK(p.has_valid_at && p.strict && p.request.filter_kinds);
	CHECK_EQ(p.request.seed_keys.size(), size_t(2));
	CHECK_EQ(p.request.seed_keys[1], std::string("pipe|key"));
	CHECK_EQ(ParseRequest("2|50||0|1|3:ada|-1").request.filter_kinds, false);
	// the mode field: 0 lenient, 1 strict, 2 lenient with an absent base read as empty
	ParsedRequest lenient = ParseRequest("2|50||0|1|3:ada|-1");
	CHECK(!lenient.strict && !lenient.empty_base);
	ParsedRequest strict = ParseRequest("2|50||1|1|3:ada|-1");
	CHECK(strict.strict && !strict.empty_base);
	ParsedRequest empty = ParseRequest("2|50||2|1|3:ada|-1");
	CHECK(!empty.strict && empty.empty_base);
}

// ---- random differential: base + journal vs brute force on the final state ----------

namespace {

struct Model {
	std::map<int64_t, std::string> entities;
	std::set<std::pair<int64_t, int64_t>> open; // pairs, min first
	struct Mem {
		std::vector<int64_t> about;
		std::string kind;
		int64_t from, to;
		bool gone;
	};
	std::map<int64_t, Mem> memories;

	std::vector<RecallHit> Answer(const RecallRequest &r) const {
		std::map<int64_t, int> dist;
		std::vector<int64_t> frontier;
		for (const auto &key : r.seed_keys) {
			for (const auto &e : entities) {
				if (e.second == key && !dist.count(e.first)) {
					dist[e.first] = 0;
					frontier.push_back(e.first);
				}
			}
		}
		for (int h = 0; h < r.hops; h++) {
			std::vector<int64_t> next;
			for (int64_t v : frontier) {
				for (const auto &p : open) {
					int64_t u = p.first == v ? p.second : p.second == v ? p.first : -1;
					if (u >= 0 && !dist.count(u)) {
						dist[u] = h + 1;
						next.push_back(u);
					}
				}
			}
			frontier = next;
		}
		std::vector<RecallHit> hits;
		for (const auto &m : memories) {
			if (m.second.gone || !(m.second.from <= r.valid_at_us && r.valid_at_us < m.second.to)) {
				continue;
			}
			if (r.filter_kinds && std::find(r.kinds.begin(), r.kinds.end(), m.second.kind) == r.kinds.end()) {
				continue;
			}
			int best = 99;
			for (int64_t e : m.second.about) {
				if (dist.count(e)) {
					best = std::min(best, dist[e]);
				}
			}
			if (best != 99) {
				hits.push_back({m.first, best});
			}
		}
		std::sort(hits.begin(), hits.end(), [](const RecallHit &x, const RecallHit &y) {
			return x.hop != y.hop ? x.hop < y.hop : x.memory_id > y.memory_id;
		});
		if (int64_t(hits.size()) > r.limit) {
			hits.resize(size_t(r.limit));
		}
		return hits;
	}
};

} // namespace

TEST_CASE("random graphs: base + journal equals brute force") {
	std::mt19937_64 rng(42);
	const std::vector<std::string> kinds = {"fact", "note", "plan"};
	for (int round = 0; round < 300; round++) {
		Model m;
		const int n = 3 + int(rng() % 25);
		int64_t next_id = 1000;
		for (int i = 0; i < n; i++) {
			m.entities[next_id] = "e" + std::to_string(next_id);
			next_id++;
		}
		auto random_entity = [&]() {
			auto it = m.entities.begin();
			std::advance(it, rng() % m.entities.size());
			return it->first;
		};
		auto add_memory = [&](int64_t from, int64_t to) {
			Model::Mem mem;
			const int links = 1 + int(rng() % 3);
			for (int k = 0; k < links; k++) {
				mem.about.push_back(random_entity());
			}
			mem.kind = kinds[rng() % kinds.size()];
			mem.from = from;
			mem.to = to;
			mem.gone = false;
			m.memories[next_id++] = mem;
			return next_id - 1;
		};
		for (int i = 0; i < n * 2; i++) {
			auto a = random_entity(), b = random_entity();
			if (a != b) {
				m.open.insert({std::min(a, b), std::max(a, b)});
			}
		}
		for (int i = 0; i < n * 3; i++) {
			add_memory(0, kOpenHigh);
		}
		// the base: everything so far
		BuildInput in;
		for (const auto &e : m.entities) {
			in.entity_ids.push_back(e.first);
			in.entity_keys.push_back(e.second);
		}
		for (const auto &p : m.open) {
			in.edge_a.push_back(rng() % 2 ? p.first : p.second);
			in.edge_b.push_back(in.edge_a.back() == p.first ? p.second : p.first);
		}
		for (const auto &mem : m.memories) {
			for (int64_t e : mem.second.about) {
				in.about_memory.push_back(mem.first);
				in.about_entity.push_back(e);
				in.about_kind.push_back(mem.second.kind);
			}
		}
		auto base = Generation::Build({1, 0, 100}, in);
		const std::string blob = base->Serialize();
		auto parsed = Generation::Parse(blob.data(), blob.size());
		// random writes after the build, journalled
		std::vector<JournalRow> journal;
		int64_t seq = 1;
		const int writes = int(rng() % 30);
		for (int w = 0; w < writes; w++) {
			const int what = int(rng() % 6);
			if (what == 0 || what == 1) { // new entity sometimes, relate / unrelate
				int64_t a = random_entity();
				int64_t b = rng() % 3 == 0 ? next_id++ : random_entity();
				if (!m.entities.count(b)) {
					m.entities[b] = "e" + std::to_string(b);
				}
				if (a == b) {
					continue;
				}
				auto key = std::make_pair(std::min(a, b), std::max(a, b));
				JournalRow row;
				row.seq = seq++;
				row.a = a;
				row.b = b;
				row.a_key = m.entities[a];
				row.b_key = m.entities[b];
				if (what == 0) {
					m.open.insert(key);
					row.op = kOpEdgeInterval;
				} else {
					m.open.erase(key);
					row.op = kOpEdgeClosed;
				}
				journal.push_back(row);
			} else if (what == 2 || what == 3) { // remember, sometimes with a future or past bound
				int64_t from = 0, to = kOpenHigh;
				if (rng() % 4 == 0) {
					from = 2000;
				}
				if (rng() % 4 == 0) {
					to = rng() % 2 ? 500 : 5000;
				}
				const int64_t id = add_memory(from, to);
				const int64_t s = seq++;
				for (int64_t e : m.memories[id].about) {
					JournalRow row;
					row.seq = s;
					row.op = kOpAbout;
					row.a = id;
					row.b = e;
					row.b_key = m.entities[e];
					row.kind = m.memories[id].kind;
					row.valid_from_us = from;
					row.valid_to_us = to;
					journal.push_back(row);
				}
			} else { // forget soft or hard
				auto it = m.memories.begin();
				std::advance(it, rng() % m.memories.size());
				it->second.gone = true;
				JournalRow row;
				row.seq = seq++;
				row.op = what == 4 ? kOpMemoryClosed : kOpMemoryErased;
				row.a = it->first;
				journal.push_back(row);
			}
		}
		std::shuffle(journal.begin(), journal.end(), rng); // aggregates see rows in any order
		for (int q = 0; q < 8; q++) {
			RecallRequest r;
			r.seed_keys = {m.entities[random_entity()]};
			if (rng() % 3 == 0) {
				r.seed_keys.push_back(m.entities[random_entity()]);
			}
			r.hops = int(rng() % 5);
			r.limit = 1 + int64_t(rng() % 20);
			r.valid_at_us = 1000 + int64_t(rng() % 2) * 3000;
			if (rng() % 4 == 0) {
				r.filter_kinds = true;
				r.kinds = {kinds[rng() % kinds.size()]};
			}
			const std::string want = Ids(m.Answer(r));
			const std::string got = Ids(Recall(parsed.get(), journal, r));
			// the cached path: half the journal folded first, so the full one extends it
			auto &cache = JournalCache::Instance();
			const int64_t id = 1000 + round;
			cache.Fold({id, 0}, parsed, Encoded(journal, 0, journal.size() / 2), r.valid_at_us);
			const std::string cached = Ids(Recall(*cache.Fold({id, 0}, parsed, Encoded(journal), r.valid_at_us), r));
			// the same bytes at the other instant: reused only if no bound lies between
			RecallRequest other = r;
			other.valid_at_us = r.valid_at_us == 1000 ? 4000 : 1000;
			const std::string want_other = Ids(m.Answer(other));
			const std::string cached_other =
			    Ids(Recall(*cache.Fold({id, 0}, parsed, Encoded(journal), other.valid_at_us), other));
			if (got != want || cached != want || cached_other != want_other) {
				CHECK_EQ(got, want);
				CHECK_EQ(cached, want);
				CHECK_EQ(cached_other, want_other);
				return;
			}
		}
	}
}

ANATID_TEST_MAIN()
