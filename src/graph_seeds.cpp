#include "graph_seeds.hpp"

#include "graph_overlay.hpp"

#include <algorithm>
#include <unordered_set>

namespace anatid {
namespace graph {

bool AsciiKeyTokens(std::string_view key, std::vector<std::string_view> &tokens) {
	const size_t before = tokens.size();
	size_t start = std::string_view::npos;
	for (size_t i = 0; i <= key.size(); i++) {
		const unsigned char c = i < key.size() ? static_cast<unsigned char>(key[i]) : ' ';
		if (c >= 0x80) {
			tokens.resize(before);
			return false;
		}
		// the key is lower-cased: an upper-case letter cannot occur, and would not be a term
		const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (word && start == std::string_view::npos) {
			start = i;
		} else if (!word && start != std::string_view::npos) {
			tokens.push_back(key.substr(start, i - start));
			start = std::string_view::npos;
		}
	}
	return true;
}

bool SeedsFromTerms(const JournalFold &fold, const std::vector<std::string> &terms, std::vector<std::string> &out) {
	const Generation *base = fold.Base();
	if (base && !base->ascii_keys) {
		return false;
	}
	const std::unordered_set<std::string_view> wanted(terms.begin(), terms.end());
	std::vector<std::string> seeds;
	bool ascii = true;
	std::vector<std::string_view> tokens;
	fold.overlay().ForEachNewKey([&](const std::string &key) {
		tokens.clear();
		if (!AsciiKeyTokens(key, tokens)) {
			ascii = false;
			return;
		}
		bool all = !tokens.empty();
		for (std::string_view t : tokens) {
			all = all && wanted.count(t) > 0;
		}
		if (all) {
			seeds.push_back(key);
		}
	});
	if (!ascii) {
		return false;
	}
	if (base) {
		for (const std::string &term : terms) {
			auto it = base->rarest_token_vertices.find(std::string_view(term));
			if (it == base->rarest_token_vertices.end()) {
				continue;
			}
			for (uint32_t v : it->second) {
				bool all = true;
				for (uint32_t t = base->key_token_offsets[v]; all && t < base->key_token_offsets[v + 1]; t++) {
					all = wanted.count(base->key_tokens[t]) > 0;
				}
				if (all) {
					seeds.emplace_back(base->KeyOf(v));
				}
			}
		}
	}
	std::sort(seeds.begin(), seeds.end());
	seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
	out = std::move(seeds);
	return true;
}

} // namespace graph
} // namespace anatid
