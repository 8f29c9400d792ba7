// Seeds from the query on the graph fold (src/graph_seeds.cpp): on random name keys, split
// between a base generation and journal ABOUT rows, the resolver equals a brute force of
// the rule (every token of the key, and at least one, is a query term), sorted; a non-ASCII
// key anywhere makes it decline.
#include "check.hpp"
#include "graph_generation.hpp"
#include "graph_recall.hpp"
#include "graph_seeds.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace anatid::graph;

namespace {

std::vector<std::string> BruteForce(const std::vector<std::string> &keys, const std::set<std::string> &terms) {
	std::vector<std::string> out;
	for (const std::string &key : keys) {
		std::vector<std::string> tokens;
		std::string cur;
		for (char c : key + " ") {
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
				cur += c;
			} else if (!cur.empty()) {
				tokens.push_back(cur);
				cur.clear();
			}
		}
		bool all = !tokens.empty();
		for (const auto &t : tokens) {
			all = all && terms.count(t) > 0;
		}
		if (all) {
			out.push_back(key);
		}
	}
	std::sort(out.begin(), out.end());
	out.erase(std::unique(out.begin(), out.end()), out.end());
	return out;
}

struct Folded {
	std::shared_ptr<const Generation> base;
	std::unique_ptr<JournalFold> fold;
};

// keys[0, in_base) go into the base; the rest reach the fold as journal ABOUT rows.
Folded Fold(const std::vector<std::string> &keys, size_t in_base) {
	BuildInput in;
	for (size_t i = 0; i < in_base; i++) {
		in.entity_ids.push_back(int64_t(i + 1));
		in.entity_keys.push_back(keys[i]);
	}
	Folded f;
	f.base = Generation::Build(GenerationHeader {1, 0, 0}, in);
	std::vector<JournalRow> rows;
	for (size_t i = in_base; i < keys.size(); i++) {
		JournalRow row;
		row.seq = int64_t(i);
		row.op = kOpAbout;
		row.a = int64_t(1000 + i);
		row.b = int64_t(i + 1);
		row.b_key = keys[i];
		row.kind = "fact";
		rows.push_back(row);
	}
	SortBySeq(rows);
	std::vector<JournalSegment> segments {std::make_shared<const std::vector<JournalRow>>(std::move(rows))};
	f.fold.reset(new JournalFold(f.base.get(), std::move(segments), 10));
	return f;
}

TEST_CASE("seeds from terms equal the brute force on random keys, base and journal") {
	std::mt19937 rng(7);
	const std::vector<std::string> words {"ann", "bo", "smith", "project", "x1", "42", "a", "lee", "q"};
	const std::vector<std::string> seps {" ", "-", ".", "'", "  ", "_"};
	for (int trial = 0; trial < 200; trial++) {
		std::set<std::string> distinct;
		const int n = 1 + int(rng() % 30);
		for (int i = 0; i < n; i++) {
			std::string key = rng() % 9 == 0 ? "!?" : "";
			const int parts = 1 + int(rng() % 3);
			for (int p = 0; p < parts; p++) {
				key += (p ? seps[rng() % seps.size()] : "") + words[rng() % words.size()];
			}
			distinct.insert(key);
		}
		std::vector<std::string> keys(distinct.begin(), distinct.end());
		std::shuffle(keys.begin(), keys.end(), rng);
		const size_t in_base = rng() % (keys.size() + 1);
		std::set<std::string> terms;
		for (const auto &w : words) {
			if (rng() % 2) {
				terms.insert(w);
			}
		}
		std::vector<std::string> term_list(terms.begin(), terms.end());
		std::shuffle(term_list.begin(), term_list.end(), rng);
		Folded f = Fold(keys, in_base);
		std::vector<std::string> got {"untouched"};
		CHECK(SeedsFromTerms(*f.fold, term_list, got));
		CHECK(got == BruteForce(keys, terms));
	}
}

TEST_CASE("a non-ASCII key in the base or the journal declines") {
	for (size_t in_base : {size_t(0), size_t(1), size_t(2)}) {
		Folded f = Fold({"zo\xc3\xab", "ann"}, in_base);
		std::vector<std::string> out {"untouched"};
		CHECK(!SeedsFromTerms(*f.fold, {"ann"}, out));
		CHECK(out == std::vector<std::string> {"untouched"});
	}
	std::vector<std::string_view> tokens;
	CHECK(AsciiKeyTokens("ann-lee 42", tokens));
	CHECK((tokens == std::vector<std::string_view> {"ann", "lee", "42"}));
}

} // namespace

int main() {
	return anatid_test::RunAllTests();
}
