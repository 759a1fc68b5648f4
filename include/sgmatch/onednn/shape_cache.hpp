// sgmatch/onednn/shape_cache.hpp - built primitives cached per input shape or layout, each built
// once however many threads ask; and the count of those builds.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

namespace detail {
inline std::atomic<std::size_t>& primitive_builds_counter() {
    static std::atomic<std::size_t> n{0};
    return n;
}
}  // namespace detail

/// How many times in this process a kernel built its oneDNN primitives for an input shape it had
/// not run before: once per kernel and shape (or layout), however many threads or runs ask. The
/// reorders that move an operand between layouts are made per call, from oneDNN's own primitive
/// cache.
inline std::size_t primitive_builds() { return detail::primitive_builds_counter().load(); }

namespace detail {

/// Built things (primitives and what they keep) cached per key. Each key is built once: a
/// second caller of the same key waits for the first one's build (callers of other keys do not
/// wait); a build that throws leaves the key to the next caller.
template <class Key, class Entry>
class shape_cache {
public:
    template <class Build>
    std::shared_ptr<const Entry> get(const Key& key, Build build) const {
        std::shared_ptr<std::mutex> once;
        {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = map_.find(key);
            if (it != map_.end()) return it->second;
            auto& b = building_[key];
            if (!b) b = std::make_shared<std::mutex>();
            once = b;
        }
        std::lock_guard<std::mutex> one_builder(*once);
        {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = map_.find(key);
            if (it != map_.end()) return it->second;  // built while this caller waited
        }
        std::shared_ptr<const Entry> e = build();
        primitive_builds_counter().fetch_add(1, std::memory_order_relaxed);
        std::lock_guard<std::mutex> lock(mu_);
        building_.erase(key);
        return map_.emplace(key, std::move(e)).first->second;
    }
    std::size_t size() const {
        std::lock_guard<std::mutex> lock(mu_);
        return map_.size();
    }

private:
    mutable std::mutex mu_;
    mutable std::map<Key, std::shared_ptr<const Entry>> map_;
    mutable std::map<Key, std::shared_ptr<std::mutex>> building_;  // a lock per key being built
};

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
