// BM25 over base + journal: hand-checked arithmetic, and the invariant that a document
// scores the same whether it sits in the base generation or in the journal.
#include "bm25.hpp"
#include "check.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace anatid;

namespace {

struct Doc {
	int64_t id;
	std::vector<std::pair<std::string, int32_t>> terms;
	int32_t len;
	int64_t vf = 0, vt = kOpenEnd;
};

std::vector<std::string> g_parts; // owns the bytes behind the string_views

template <class T>
std::string Bytes(const std::vector<T> &v) {
	return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

// Writes the generation format exactly as anatid.indexes.text does.
std::shared_ptr<const TextGeneration> Build(const std::vector<Doc> &docs) {
	std::vector<int64_t> ids, vf, vt;
	std::vector<int32_t> lens;
	std::map<std::string, std::vector<std::pair<int32_t, int32_t>>> by_term;
	for (size_t i = 0; i < docs.size(); i++) {
		ids.push_back(docs[i].id);
		lens.push_back(docs[i].len);
		vf.push_back(docs[i].vf);
		vt.push_back(docs[i].vt);
		for (auto &t : docs[i].terms) {
			by_term[t.first].push_back({int32_t(i), t.second});
		}
	}
	std::vector<int64_t> offsets {0}, starts {0};
	std::string bytes;
	std::vector<int32_t> pd, ptf;
	for (auto &kv : by_term) {
		bytes += kv.first;
		offsets.push_back(int64_t(bytes.size()));
		for (auto &p : kv.second) {
			pd.push_back(p.first);
			ptf.push_back(p.second);
		}
		starts.push_back(int64_t(pd.size()));
	}
	std::vector<int64_t> header {kTextMagic, int64_t(docs.size()), int64_t(by_term.size()), int64_t(pd.size())};
	g_parts = {Bytes(header), Bytes(ids), Bytes(lens), Bytes(vf), Bytes(vt), Bytes(offsets), bytes, Bytes(starts),
	           Bytes(pd), Bytes(ptf)};
	std::vector<std::string_view> views(g_parts.begin(), g_parts.end());
	return TextGeneration::Parse(views);
}

const std::vector<Doc> kDocs = {
    {10, {{"apple", 2}, {"pie", 1}}, 3},
    {20, {{"apple", 1}}, 5},
    {30, {{"pie", 1}, {"tart", 1}}, 2},
};

} // namespace

TEST_CASE("contribution matches the DECIMAL-typed SQL expression") {
	// tf*2.2 is exact in DECIMAL: 3*2.2 = 6.6, while 3.0*2.2 in double is 6.6000000000000005.
	const double c = Bm25Contribution(3, 1, 3, 4, 3.0);
	const double expected = (std::log(1.0 + (3.0 - 1.0 + 0.5) / 1.5) * 6.6) / (3.0 + 1.2 * (0.25 + 3.0 / 3.0));
	CHECK_EQ(c, expected);
}

TEST_CASE("base and journal give the same scores") {
	auto gen = Build(kDocs);
	Bm25Input in;
	in.base = gen.get();
	in.terms = {"apple", "pie"};
	in.valid_at = 1;
	auto from_base = Bm25TopK(in);
	CHECK_EQ(from_base.size(), size_t(3));
	CHECK_EQ(from_base[0].id, int64_t(10));

	// The same corpus entirely in the journal (no base).
	Bm25Input j;
	j.terms = in.terms;
	j.valid_at = 1;
	for (auto &d : kDocs) {
		j.docs.push_back({d.id, d.len, 0, kOpenEnd});
		for (auto &t : d.terms) {
			j.postings.push_back({d.id, std::string_view(t.first), t.second});
		}
	}
	auto from_journal = Bm25TopK(j);
	CHECK_EQ(from_journal.size(), from_base.size());
	for (size_t i = 0; i < from_base.size(); i++) {
		CHECK_EQ(from_journal[i].id, from_base[i].id);
		CHECK_EQ(from_journal[i].score, from_base[i].score);
	}

	// Doc 20 touched: overridden by a journal copy with the same text -> same answer.
	Bm25Input mixed = in;
	mixed.touched = {20};
	mixed.docs = {{20, 5, 0, kOpenEnd}};
	mixed.postings = {{20, "apple", 1}};
	auto m = Bm25TopK(mixed);
	CHECK_EQ(m.size(), from_base.size());
	for (size_t i = 0; i < m.size(); i++) {
		CHECK_EQ(m[i].id, from_base[i].id);
		CHECK_EQ(m[i].score, from_base[i].score);
	}
}

TEST_CASE("a forgotten document leaves the statistics") {
	auto gen = Build(kDocs);
	Bm25Input in;
	in.base = gen.get();
	in.terms = {"tart"};
	in.valid_at = 1;
	in.touched = {10}; // closed: no current state in the journal
	CHECK_EQ(Bm25VisibleDocs(in), int64_t(2));
	auto hits = Bm25TopK(in);
	CHECK_EQ(hits.size(), size_t(1));
	// N = 2, df = 1, avgdl = (5 + 2) / 2
	const float expected = float(Bm25Contribution(2, 1, 1, 2, 3.5));
	CHECK_EQ(hits[0].score, expected);
}

TEST_CASE("validity is checked at the reading instant") {
	Bm25Input j;
	j.terms = {"x"};
	j.docs = {{1, 1, 100, 200}, {2, 1, 0, kOpenEnd}};
	j.postings = {{1, "x", 1}, {2, "x", 1}};
	j.valid_at = 150;
	CHECK_EQ(Bm25TopK(j).size(), size_t(2));
	j.valid_at = 200; // half-open: valid_to excluded
	auto hits = Bm25TopK(j);
	CHECK_EQ(hits.size(), size_t(1));
	CHECK_EQ(hits[0].id, int64_t(2));
}

TEST_CASE("ties rank by id ascending and depth cuts") {
	Bm25Input j;
	j.terms = {"x"};
	j.valid_at = 0;
	for (int64_t id : {5, 3, 9, 1}) {
		j.docs.push_back({id, 1, 0, kOpenEnd});
		j.postings.push_back({id, "x", 1});
	}
	j.depth = 3;
	auto hits = Bm25TopK(j);
	CHECK_EQ(hits.size(), size_t(3));
	CHECK_EQ(hits[0].id, int64_t(1));
	CHECK_EQ(hits[1].id, int64_t(3));
	CHECK_EQ(hits[2].id, int64_t(5));
}

TEST_CASE("N and avgdl from the generation's validity index equal a pass over every document") {
	// Random validity (closed before, at and after the reading instants, some beginning
	// later), random touched documents; three instants: two after every valid_from (the
	// index answers) and one before some (the pass over every document answers).
	std::mt19937_64 rng(5);
	std::uniform_int_distribution<int> pct(0, 99);
	std::vector<Doc> docs;
	for (int64_t id = 1; id <= 400; id++) {
		Doc d {id, {{"t" + std::to_string(id % 7), 1 + int32_t(id % 3)}}, 1 + int32_t(id % 11)};
		d.vf = pct(rng);
		if (pct(rng) < 40) {
			d.vt = d.vf + 1 + pct(rng) * 3;
		}
		docs.push_back(d);
	}
	auto gen = Build(docs);
	for (int64_t at : {int64_t(120), int64_t(99), int64_t(250), int64_t(40)}) {
		Bm25Input in;
		in.base = gen.get();
		in.valid_at = at;
		in.terms = {"t1", "t3"};
		// touched: every 9th document (some twice); half of them come back in the journal
		Bm25Input all_journal;
		all_journal.valid_at = at;
		all_journal.terms = in.terms;
		int64_t n = 0;
		for (const Doc &d : docs) {
			const bool touched = d.id % 9 == 0;
			if (touched) {
				in.touched.push_back(d.id);
				in.touched.push_back(d.id);
			}
			if (touched && d.id % 2 == 0) {
				in.docs.push_back({d.id, d.len, 0, kOpenEnd});
				for (auto &t : d.terms) {
					in.postings.push_back({d.id, t.first, t.second});
				}
			}
			const bool live = touched ? d.id % 2 == 0 : (d.vf <= at && at < d.vt);
			n += live;
			if (touched && d.id % 2 == 0) {
				all_journal.docs.push_back({d.id, d.len, 0, kOpenEnd});
			} else if (!touched) {
				all_journal.docs.push_back({d.id, d.len, d.vf, d.vt});
			}
			if (!touched || d.id % 2 == 0) {
				for (auto &t : d.terms) {
					all_journal.postings.push_back({d.id, t.first, t.second});
				}
			}
		}
		CHECK_EQ(Bm25VisibleDocs(in), n);
		CHECK_EQ(Bm25VisibleDocs(all_journal), n);
		auto a = Bm25TopK(in);
		auto b = Bm25TopK(all_journal);
		CHECK_EQ(a.size(), b.size());
		for (size_t i = 0; i < a.size() && i < b.size(); i++) {
			CHECK_EQ(a[i].id, b[i].id);
			CHECK_EQ(a[i].score, b[i].score);
		}
	}
}

TEST_CASE("a generation vouches for a memory's content only while the memory is valid") {
	auto bare = Build(kDocs);
	CHECK_EQ(bare->VouchedDoc(10, 0), int64_t(-1)); // no content parts: nothing to vouch for
	// the same documents with content and kinds (parts 10-13); memory 30 closed at t = 100
	std::vector<Doc> docs = kDocs;
	docs[2].vt = 100;
	Build(docs);
	const std::vector<int64_t> content_off {0, 3, 6, 11}, kind_off {0, 4, 8, 12};
	g_parts.push_back(Bytes(content_off));
	g_parts.push_back("onetwothree");
	g_parts.push_back(Bytes(kind_off));
	g_parts.push_back("factfactnote");
	std::vector<std::string_view> views(g_parts.begin(), g_parts.end());
	auto gen = TextGeneration::Parse(views);
	CHECK_EQ(gen->VouchedDoc(20, 50), int64_t(1));
	CHECK_EQ(std::string(gen->Content(1)), std::string("two"));
	CHECK_EQ(gen->VouchedDoc(30, 50), int64_t(2));
	CHECK_EQ(std::string(gen->Kind(2)), std::string("note"));
	CHECK_EQ(gen->VouchedDoc(30, 100), int64_t(-1)); // valid_to is exclusive
	CHECK_EQ(gen->VouchedDoc(40, 50), int64_t(-1));  // not in the generation
}

TEST_CASE("a corrupt generation is refused") {
	std::vector<std::string_view> none;
	CHECK_THROWS(TextGeneration::Parse(none));
}

ANATID_TEST_MAIN()
