// The text journal's postings format, fold (latest row wins, stale postings skipped) and
// the process-wide cache (hit, extend, miss; a changed row is never served from cache).
#include "check.hpp"
#include "text_journal.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace anatid;
using namespace anatid::text_journal;

namespace {

std::vector<std::pair<std::string, int32_t>> Parse(std::string_view s) {
	std::vector<std::pair<std::string, int32_t>> out;
	ForEachPosting(s, [&](std::string_view term, int32_t tf) { out.emplace_back(std::string(term), tf); });
	return out;
}

bool Throws(std::string_view s) {
	try {
		Parse(s);
	} catch (const std::invalid_argument &) {
		return true;
	}
	return false;
}

std::string Row(int64_t id, int64_t seq, const char *postings, int32_t len = 3, int64_t vf = 0,
                int64_t vt = kOpenEnd) {
	std::string out;
	AppendRow(out, id, seq, vf, vt, postings != nullptr, len, postings != nullptr, postings ? postings : "");
	return out;
}

// "id:tf,id:tf" of the postings Fill returns for `terms`, in order.
std::string Postings(const Fold &fold, const std::vector<std::string> &terms, Bm25Input *keep = nullptr) {
	Bm25Input in;
	for (const auto &t : terms) {
		in.terms.emplace_back(t);
	}
	fold.Fill(in);
	std::string out;
	for (const JournalPosting &p : in.postings) {
		out += (out.empty() ? "" : ",") + std::string(p.term) + "@" + std::to_string(p.id) + ":" + std::to_string(p.tf);
	}
	if (keep) {
		keep->touched = in.touched;
		keep->docs = in.docs;
	}
	return out;
}

} // namespace

TEST_CASE("postings strings parse term by term") {
	auto p = Parse("apple:2 caf\xc3\xa9:1 z9:12");
	CHECK_EQ(p.size(), size_t(3));
	CHECK(p[0] == std::make_pair(std::string("apple"), 2));
	CHECK(p[1] == std::make_pair(std::string("caf\xc3\xa9"), 1));
	CHECK(p[2] == std::make_pair(std::string("z9"), 12));
	CHECK(Parse("").empty());
	CHECK(Throws("apple"));
	CHECK(Throws(":3"));
	CHECK(Throws("apple:"));
	CHECK(Throws("apple:0"));
	CHECK(Throws("apple:-1"));
	CHECK(Throws("apple:2x"));
	CHECK(Throws("apple:99999999999"));
	CHECK(Throws("apple:1  pear:2"));
}

TEST_CASE("the latest row of a memory wins, whatever the scan order") {
	const std::string a = Row(7, 10, "apple:1 pear:2") + Row(8, 11, "apple:3") + Row(7, 12, "pear:5", 5);
	const std::string b = Row(7, 12, "pear:5", 5) + Row(8, 11, "apple:3") + Row(7, 10, "apple:1 pear:2");
	for (const std::string *enc : {&a, &b}) {
		auto fold = Fold::Build(*enc);
		Bm25Input meta;
		CHECK_EQ(Postings(*fold, {"apple", "pear"}, &meta), std::string("apple@8:3,pear@7:5"));
		CHECK_EQ(meta.touched.size(), size_t(2));
		CHECK_EQ(meta.docs.size(), size_t(2));
		CHECK_EQ(meta.docs[0].id, int64_t(7));
		CHECK_EQ(meta.docs[0].len, int32_t(5));
		CHECK(fold->Touched(7) && fold->Touched(8) && !fold->Touched(9));
	}
}

TEST_CASE("a row without text touches the memory and hides its older postings") {
	auto fold = Fold::Build(Row(7, 10, "apple:1") + Row(7, 11, nullptr));
	Bm25Input meta;
	CHECK_EQ(Postings(*fold, {"apple"}, &meta), std::string(""));
	CHECK_EQ(meta.touched.size(), size_t(1));
	CHECK_EQ(meta.docs.size(), size_t(0));
}

TEST_CASE("visibility by the latest row: valid then, and not closed since") {
	// 7: written, then closed (a row without text); 8: valid in [100, 200); 9: untouched
	auto fold = Fold::Build(Row(7, 10, "apple:1") + Row(7, 11, nullptr) + Row(8, 12, "pie:2", 3, 100, 200));
	CHECK(!fold->VisibleAt(7, 150));
	CHECK(fold->VisibleAt(8, 100));
	CHECK(!fold->VisibleAt(8, 200)); // valid_to is exclusive
	CHECK(!fold->VisibleAt(8, 99));
	CHECK(!fold->VisibleAt(9, 150)); // no row: the base answers for it
}

// The journal alone as a base (a tenant without a text generation): BM25 over Generation()
// must rank exactly as over the same rows passed as journal documents and postings.
TEST_CASE("a fold laid out as a generation ranks exactly as the journal it folds") {
	std::string enc;
	for (int64_t id = 1; id <= 40; id++) {
		const std::string postings = id % 3 ? "apple:" + std::to_string(1 + id % 4) + " river:1" : "stone:2";
		enc += Row(id, 100 + id, postings.c_str(), int32_t(2 + id % 5), id % 7 == 0 ? 50 : 0,
		           id % 11 == 0 ? 60 : kOpenEnd);
	}
	enc += Row(5, 500, "river:3", 4) + Row(6, 501, nullptr) + Row(9, 10, "apple:9"); // rewritten, emptied, stale
	auto plain = Fold::Build(enc);
	auto laid = Fold::Build(enc, true);
	CHECK(!plain->Generation() && laid->Generation());
	const TextGeneration &gen = *laid->Generation();
	CHECK_EQ(gen.ids.size(), plain->Documents());
	for (int64_t valid_at : {int64_t(0), int64_t(55), int64_t(70)}) {
		for (const std::vector<std::string> &terms :
		     {std::vector<std::string> {"apple"}, {"apple", "river"}, {"river", "stone", "zzz"}}) {
			Bm25Input journal, base;
			for (const auto &t : terms) {
				journal.terms.emplace_back(t);
				base.terms.emplace_back(t);
			}
			journal.valid_at = base.valid_at = valid_at;
			journal.depth = base.depth = 20;
			plain->Fill(journal);
			base.base = &gen;
			const std::vector<ArmHit> want = Bm25TopK(journal), got = Bm25TopK(base);
			CHECK_EQ(got.size(), want.size());
			for (size_t i = 0; i < want.size() && i < got.size(); i++) {
				CHECK_EQ(got[i].id, want[i].id);
				CHECK(got[i].score == want[i].score);
			}
			CHECK_EQ(Bm25VisibleDocs(base), Bm25VisibleDocs(journal));
		}
	}
	// a cached fold asked for its generation afterwards is laid out then, never served without
	Cache cache;
	CHECK(!cache.Get(0, 0, enc)->Generation());
	CHECK(cache.Get(0, 0, enc, true)->Generation() != nullptr);
	CHECK_EQ(cache.Stats().refolds, uint64_t(1));
	CHECK(cache.Get(0, 0, enc + Row(77, 900, "apple:1"), true)->Generation()->ids.size() == plain->Documents() + 1);
	CHECK_EQ(cache.Stats().extends, uint64_t(1));
}

TEST_CASE("a truncated encoding is refused") {
	const std::string enc = Row(7, 10, "apple:1");
	bool threw = false;
	try {
		Fold::Build(std::string_view(enc).substr(0, enc.size() - 1));
	} catch (const std::invalid_argument &) {
		threw = true;
	}
	CHECK(threw);
}

TEST_CASE("the cache reuses equal bytes, extends appended rows, never serves changed rows") {
	Cache &cache = Cache::Instance();
	cache.Clear();
	const std::string one = Row(1, 10, "apple:1");
	const std::string two = one + Row(2, 11, "apple:2");
	auto f1 = cache.Get(5, 99, one);
	CHECK_EQ(cache.Stats().misses, uint64_t(1));
	CHECK(cache.Get(5, 99, one) == f1);
	CHECK_EQ(cache.Stats().hits, uint64_t(1));
	auto f2 = cache.Get(5, 99, two);
	CHECK_EQ(cache.Stats().extends, uint64_t(1));
	CHECK_EQ(Postings(*f2, {"apple"}), std::string("apple@1:1,apple@2:2"));
	CHECK_EQ(Postings(*f1, {"apple"}), std::string("apple@1:1")); // the cached fold is untouched
	// a rolled-back row replaced by another of the same length: not `two`'s fold, only `one`
	// is a prefix of it
	const std::string other = one + Row(2, 11, "apple:3");
	auto f3 = cache.Get(5, 99, other);
	CHECK_EQ(Postings(*f3, {"apple"}), std::string("apple@1:1,apple@2:3"));
	CHECK_EQ(cache.Stats().extends, uint64_t(2));
	CHECK_EQ(cache.Stats().hits, uint64_t(1));
	// a row gone (rolled back or absorbed): no prefix matches, folded afresh
	auto f4 = cache.Get(5, 99, Row(2, 11, "apple:2"));
	CHECK_EQ(Postings(*f4, {"apple"}), std::string("apple@2:2"));
	CHECK_EQ(cache.Stats().misses, uint64_t(2));
	// another generation (or nonce) never shares a state
	cache.Get(5, 100, one);
	CHECK_EQ(cache.Stats().misses, uint64_t(3));
	// the empty journal is not cached
	CHECK(cache.Get(5, 99, std::string())->Memories() == 0);
	CHECK_EQ(cache.Stats().misses, uint64_t(3));
	// states per generation are bounded
	for (int i = 0; i < 20; i++) {
		cache.Get(6, 1, Row(i, 100 + i, "x:1"));
	}
	CHECK_EQ(cache.Stats().entries, Cache::kPerGeneration + 5); // 5 states of the other keys
	cache.Clear();
	CHECK_EQ(cache.Stats().entries, size_t(0));
}

ANATID_TEST_MAIN()
