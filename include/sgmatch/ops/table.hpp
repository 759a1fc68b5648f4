// sgmatch/ops/table.hpp - every op description of the standard vocabulary, looked up by any
// of the op's names.
//
//   if (const ops::op_schema* s = ops::find_schema(g.op_name(n))) ...
//
// An op's description lives in its family's header, attached to the op's vocabulary tag as
// description<Tag> (ops/schema.hpp); the lists here are folds over the vocabulary. What else
// adding an op takes, in every layer: CONTRIBUTING.md, "Add an ONNX op".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/control.hpp"
#include "sgmatch/ops/einsum.hpp"
#include "sgmatch/ops/elementwise.hpp"
#include "sgmatch/ops/losses.hpp"
#include "sgmatch/ops/nn.hpp"
#include "sgmatch/ops/optional.hpp"
#include "sgmatch/ops/positions.hpp"
#include "sgmatch/ops/recurrent.hpp"
#include "sgmatch/ops/reduce.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/sequence.hpp"
#include "sgmatch/ops/signal.hpp"
#include "sgmatch/ops/tensor.hpp"
#include "sgmatch/ops/text.hpp"
#include "sgmatch/ops/vision.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// Calls f(Tag{}) for every tag of ops::vocabulary that has a description, in vocabulary order.
template <class F, class... T>
void for_each_described(tag_list<T...>, F&& f) {
    auto one = [&](auto tag) {
        if constexpr (described_v<decltype(tag)>) f(tag);
    };
    (one(T{}), ...);
}

/// Every description, in vocabulary order: the ops with a description<Tag>.
inline const std::vector<const op_schema*>& all_schemas() {
    static const std::vector<const op_schema*> all = [] {
        std::vector<const op_schema*> v;
        for_each_described(vocabulary{}, [&](auto tag) { v.push_back(description<decltype(tag)>); });
        return v;
    }();
    return all;
}

/// A table from each described op's description to its facet in some layer: `facet(tag)` gives
/// the facet, or a null V where the op has none (not entered). What the find_* of the layers
/// (shape rules, kernels, typed kernels) look up.
template <class V, class F>
std::unordered_map<const op_schema*, V> facet_table(F facet) {
    std::unordered_map<const op_schema*, V> m;
    for_each_described(vocabulary{}, [&](auto tag) {
        if (V v = facet(tag)) m.emplace(description<decltype(tag)>, v);
    });
    return m;
}

/// The description of the op named `op` (any alias), or null.
inline const op_schema* find_schema(std::string_view op) {
    static const std::unordered_map<std::string_view, const op_schema*> by_name = [] {
        std::unordered_map<std::string_view, const op_schema*> m;
        for (const op_schema* s : all_schemas())
            for (std::size_t i = 0; i < s->name_count; ++i) m.emplace(s->names[i], s);
        return m;
    }();
    const auto it = by_name.find(op);
    return it == by_name.end() ? nullptr : it->second;
}

/// The description of the op of Tag.
template <class Tag>
const op_schema& schema_of() {
    const op_schema* s = find_schema(Tag::names[0]);
    if (s == nullptr) throw op_error("sgmatch: op " + std::string(Tag::names[0]) + " has no description");
    return *s;
}

/// Every attribute name some description knows, each once (what a copy of a node reads from
/// an adapter that cannot list attributes).
inline const std::vector<std::string_view>& all_attribute_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const op_schema* s : all_schemas())
            for (std::size_t i = 0; i < s->attr_count; ++i) {
                bool seen = false;
                for (auto n : v) seen = seen || n == s->attrs[i].name;
                if (!seen) v.push_back(s->attrs[i].name);
            }
        return v;
    }();
    return names;
}

/// The element type of a node's outputs from its inputs' types (unknown where an input's type
/// is, or for an element type code sgmatch has no type for).
inline dtype output_type(const op_attrs& a, const std::vector<dtype>& inputs, std::size_t port = 0) {
    const type_rule& r = a.schema().types;
    if (port == 1 && r.second != dtype::unknown) return r.second;
    if (port > 0 && r.rest != dtype::unknown) return r.rest;
    switch (r.how) {
        case type_rule::from::fixed: return r.fixed;
        case type_rule::from::input: return r.input < inputs.size() ? inputs[r.input] : dtype::unknown;
        case type_rule::from::attribute:
            if (r.attr.empty()) return dtype::unknown;
            if (!a.has(r.attr)) {
                const attr_spec* spec = a.schema().attr(r.attr);
                if (spec == nullptr) return dtype::unknown;
                // The input's type where the attribute may be absent (EyeLike's dtype).
                if (spec->def.how == attr_default::from::absent) return r.input < inputs.size() ? inputs[r.input] : dtype::unknown;
            }
            return dtype_of_onnx(a.i(r.attr));
    }
    return dtype::unknown;
}

}  // namespace ops
SGMATCH_END_NAMESPACE
