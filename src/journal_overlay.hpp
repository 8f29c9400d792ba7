// How a base generation and the journal written since it combine, shared by the text arm
// (bm25.cpp) and the vector arm (vector.cpp): both must hide the same base rows and apply
// the same validity window as the SQL oracle, so the rule is written once here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace anatid {

// Whether a row valid over [vf, vt) is visible at `at` (the oracle's vf <= at AND at < vt).
inline bool Visible(int64_t vf, int64_t vt, int64_t at) {
	return vf <= at && at < vt;
}

// Which base rows the journal overrides: one flag per row of `in.base` (none without a base),
// set for each id in `in.touched` the base holds. Input is Bm25Input or CosineInput.
template <class Input>
std::vector<uint8_t> DeadBase(const Input &in) {
	std::vector<uint8_t> dead(in.base ? in.base->ids.size() : 0, 0);
	if (in.base) {
		for (int64_t id : in.touched) {
			auto it = in.base->doc_of.find(id);
			if (it != in.base->doc_of.end()) {
				dead[static_cast<size_t>(it->second)] = 1;
			}
		}
	}
	return dead;
}

} // namespace anatid
