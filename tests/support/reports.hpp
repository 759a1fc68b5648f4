// Test helpers for what apply_backend reports: one property's report, and whether a declined
// match gave a reason containing some text.
#pragma once

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "sgmatch/partition/partition.hpp"

namespace test {

/// The report of `property` (its full name, e.g. "onednn.attention"); fails the test when there
/// is none.
inline const sgmatch::property_report& report(const std::vector<sgmatch::property_report>& reports, const std::string& property) {
    for (const auto& r : reports)
        if (r.property == property) return r;
    FAIL("no report for " << property);
    return reports.front();
}

/// Whether one of the report's decline reasons contains `text`.
inline bool said(const sgmatch::property_report& r, const std::string& text) {
    for (const auto& kv : r.check_reasons)
        if (kv.first.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace test
