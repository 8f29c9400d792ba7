// The shared journal fold cache (src/journal_fold_cache.hpp) over a toy fold: which
// cached fold a read gets (hit, refold, extend, miss), LRU eviction per key, by count and
// by bytes, and the counters the SQL stats report.
#include "check.hpp"
#include "journal_fold_cache.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace anatid;

namespace {

// A toy fold: the bytes it folded and how (from scratch, or on top of which fold).
struct Toy {
	std::string rows;
	const Toy *prior = nullptr;
	size_t from = 0;
	size_t bytes = 100;
	size_t ByteSize() const {
		return bytes;
	}
};

using Key = std::pair<int64_t, int64_t>;
using Cache = JournalFoldCache<Key, Toy>;

struct Reads {
	Cache cache;
	int builds = 0;
	size_t fold_bytes = 100;
	bool fits = true;

	std::shared_ptr<const Toy> Get(Key key, const std::string &encoded) {
		return cache.GetOrFold(
		    key, encoded, [&](const Toy &) { return fits; },
		    [&](const Toy *prior, size_t from) {
			    builds++;
			    return std::make_shared<const Toy>(Toy {encoded, prior, from, fold_bytes});
		    });
	}
	bool Cached(Key key, const std::string &encoded) { // a hit, without counting one here
		const uint64_t hits = cache.Stats().hits;
		const auto misses = cache.Stats().misses + cache.Stats().extends;
		Get(key, encoded);
		const bool hit = cache.Stats().hits == hits + 1;
		CHECK(hit || cache.Stats().misses + cache.Stats().extends == misses + 1);
		return hit;
	}
};

} // namespace

TEST_CASE("the same key and bytes reuse the fold; one byte changed or another key folds afresh") {
	Reads r;
	const std::string rows = "row1row2row3";
	auto first = r.Get({5, 99}, rows);
	CHECK(first->prior == nullptr);
	CHECK(r.Get({5, 99}, std::string(rows)) == first); // equal bytes, another string
	CHECK_EQ(r.builds, 1);
	std::string changed = rows;
	changed[5] ^= 1; // a rolled-back row replaced by another of the same length
	auto other = r.Get({5, 99}, changed);
	CHECK(other != first && other->prior == nullptr && other->rows == changed);
	changed = rows;
	changed.back() ^= 1; // the last byte only
	CHECK(r.Get({5, 99}, changed)->prior == nullptr);
	CHECK(r.Get({5, 99}, rows.substr(0, rows.size() - 1))->prior == nullptr); // one byte fewer
	CHECK(r.Get({5, 100}, rows)->prior == nullptr);                          // another nonce
	CHECK(r.Get({6, 99}, rows)->prior == nullptr);                           // another generation
	const JournalFoldCacheStats s = r.cache.Stats();
	CHECK_EQ(s.hits, uint64_t(1));
	CHECK_EQ(s.misses, uint64_t(6));
	CHECK_EQ(s.extends, uint64_t(0));
	CHECK_EQ(s.refolds, uint64_t(0));
	CHECK_EQ(s.entries, size_t(6));
	CHECK_EQ(s.evictions, uint64_t(0));
	CHECK(s.resident_bytes >= 6 * (100 + rows.size()));
	CHECK(r.Get({5, 99}, rows) == first); // still cached
}

TEST_CASE("appended rows extend the longest cached prefix; an empty prefix is a miss") {
	Reads r;
	auto one = r.Get({1, 0}, "aaaa");
	auto two = r.Get({1, 0}, "aaaabbbb");
	CHECK(two->prior == one.get());
	CHECK_EQ(two->from, size_t(4));
	auto three = r.Get({1, 0}, "aaaabbbbcccc"); // both are prefixes: the longer one
	CHECK(three->prior == two.get());
	CHECK_EQ(three->from, size_t(8));
	CHECK(r.Get({2, 0}, "aaaabbbbcccc")->prior == nullptr); // not another key's prefix
	r.Get({3, 0}, "");
	CHECK(r.Get({3, 0}, "dddd")->prior == nullptr);
	const JournalFoldCacheStats s = r.cache.Stats();
	CHECK_EQ(s.extends, uint64_t(2));
	CHECK_EQ(s.misses, uint64_t(4));
	CHECK_EQ(s.hits, uint64_t(0));
	CHECK_EQ(s.entries, size_t(6)); // an extension is a new state; the prefix stays
}

TEST_CASE("a fold that does not fit the read is refolded from its rows and replaced") {
	Reads r;
	auto first = r.Get({1, 0}, "rows");
	r.fits = false;
	auto again = r.Get({1, 0}, "rows");
	CHECK(again != first && again->prior == first.get());
	CHECK_EQ(again->from, size_t(4)); // the same rows: nothing appended
	r.fits = true;
	CHECK(r.Get({1, 0}, "rows") == again);
	const JournalFoldCacheStats s = r.cache.Stats();
	CHECK_EQ(s.refolds, uint64_t(1));
	CHECK_EQ(s.hits, uint64_t(1));
	CHECK_EQ(s.misses, uint64_t(1));
	CHECK_EQ(s.entries, size_t(1));
	CHECK_EQ(s.evictions, uint64_t(0)); // replaced, not evicted
}

TEST_CASE("a key keeps its most recently used states") {
	Reads r;
	for (size_t i = 0; i < Cache::kPerGeneration; i++) {
		r.Get({1, 0}, "state" + std::to_string(i));
	}
	r.Get({2, 0}, "other key");
	CHECK(r.Cached({1, 0}, "state0")); // now the most recent of key 1
	r.Get({1, 0}, "state" + std::to_string(Cache::kPerGeneration));
	CHECK_EQ(r.cache.Stats().evictions, uint64_t(1));
	CHECK_EQ(r.cache.Stats().entries, Cache::kPerGeneration + 1);
	CHECK(r.Cached({2, 0}, "other key")); // older, but another key's
	CHECK(r.Cached({1, 0}, "state0"));
	CHECK(r.Cached({1, 0}, "state2"));
	CHECK(!r.Cached({1, 0}, "state1")); // the least recently used state of key 1 went
}

TEST_CASE("the least recently used entry goes past the entry bound and the byte budget") {
	Reads r;
	for (size_t i = 0; i < Cache::kMaxEntries; i++) {
		r.Get({int64_t(i), 0}, "rows");
	}
	CHECK_EQ(r.cache.Stats().evictions, uint64_t(0));
	CHECK(r.Cached({0, 0}, "rows"));
	r.Get({-1, 0}, "rows");
	CHECK_EQ(r.cache.Stats().entries, Cache::kMaxEntries);
	CHECK_EQ(r.cache.Stats().evictions, uint64_t(1));
	CHECK(!r.Cached({1, 0}, "rows")); // key 0 was used since; key 1 was the oldest

	r.cache.Clear();
	CHECK_EQ(r.cache.Stats().entries, size_t(0));
	CHECK_EQ(r.cache.Stats().resident_bytes, size_t(0));
	CHECK_EQ(r.cache.Stats().evictions, uint64_t(1 + Cache::kMaxEntries + 1)); // cleared entries count
	r.fold_bytes = Cache::kBudgetBytes / 2;
	r.Get({1, 0}, "a");
	r.Get({2, 0}, "b"); // over the budget by the entries' own bytes: the older goes
	CHECK_EQ(r.cache.Stats().entries, size_t(1));
	CHECK(r.Cached({2, 0}, "b"));
	r.fold_bytes = Cache::kBudgetBytes * 2; // one fold over the budget alone is still kept
	r.Get({3, 0}, "c");
	CHECK_EQ(r.cache.Stats().entries, size_t(1));
	CHECK(r.cache.Stats().resident_bytes > Cache::kBudgetBytes);
	CHECK(r.Cached({3, 0}, "c"));
}

TEST_CASE("a fold that throws caches nothing and counts nothing") {
	Cache cache;
	CHECK_THROWS(cache.GetOrFold(
	    Key {1, 0}, "bad", [](const Toy &) { return true; },
	    [](const Toy *, size_t) -> std::shared_ptr<const Toy> { throw std::invalid_argument("malformed"); }));
	const JournalFoldCacheStats s = cache.Stats();
	CHECK_EQ(s.entries, size_t(0));
	CHECK_EQ(s.misses + s.extends + s.refolds + s.hits, uint64_t(0));
}

ANATID_TEST_MAIN()
