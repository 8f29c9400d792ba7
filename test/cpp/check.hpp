// A deliberately tiny test harness: TEST_CASE registers a function, CHECK* record a
// failure (with file:line) and keep going, RunAllTests() reports and returns the exit
// code ctest reads. No gtest: the core must build and test with a bare compiler.
#pragma once

#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace anatid_test {

struct TestCase {
	const char *name;
	void (*fn)();
};

inline std::vector<TestCase> &Registry() {
	static std::vector<TestCase> tests;
	return tests;
}

inline int &FailureCount() {
	static int failures = 0;
	return failures;
}

struct Registrar {
	Registrar(const char *name, void (*fn)()) {
		Registry().push_back(TestCase {name, fn});
	}
};

inline void Fail(const char *file, int line, const std::string &message) {
	FailureCount()++;
	std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, message.c_str());
}

template <class A, class B>
std::string Describe(const char *a_expr, const A &a, const char *b_expr, const B &b) {
	std::ostringstream out;
	out.precision(17);
	out << a_expr << " == " << b_expr << " (" << a << " vs " << b << ")";
	return out.str();
}

inline int RunAllTests() {
	int failed_tests = 0;
	for (const TestCase &test : Registry()) {
		const int before = FailureCount();
		try {
			test.fn();
		} catch (const std::exception &e) {
			Fail(__FILE__, __LINE__, std::string(test.name) + " threw: " + e.what());
		} catch (...) {
			Fail(__FILE__, __LINE__, std::string(test.name) + " threw a non-std exception");
		}
		const bool ok = FailureCount() == before;
		failed_tests += ok ? 0 : 1;
		std::printf("[%s] %s\n", ok ? " ok " : "FAIL", test.name);
	}
	std::printf("%zu tests, %d failed\n", Registry().size(), failed_tests);
	return failed_tests == 0 && !Registry().empty() ? 0 : 1;
}

} // namespace anatid_test

#define ANATID_TEST_CONCAT_(a, b) a##b
#define ANATID_TEST_CONCAT(a, b) ANATID_TEST_CONCAT_(a, b)

#define TEST_CASE(name)                                                                                               \
	static void ANATID_TEST_CONCAT(test_fn_, __LINE__)();                                                          \
	static ::anatid_test::Registrar ANATID_TEST_CONCAT(test_reg_, __LINE__)(name,                                  \
	                                                                         ANATID_TEST_CONCAT(test_fn_, __LINE__)); \
	static void ANATID_TEST_CONCAT(test_fn_, __LINE__)()

#define CHECK(cond)                                                                                                    \
	do {                                                                                                               \
		if (!(cond)) {                                                                                                 \
			::anatid_test::Fail(__FILE__, __LINE__, #cond);                                                            \
		}                                                                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                                                                 \
	do {                                                                                                               \
		const auto &check_a_ = (a);                                                                                    \
		const auto &check_b_ = (b);                                                                                    \
		if (!(check_a_ == check_b_)) {                                                                                 \
			::anatid_test::Fail(__FILE__, __LINE__, ::anatid_test::Describe(#a, check_a_, #b, check_b_));             \
		}                                                                                                              \
	} while (0)

// Floats compared to an absolute tolerance; use CHECK_EQ when bit-exactness is the contract.
#define CHECK_NEAR(a, b, tol)                                                                                          \
	do {                                                                                                               \
		const double check_a_ = (a);                                                                                   \
		const double check_b_ = (b);                                                                                   \
		if (!(std::fabs(check_a_ - check_b_) <= (tol))) {                                                              \
			::anatid_test::Fail(__FILE__, __LINE__, ::anatid_test::Describe(#a, check_a_, #b, check_b_));             \
		}                                                                                                              \
	} while (0)

#define CHECK_THROWS(expr)                                                                                             \
	do {                                                                                                               \
		bool check_threw_ = false;                                                                                     \
		try {                                                                                                          \
			(void)(expr);                                                                                              \
		} catch (...) {                                                                                                \
			check_threw_ = true;                                                                                       \
		}                                                                                                              \
		if (!check_threw_) {                                                                                           \
			::anatid_test::Fail(__FILE__, __LINE__, "expected an exception from " #expr);                              \
		}                                                                                                              \
	} while (0)

#define ANATID_TEST_MAIN()                                                                                             \
	int main() {                                                                                                       \
		return ::anatid_test::RunAllTests();                                                                           \
	}
