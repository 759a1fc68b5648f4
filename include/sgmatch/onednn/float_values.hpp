// sgmatch/onednn/float_values.hpp - f32 values a kernel spec holds (a conv's or a matmul's
// weights): its own, or shared with the owner of a graph's constant without a copy.
//
//   s.weights = std::vector<float>{...};                          // its own
//   s.weights = float_values::shared(owner, ptr, count);          // the constant's bytes, shared
//   s.weights.mutable_data()[i] *= k;                             // copies shared values first
//
// Copies share the values; a write (mutable_data, assign) makes them the writer's own first, so
// neither a constant's owner nor another copy ever sees it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

class float_values {
public:
    float_values() = default;
    float_values(std::vector<float> v) { own(std::move(v)); }  // NOLINT: implicit on purpose
    float_values(std::initializer_list<float> v) { own(std::vector<float>(v)); }
    float_values& operator=(std::vector<float> v) {
        own(std::move(v));
        return *this;
    }
    float_values& operator=(std::initializer_list<float> v) {
        own(std::vector<float>(v));
        return *this;
    }

    /// `count` values at `data`, which `owner` keeps alive and unchanged while held.
    static float_values shared(std::shared_ptr<const void> owner, const float* data, std::size_t count) {
        float_values f;
        f.data_ = data;
        f.size_ = count;
        f.held_ = std::move(owner);
        return f;
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const float* data() const { return data_; }
    const float* begin() const { return data_; }
    const float* end() const { return data_ + size_; }
    float operator[](std::size_t i) const { return data_[i]; }
    /// Whether the values are shared with a constant's owner (not copied).
    bool is_shared() const { return held_ != nullptr && own_ == nullptr; }
    std::vector<float> to_vector() const { return std::vector<float>(begin(), end()); }

    /// Writable values: copied first unless this holds the only copy of its own.
    float* mutable_data() {
        if (own_ == nullptr || own_.use_count() > 1) own(to_vector());
        return own_->data();
    }
    void assign(std::size_t n, float v) { own(std::vector<float>(n, v)); }

    friend bool operator==(const float_values& a, const float_values& b) {
        return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator!=(const float_values& a, const float_values& b) { return !(a == b); }

private:
    void own(std::vector<float> v) {
        own_ = std::make_shared<std::vector<float>>(std::move(v));
        held_.reset();
        data_ = own_->data();
        size_ = own_->size();
    }

    std::shared_ptr<std::vector<float>> own_;  // values of its own (shared between copies)
    std::shared_ptr<const void> held_;         // or a constant's owner
    const float* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
