// sgmatch/graph/graph_storage.hpp - the built-in graph's storage: room reserved before a write,
// nodes appended without a throw, user lists grown, compacted and pruned.
// Members of sgmatch::graph (graph/graph.hpp), defined here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"

SGMATCH_BEGIN_NAMESPACE

inline std::uint32_t graph::intern_op(std::string_view s) {
    if (last_op_ != none && op_names_[last_op_] == s) return last_op_;
    last_op_ = intern(op_ids_, op_names_, s);
    return last_op_;
}

inline std::uint32_t graph::reusable_inputs(const std::vector<node_id>& set, std::size_t count) const {
    std::uint32_t begin = none, end = none;
    for (auto m : set) {
        const rec& r = recs_[m.value];
        if (r.in_count == 0) continue;
        if (begin == none) {
            begin = r.in_begin;
        } else if (r.in_begin != end) {
            return none;
        }
        end = r.in_begin + r.in_count;
    }
    return begin != none && end - begin >= count ? begin : none;
}

inline void graph::reserve_node(std::string_view name, std::size_t inputs, bool appended) {
    if (recs_.size() >= none - 1 || ins_.size() + inputs >= none || names_.size() + name.size() >= none)
        throw graph_error("sgmatch::graph: more than 2^32 - 2 nodes, inputs or name bytes");
    room_for(recs_, 1);
    room_for(op_codes_, 1);
    room_for(cold_, 1);
    room_for(key_, 1);
    room_for(use_at_, 1);
    room_for(ins_, inputs);
    room_for(names_, name.size());
    if (appended && order_ != order_state::dirty) room_for(order_list_, 1);
}

template <class In>
node_id graph::new_node_unchecked(node_kind k, std::uint32_t op, std::string_view name, const In* ins,
                           std::size_t count, std::uint32_t outputs, std::uint32_t slot,
                           std::uint32_t in_at) noexcept {
    const node_id id{static_cast<std::uint32_t>(recs_.size())};
    rec r;
    r.op = op;
    r.kind = k;
    r.outputs = static_cast<std::uint16_t>(outputs);
    r.in_begin = in_at == none ? static_cast<std::uint32_t>(ins_.size()) : in_at;
    r.in_count = static_cast<std::uint32_t>(count);
    ++writes_;
    if (in_at == none) {
        for (std::size_t i = 0; i < count; ++i) ins_.push_back(value_of(ins[i]));
    } else {
        for (std::size_t i = 0; i < count; ++i) ins_[in_at + i] = value_of(ins[i]);
    }
    cold_rec c;
    c.name_begin = static_cast<std::uint32_t>(names_.size());
    c.name_len = static_cast<std::uint32_t>(name.size());
    const std::size_t at = names_.size();
    names_.resize(at + name.size());
    if (!name.empty()) std::memcpy(names_.data() + at, name.data(), name.size());
    recs_.push_back(r);
    op_codes_.push_back(op);
    cold_.push_back(c);
    use_at_.push_back(use_range{});
    ++live_;
    if (order_ == order_state::dirty) {
        key_.push_back(0);
    } else if (slot == none) {
        key_.push_back(static_cast<std::uint32_t>(order_list_.size()));
        order_list_.push_back(id);
    } else {
        key_.push_back(slot);
        order_list_[slot] = id;
    }
    return id;
}

inline void graph::reserve_uses(node_id n, std::size_t need) {
    if (need < 2) return;
    use_range& at = use_at_[n.value];
    if (at.capacity >= need) return;
    const std::size_t cap = std::max<std::size_t>({need, 2 * std::size_t(at.capacity), 4});
    if (uses_.size() + cap >= none) throw graph_error("sgmatch::graph: more than 2^32 - 2 uses");
    // Compact once the holes are a quarter of the pool and pay for the pass over every node.
    if (uses_garbage_ >= 64 && 4 * uses_garbage_ > uses_.size() && 8 * uses_garbage_ > recs_.size()) compact_uses();
    room_for(uses_, cap);
    // nothing below throws
    const rec& r = recs_[n.value];
    const auto begin = static_cast<std::uint32_t>(uses_.size());
    uses_.resize(uses_.size() + cap);
    if (r.user_count == 1) uses_[begin] = r.first;
    if (r.user_count >= 2) std::copy_n(uses_.begin() + at.begin, r.user_count, uses_.begin() + begin);
    uses_garbage_ += at.capacity;
    at = use_range{begin, static_cast<std::uint32_t>(cap)};
    recs_[n.value].flags |= rec::ranged_flag;
}

inline void graph::compact_uses() {
    std::size_t live = 0;  // counted, not derived from uses_garbage_: the loop must not throw
    for (std::size_t i = 0; i < recs_.size(); ++i) live += recs_[i].alive() ? use_at_[i].capacity : 0;
    detail::pod_array<use<node_id>> fresh;
    fresh.reserve(live + live / 4);
    // nothing below throws
    for (std::size_t i = 0; i < recs_.size(); ++i) {
        use_range& at = use_at_[i];
        if (at.capacity == 0) continue;
        if (!recs_[i].alive()) {
            at = use_range{};
            continue;
        }
        const auto begin = static_cast<std::uint32_t>(fresh.size());
        fresh.resize(begin + at.capacity);
        std::copy_n(uses_.begin() + at.begin, at.capacity, fresh.begin() + begin);
        at.begin = begin;
    }
    uses_.swap(fresh);
    uses_garbage_ = 0;
}

inline void graph::free_uses(node_id n) noexcept {
    rec& r = recs_[n.value];
    if (!(r.flags & rec::ranged_flag)) return;
    uses_garbage_ += use_at_[n.value].capacity;
    use_at_[n.value] = use_range{};
    r.flags &= static_cast<std::uint8_t>(~rec::ranged_flag);
}

template <class Gone>
void graph::prune_uses(node_id n, const Gone& gone) noexcept {
    rec& r = recs_[n.value];
    if (r.user_count == 0) return;
    if (r.user_count == 1) {
        if (gone(r.first)) r.user_count = 0;
        return;
    }
    use<node_id>* list = uses_.data() + use_at_[n.value].begin;
    std::uint32_t k = 0;
    for (std::uint32_t i = 0; i < r.user_count; ++i)
        if (!gone(list[i])) list[k++] = list[i];
    r.user_count = k;
    if (k == 1) r.first = list[0];
}

SGMATCH_END_NAMESPACE
