// sgmatch/exec/fallback.hpp - the input shapes a node's oneDNN kernel rejected at run time.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace detail {

// The input shapes a node's oneDNN kernel rejected (kernel_error at run time): for those the
// node runs unfused, without asking the kernel again. The first one is logged on stderr.
class fallback_log {
public:
    using shapes = std::vector<onednn::dims>;
    /// Whether any shape was rejected (no lock: the common case costs one load).
    bool any() const { return any_.load(std::memory_order_acquire); }
    bool rejected(const shapes& s) const {
        if (!any()) return false;
        std::lock_guard<std::mutex> lock(m_);
        return std::find(rejected_.begin(), rejected_.end(), s) != rejected_.end();
    }
    void reject(shapes s, std::string_view node, const char* instead, const char* why) {
        std::lock_guard<std::mutex> lock(m_);
        if (std::find(rejected_.begin(), rejected_.end(), s) == rejected_.end()) rejected_.push_back(std::move(s));
        any_.store(true, std::memory_order_release);
        if (logged_) return;
        logged_ = true;
        std::fprintf(stderr, "sgmatch: node '%.*s': %s; %s (logged once per node)\n", static_cast<int>(node.size()),
                     node.data(), why, instead);
    }

private:
    std::atomic<bool> any_{false};  // first: the one field every run reads
    bool logged_ = false;
    mutable std::mutex m_;
    std::vector<shapes> rejected_;
};

inline fallback_log::shapes shapes_of(const onednn::tensor& first, const std::vector<onednn::tensor>& rest) {
    fallback_log::shapes s;
    if (!first.empty()) s.push_back(first.shape());
    for (const auto& t : rest) s.push_back(t.shape());
    return s;
}

}  // namespace detail
}  // namespace exec
SGMATCH_END_NAMESPACE
