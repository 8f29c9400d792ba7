#include "graph_codec.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <stdexcept>

namespace anatid {
namespace graph {

namespace {

class Fields {
public:
	Fields(std::string_view text, const char *what) : s_(text), what_(what) {
	}

	// An integer field; false when empty (NULL).
	bool Int(int64_t &out) {
		const size_t end = s_.find('|', pos_);
		const size_t stop = end == std::string_view::npos ? s_.size() : end;
		const bool present = stop > pos_;
		if (present) {
			auto r = std::from_chars(s_.data() + pos_, s_.data() + stop, out);
			if (r.ec != std::errc() || r.ptr != s_.data() + stop) {
				Fail("an integer");
			}
		}
		pos_ = stop;
		Separator();
		return present;
	}
	// A decimal floating-point field (Python's repr of a float round-trips exactly).
	double RequiredDouble() {
		const size_t end = s_.find('|', pos_);
		const size_t stop = end == std::string_view::npos ? s_.size() : end;
		const std::string text(s_.substr(pos_, stop - pos_));
		char *parsed = nullptr;
		const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &parsed);
		if (text.empty() || parsed != text.c_str() + text.size()) {
			Fail("a number");
		}
		pos_ = stop;
		Separator();
		return v;
	}
	bool AtEnd() const {
		return pos_ >= s_.size();
	}
	int64_t RequiredInt() {
		int64_t v = 0;
		if (!Int(v)) {
			Fail("a required integer");
		}
		return v;
	}
	// A "<bytes>:<text>" field; false when empty (NULL).
	bool String(std::string &out) {
		if (pos_ >= s_.size() || s_[pos_] == '|') {
			Separator();
			return false;
		}
		const size_t colon = s_.find(':', pos_);
		if (colon == std::string_view::npos) {
			Fail("a length-prefixed string");
		}
		size_t len = 0;
		auto r = std::from_chars(s_.data() + pos_, s_.data() + colon, len);
		if (r.ec != std::errc() || r.ptr != s_.data() + colon || colon + 1 + len > s_.size()) {
			Fail("a length-prefixed string");
		}
		out.assign(s_.data() + colon + 1, len);
		pos_ = colon + 1 + len;
		Separator();
		return true;
	}

private:
	void Separator() {
		if (pos_ < s_.size()) {
			if (s_[pos_] != '|') {
				Fail("a '|' separator");
			}
			pos_++;
		}
	}
	[[noreturn]] void Fail(const char *expected) {
		throw std::invalid_argument(std::string("malformed graph ") + what_ + ": expected " + expected +
		                            " at byte " + std::to_string(pos_));
	}
	std::string_view s_;
	const char *what_;
	size_t pos_ = 0;
};

void PutString(std::string &out, const std::string &s) {
	out += std::to_string(s.size());
	out += ':';
	out += s;
}

} // namespace

JournalRow ParseJournalEntry(std::string_view entry) {
	Fields f(entry, "journal entry");
	JournalRow r;
	r.op = int8_t(f.RequiredInt());
	f.Int(r.seq);
	f.Int(r.a);
	f.Int(r.b);
	if (!f.Int(r.valid_from_us)) {
		r.valid_from_us = kOpenLow;
	}
	if (!f.Int(r.valid_to_us)) {
		r.valid_to_us = kOpenHigh;
	}
	f.String(r.a_key);
	f.String(r.b_key);
	f.String(r.kind);
	return r;
}

ParsedRequest ParseRequest(std::string_view text) {
	Fields f(text, "recall request");
	ParsedRequest p;
	p.request.hops = int(f.RequiredInt());
	p.request.limit = f.RequiredInt();
	p.has_valid_at = f.Int(p.request.valid_at_us);
	const int64_t mode = f.RequiredInt();
	p.empty_base = mode == 2;
	p.strict = mode != 0 && !p.empty_base;
	const int64_t seeds = f.RequiredInt();
	for (int64_t i = 0; i < seeds; i++) {
		std::string s;
		f.String(s);
		p.request.seed_keys.push_back(std::move(s));
	}
	const int64_t kinds = f.RequiredInt();
	p.request.filter_kinds = kinds >= 0;
	for (int64_t i = 0; i < kinds; i++) {
		std::string s;
		f.String(s);
		p.request.kinds.push_back(std::move(s));
	}
	if (!f.AtEnd()) { // the graph arm's ranking block: see graph_codec.hpp
		RankRequest &r = p.request.rank;
		r.enabled = true;
		r.named = f.RequiredDouble();
		r.expand = f.RequiredDouble();
		r.hub_share = f.RequiredDouble();
		r.hub_floor = f.RequiredInt();
		r.named_ungated = f.RequiredInt() != 0;
		const int64_t trusted = f.RequiredInt();
		for (int64_t i = 0; i < trusted; i++) {
			r.trusted.push_back(f.RequiredInt());
		}
		const int64_t extra = f.RequiredInt();
		for (int64_t i = 0; i < extra; i++) {
			r.extra_ids.push_back(f.RequiredInt());
			r.extra_src.push_back(f.RequiredInt());
			r.extra_c.push_back(f.RequiredDouble());
		}
		r.wg = f.RequiredDouble();
		r.protect = f.RequiredInt();
		r.k = f.RequiredInt();
		const int64_t first = f.RequiredInt();
		for (int64_t i = 0; i < first; i++) {
			r.first_ids.push_back(f.RequiredInt());
			r.first_scores.push_back(f.RequiredDouble());
		}
	}
	return p;
}

std::string EncodeRequest(const RecallRequest &request, bool has_valid_at, bool strict) {
	std::string out = std::to_string(request.hops) + "|" + std::to_string(request.limit) + "|";
	if (has_valid_at) {
		out += std::to_string(request.valid_at_us);
	}
	out += strict ? "|1|" : "|0|";
	out += std::to_string(request.seed_keys.size());
	for (const auto &s : request.seed_keys) {
		out += '|';
		PutString(out, s);
	}
	out += '|';
	out += request.filter_kinds ? std::to_string(request.kinds.size()) : std::string("-1");
	for (const auto &k : request.kinds) {
		out += '|';
		PutString(out, k);
	}
	return out;
}

} // namespace graph
} // namespace anatid
