// sgmatch/ops/attrs.hpp - a node's attributes as its op's description reads them: the one
// attribute reader of the kernels and the lowering.
//
//   const ops::node_of<G> src(g, n);                 // any adapter graph's node
//   const ops::op_attrs a(*schema, src);             // checks every attribute and the input count
//   a.i("group");  a.ints("strides", 2);  a.f("epsilon");  a.s("auto_pad");
//
// Construction checks the node against the description, all at once: the number of inputs,
// each attribute's type, required attributes, and every value the kernels do not implement
// (MaxPool's ceil_mode = 1, ConvTranspose's output_shape, ...). When the adapter can list a
// node's attributes (graph_traits<G>::for_each_attr), an attribute the description does not
// know is refused too. One op_error names the node, the op and every problem.
// Absent attributes read their defaults from the description.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/ops/schema.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// A node as the op descriptions read it, whatever the graph type.
class node_source {
public:
    virtual ~node_source() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view op_name() const = 0;
    virtual std::optional<attribute> attr(std::string_view key) const = 0;
    /// f(key, value) for every attribute; false when the adapter cannot list them.
    virtual bool list_attrs(void (*f)(void*, std::string_view, const attribute&), void* ctx) const = 0;
    virtual std::size_t input_count() const = 0;
    virtual std::size_t output_count() const { return 1; }
    /// Input `slot`'s constant, when its producer is a constant node.
    virtual std::optional<const_tensor_view> constant_input(std::size_t slot) const = 0;
    /// The shape and type of input `slot`, when the adapter knows them.
    virtual std::optional<tensor_type> input_type(std::size_t slot) const = 0;

    /// The single value of input `slot` when it is a one-element f32/f64 constant.
    std::optional<double> scalar_input(std::size_t slot) const {
        if (slot >= input_count()) return std::nullopt;
        const auto c = constant_input(slot);
        return c ? c->scalar() : std::nullopt;
    }
};

/// node_source over graph_traits<G>.
template <class G>
class node_of final : public node_source {
public:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    node_of(const G& g, N n) : g_(g), n_(n) {}
    std::string_view name() const override { return traits::name(g_, n_); }
    std::string_view op_name() const override { return traits::op_name(g_, n_); }
    std::optional<attribute> attr(std::string_view key) const override { return traits::attr(g_, n_, key); }
    bool list_attrs(void (*f)(void*, std::string_view, const attribute&), void* ctx) const override {
        if constexpr (detail::has_for_each_attr<traits, G>::value) {
            traits::for_each_attr(g_, n_, [&](auto&& k, const attribute& a) { f(ctx, std::string_view(k), a); });
            return true;
        } else {
            (void)f;
            (void)ctx;
            return false;
        }
    }
    std::size_t input_count() const override { return traits::input_count(g_, n_); }
    std::size_t output_count() const override { return traits::output_count(g_, n_); }
    std::optional<const_tensor_view> constant_input(std::size_t slot) const override {
        if (slot >= input_count()) return std::nullopt;
        return adapter<G>::constant(g_, traits::input(g_, n_, slot).node);
    }
    std::optional<tensor_type> input_type(std::size_t slot) const override {
        if (slot >= input_count()) return std::nullopt;
        const auto v = traits::input(g_, n_, slot);
        return adapter<G>::value_type(g_, v.node, v.port);
    }

private:
    const G& g_;
    N n_;
};

/// The attributes of one node, checked against its op's description, with defaults.
class op_attrs {
public:
    /// Reads and checks every attribute of `node` against `schema` (see the header comment).
    op_attrs(const op_schema& schema, const node_source& node)
        : s_(&schema), node_(node.name()), outputs_(node.output_count()) {
        std::vector<std::string> problems;
        const std::size_t n_in = node.input_count();
        if (!schema.open && (n_in < schema.min_inputs() || n_in > schema.max_inputs()))
            problems.push_back(std::to_string(n_in) + " inputs, " + expected_inputs());
        struct ctx_t {
            op_attrs* self;
            std::vector<std::string>* problems;
        } ctx{this, &problems};
        const bool listed = !schema.open && node.list_attrs(
            [](void* c, std::string_view k, const attribute& a) {
                auto& x = *static_cast<ctx_t*>(c);
                const attr_spec* spec = x.self->s_->attr(k);
                if (spec == nullptr) {
                    x.problems->push_back("attribute " + std::string(k) + " is not one of " +
                                          std::string(x.self->s_->name()) + "'s attributes");
                    return;
                }
                x.self->take(*spec, a, *x.problems);
            },
            &ctx);
        if (!listed && !schema.open)
            for (std::size_t i = 0; i < schema.attr_count; ++i)
                if (auto a = node.attr(schema.attrs[i].name)) take(schema.attrs[i], *a, problems);
        for (std::size_t i = 0; i < schema.attr_count; ++i)
            if (schema.attrs[i].def.how == attr_default::from::required && find(schema.attrs[i].name) == nullptr &&
                std::find(given_specs_.begin(), given_specs_.end(), &schema.attrs[i]) == given_specs_.end())
                problems.push_back("attribute " + std::string(schema.attrs[i].name) + " is required");
        if (!problems.empty()) raise(node_, node.op_name(), problems);
    }

    /// Attributes given directly (a shape rule's own tests, a front end before the node exists).
    op_attrs(const op_schema& schema, std::vector<std::pair<std::string, attribute>> given, std::string node = {})
        : s_(&schema), node_(std::move(node)) {
        std::vector<std::string> problems;
        for (auto& [k, a] : given) {
            const attr_spec* spec = schema.attr(k);
            if (spec == nullptr) problems.push_back("attribute " + k + " is not one of " + std::string(schema.name()) + "'s attributes");
            else take(*spec, a, problems);
        }
        if (!problems.empty()) raise(node_, schema.name(), problems);
    }

    const op_schema& schema() const { return *s_; }
    const std::string& node_name() const { return node_; }
    /// The outputs the node has (Split's number of pieces).
    std::size_t outputs() const { return outputs_; }
    void set_outputs(std::size_t n) { outputs_ = n; }

    /// Whether the node carries the attribute (a default does not count).
    bool has(std::string_view key) const { return find(key) != nullptr; }
    /// The attribute as given, if given.
    const attribute* given(std::string_view key) const { return find(key); }

    std::int64_t i(std::string_view key) const {
        if (const attribute* a = find(key)) return *a->as_int();
        return static_cast<std::int64_t>(spec(key).def.number);
    }
    double f(std::string_view key) const {
        if (const attribute* a = find(key)) return *a->as_real();
        return spec(key).def.number;
    }
    std::string_view s(std::string_view key) const {
        if (const attribute* a = find(key)) return *a->as_string();
        return spec(key).def.text;
    }
    /// A list of integers; when absent, its default for `axes` spatial axes (empty if none).
    dims ints(std::string_view key, std::size_t axes = 0) const {
        if (const attribute* a = find(key)) return *a->as_ints();
        const attr_spec& sp = spec(key);
        const auto v = static_cast<std::int64_t>(sp.def.number);
        switch (sp.def.how) {
            case attr_default::from::per_axis: return dims(axes, v);
            case attr_default::from::per_axis2: return dims(2 * axes, v);
            default: return {};
        }
    }
    std::vector<double> reals(std::string_view key) const {
        if (const attribute* a = find(key)) {
            if (const auto* r = a->as_reals()) return *r;
            if (const auto* is = a->as_ints()) return std::vector<double>(is->begin(), is->end());
        }
        return {};
    }

    /// A graph-valued attribute (a control-flow op's body); null when absent.
    const graph_body* body(std::string_view key) const {
        const attribute* a = find(key);
        return a ? a->as_graph() : nullptr;
    }

    /// "node 'x' (Op): " for messages of the kernels built from these attributes.
    std::string where() const { return "node '" + node_ + "' (" + std::string(s_->name()) + ")"; }

private:
    [[noreturn]] static void raise(const std::string& node, std::string_view op, const std::vector<std::string>& problems) {
        std::string m = "sgmatch: node '" + node + "' (" + std::string(op) + "): ";
        for (std::size_t i = 0; i < problems.size(); ++i) m += (i ? "; " : "") + problems[i];
        throw op_error(m);
    }
    const attr_spec& spec(std::string_view key) const {
        const attr_spec* sp = s_->attr(key);
        if (sp == nullptr) throw op_error("sgmatch: " + std::string(s_->name()) + " has no attribute " + std::string(key));
        return *sp;
    }
    const attribute* find(std::string_view key) const {
        for (const auto& [sp, a] : given_)
            if (sp->name == key) return &a;
        return nullptr;
    }

    // Checks one given attribute against its spec; keeps it when its type fits.
    void take(const attr_spec& sp, const attribute& a, std::vector<std::string>& problems) {
        const std::string name(sp.name);
        given_specs_.push_back(&sp);  // given, even when refused below (then not "required" too)
        auto wrong_type = [&](const char* want) { problems.push_back("attribute " + name + " is not " + want); };
        std::optional<attribute> v;
        switch (sp.type) {
            case attr_type::integer:
                if (a.as_int()) v = a;
                else wrong_type("an integer");
                break;
            case attr_type::real:
                if (const auto r = a.as_real()) v = attribute(*r);
                else wrong_type("a number");
                break;
            case attr_type::string:
                if (a.as_string()) v = a;
                else wrong_type("a string");
                break;
            case attr_type::type:
                if (a.as_string()) v = a;
                else wrong_type("a type (a string such as tensor(float))");
                break;
            case attr_type::integers:
                if (a.as_ints()) v = a;
                else if (const auto i = a.as_int()) v = attribute(attribute::ints{*i});
                else wrong_type("a list of integers");
                break;
            case attr_type::reals:
                if (a.as_reals() || a.as_ints()) v = a;
                else if (const auto r = a.as_real()) v = attribute(attribute::reals{*r});
                else wrong_type("a list of numbers");
                break;
            case attr_type::graph:
                if (a.as_graph() && a.as_graph()->g) v = a;
                else wrong_type("a graph");
                break;
        }
        if (!v) return;
        if (!sp.sup.implemented) {
            problems.push_back("attribute " + name + " is not implemented" + (sp.sup.why.empty() ? "" : ": " + std::string(sp.sup.why)));
            return;
        }
        auto out_of_range = [&](double x) { return x < sp.sup.lo || x > sp.sup.hi; };
        bool bad = false;
        std::string shown;
        if (const auto r = v->as_real()) {
            bad = out_of_range(*r);
            shown = v->as_int() ? std::to_string(*v->as_int()) : std::to_string(*r);
        } else if (const auto* is = v->as_ints()) {
            for (auto x : *is) bad = bad || out_of_range(static_cast<double>(x));
            shown = to_string(*is);
        } else if (const auto* rs = v->as_reals()) {
            for (auto x : *rs) bad = bad || out_of_range(x);
            shown = "a list";
        } else if (const auto str = v->as_string(); str && !sp.sup.values.empty()) {
            bad = !listed(sp.sup.values, *str);
            shown = "'" + std::string(*str) + "'";
        }
        if (bad) {
            std::string m = "attribute " + name + " = " + shown + " is not implemented";
            if (!sp.sup.values.empty()) m += " (implemented: " + std::string(sp.sup.values) + ")";
            else if (sp.sup.lo == sp.sup.hi) m += " (implemented: " + std::to_string(static_cast<std::int64_t>(sp.sup.lo)) + ")";
            else m += " (implemented: " + range_text(sp.sup) + ")";
            if (!sp.sup.why.empty()) m += ": " + std::string(sp.sup.why);
            problems.push_back(m);
            return;
        }
        given_.emplace_back(&sp, std::move(*v));
    }

    static bool listed(std::string_view list, std::string_view v) {
        while (!list.empty()) {
            const auto bar = list.find('|');
            if (list.substr(0, bar) == v) return true;
            if (bar == std::string_view::npos) break;
            list.remove_prefix(bar + 1);
        }
        return false;
    }
    static std::string range_text(const attr_support& s) {
        auto num = [](double x) {
            std::string t = std::to_string(x);
            while (!t.empty() && t.back() == '0') t.pop_back();
            if (!t.empty() && t.back() == '.') t.pop_back();
            return t;
        };
        if (s.hi == std::numeric_limits<double>::infinity()) return ">= " + num(s.lo);
        return num(s.lo) + " to " + num(s.hi);
    }
    std::string expected_inputs() const {
        const std::size_t lo = s_->min_inputs(), hi = s_->max_inputs();
        if (hi == static_cast<std::size_t>(-1)) return "expected at least " + std::to_string(lo);
        if (lo == hi) return "expected " + std::to_string(lo);
        return "expected " + std::to_string(lo) + " to " + std::to_string(hi);
    }

    const op_schema* s_;
    std::string node_;
    std::size_t outputs_ = 1;
    std::vector<const attr_spec*> given_specs_;  // every attribute the node gave, accepted or not
    std::vector<std::pair<const attr_spec*, attribute>> given_;
};

}  // namespace ops
SGMATCH_END_NAMESPACE
