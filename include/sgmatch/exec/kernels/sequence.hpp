// sgmatch/exec/kernels/sequence.hpp - the ops on sequences of tensors (ops/sequence.hpp), on
// every element type: a sequence is an exec::value holding owned tensors, shared between the
// sequences made from it (nothing writes a tensor once it is in one).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/sequence.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace sequence_detail {

/// The tensors a sequence op makes at most (a split into pieces of one along an axis of 2^40).
constexpr std::size_t max_items = std::size_t{1} << 24;

/// A position input: one int32 or int64 value in [-n, n) ([-n, n] where `end` may be named, as
/// SequenceInsert's), as an index from the front.
inline std::size_t position(const ops::op_attrs& a, const value& p, std::size_t n, bool end) {
    if (p.is_sequence() || (p.type() != dtype::i64 && p.type() != dtype::i32))
        fail(a, "position is " + std::string(p.is_sequence() ? "a sequence" : name_of(p.type())) + " (an int32 or int64 scalar expected)");
    if (p.size() != 1) fail(a, "position holds " + std::to_string(p.size()) + " values, not one");
    const std::int64_t v = p.dense_value().to_ints().at(0), len = static_cast<std::int64_t>(n);
    if (v < -len || v > (end ? len : len - 1))
        fail(a, "position " + std::to_string(v) + " is out of range for a sequence of " + std::to_string(n) + " tensors");
    return static_cast<std::size_t>(v < 0 ? v + len : v);
}

inline value of_items(const ops::op_attrs& a, dtype t, std::vector<value> items) {
    if (items.size() > max_items) fail(a, "a sequence of " + std::to_string(items.size()) + " tensors (over 2^24)");
    return value::sequence(t, std::move(items));
}

}  // namespace sequence_detail

inline typed_fn sequence_empty(const ops::op_attrs& a0, const ops::node_source&) {
    const dtype t = ops::dtype_of_onnx(a0.i("dtype"));
    if (t == dtype::unknown) refuse(a0, "dtype = " + std::to_string(a0.i("dtype")) + ": not an element type sgmatch has");
    return [t](const values&) { return values{value::sequence(t, {})}; };
}

inline typed_fn sequence_construct(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) { return values{sequence_detail::of_items(a, in(xs, 0, a).type(), xs)}; };
}

inline typed_fn sequence_insert(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& s = in(xs, 0, a);
        std::vector<value> items = s.items();
        const std::size_t at = xs.size() > 2 ? sequence_detail::position(a, xs[2], items.size(), true) : items.size();
        items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), in(xs, 1, a));
        return values{sequence_detail::of_items(a, s.type(), std::move(items))};
    };
}

inline typed_fn sequence_at(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const std::vector<value>& items = in(xs, 0, a).items();
        return values{items[sequence_detail::position(a, in(xs, 1, a), items.size(), false)]};
    };
}

inline typed_fn sequence_erase(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& s = in(xs, 0, a);
        std::vector<value> items = s.items();
        if (items.empty()) fail(a, "the sequence is empty: nothing to erase");
        const std::size_t at = xs.size() > 1 ? sequence_detail::position(a, xs[1], items.size(), false) : items.size() - 1;
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
        return values{value::sequence(s.type(), std::move(items))};
    };
}

inline typed_fn sequence_length(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        return values{value::of<std::int64_t>({}, {static_cast<std::int64_t>(in(xs, 0, a).items().size())})};
    };
}

inline typed_fn split_to_sequence(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x = in(xs, 0, a);
        if (x.is_sequence()) fail(a, "input 0 is a sequence; the op splits a tensor");
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), x.rank());
        const std::int64_t dim = x.dims()[ax];
        std::vector<std::int64_t> lengths;
        const bool given = xs.size() > 1;
        if (!given) {
            lengths.assign(static_cast<std::size_t>(std::min<std::int64_t>(dim, sequence_detail::max_items + 1)), 1);
        } else {
            const value& s = xs[1];
            if (s.is_sequence() || (s.type() != dtype::i64 && s.type() != dtype::i32) || s.rank() > 1)
                fail(a, "split must be an int32 or int64 scalar or list");
            const std::vector<std::int64_t> v = s.dense_value().to_ints();
            if (s.rank() == 0) {
                if (v.at(0) <= 0) fail(a, "split " + std::to_string(v[0]) + " is not a positive length");
                for (std::int64_t at = 0; at < dim && lengths.size() <= sequence_detail::max_items; at += v[0])
                    lengths.push_back(std::min(v[0], dim - at));
            } else {
                std::int64_t total = 0;
                for (const std::int64_t l : v) {
                    if (l < 0) fail(a, "split holds the negative length " + std::to_string(l));
                    total += l;
                }
                if (total != dim)
                    fail(a, "split " + ops::to_string(v) + " adds up to " + std::to_string(total) + ", not to axis " +
                                std::to_string(ax) + "'s " + std::to_string(dim));
                lengths = v;
            }
        }
        if (lengths.size() > sequence_detail::max_items) fail(a, "a sequence of over 2^24 tensors");
        std::vector<ops::dims> pieces(lengths.size(), x.dims());
        for (std::size_t i = 0; i < lengths.size(); ++i) pieces[i][ax] = lengths[i];
        values items = cut(x, ax, pieces);
        if (!given && a.i("keepdims") == 0)
            for (value& v : items) {
                shape d = v.dims();
                d.erase(d.begin() + static_cast<std::ptrdiff_t>(ax));
                v = v.reshaped(std::move(d));
            }
        return values{value::sequence(x.type(), std::move(items))};
    };
}

inline typed_fn concat_from_sequence(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const std::vector<value>& items = in(xs, 0, a).items();
        if (items.empty()) fail(a, "the sequence is empty: no result to make");
        const bool stack = a.i("new_axis") != 0;
        const shape& first = items[0].dims();
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), first.size() + (stack ? 1 : 0));
        shape out = first;
        if (stack) out.insert(out.begin() + static_cast<std::ptrdiff_t>(ax), 0);
        out[ax] = 0;  // counted below
        for (const value& v : items) {
            bool fits = v.rank() == first.size();
            for (std::size_t k = 0; fits && k < first.size(); ++k) fits = v.dims()[k] == first[k] || (!stack && k == ax);
            if (!fits)
                fail(a, "tensors of dims " + to_string(first) + " and " + to_string(v.dims()) + " do not " + (stack ? "stack" : "join along axis " + std::to_string(ax)));
            out[ax] += stack ? 1 : v.dims()[ax];
        }
        return values{join(items, ax, out)};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::SequenceEmpty>{typed::sequence_empty};
template <> inline constexpr typed_binding typed_kernels<ops::SequenceConstruct>{typed::sequence_construct};
template <> inline constexpr typed_binding typed_kernels<ops::SequenceInsert>{typed::sequence_insert};
template <> inline constexpr typed_binding typed_kernels<ops::SequenceAt>{typed::sequence_at};
template <> inline constexpr typed_binding typed_kernels<ops::SequenceErase>{typed::sequence_erase};
template <> inline constexpr typed_binding typed_kernels<ops::SequenceLength>{typed::sequence_length};
template <> inline constexpr typed_binding typed_kernels<ops::SplitToSequence>{typed::split_to_sequence};
template <> inline constexpr typed_binding typed_kernels<ops::ConcatFromSequence>{typed::concat_from_sequence};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
