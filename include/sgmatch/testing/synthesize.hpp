// sgmatch/testing/synthesize.hpp - graphs drawn from a pattern's type so that they match it
// (what differential.hpp runs).
//
//   sgmatch::testing::draw d = sgmatch::testing::synthesize(pattern, seed, {choices...});
//
// A walk over the pattern's AST makes a choice at every alternative, optional, repeat count,
// multi-tag op, chain input of a two-input op and operand order of a commutative op; a choice
// point is the AST node (address and type). Choices go to options not yet run until every option
// of every point has run (coverage), then at random, from a generator of their own: a graph drawn
// again from its seed and choices is the same graph. Ops are drawn by generators.hpp; an op tag
// without a generator is reported and not drawn. pred::scalar_near constants are drawn with their
// value, pred::attr_eq attributes set; any other where() predicate that does not hold refuses the
// draw (predicate_refused), which the caller draws again with the same choices.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/tag.hpp"
#include "sgmatch/testing/generators.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace testing {

namespace detail {

template <class T>
inline constexpr char key_of = 0;  // one address per capture tag

struct predicate_refused : draw_rejected {
    using draw_rejected::draw_rejected;
};

/// A choice point: a pattern node (its address and its type: a node and its first member share
/// an address) and which of its choices (an op node has three).
struct point_key {
    const void* at;
    const void* type;
    int which;
    friend bool operator<(const point_key& a, const point_key& b) {
        return std::tie(a.at, a.type, a.which) < std::tie(b.at, b.type, b.which);
    }
};
template <class P>
point_key key(const P& p, int which = 0) {
    return {&p, &key_of<P>, which};
}

/// The options of every choice point seen so far, and which of them ran in a graph.
struct coverage {
    struct point {
        std::string label;
        std::vector<std::string> names;
        std::vector<bool> seen;
    };
    std::map<point_key, point> points;
    std::vector<std::string> undrawable;
    bool complete() const {
        for (const auto& [k, p] : points)
            for (bool s : p.seen)
                if (!s) return false;
        return true;
    }
};

template <class P>
struct is_scalar_constant : std::false_type {};
template <>
struct is_scalar_constant<pat::guarded<pat::constant, pred::scalar_near>> : std::true_type {};

template <class F>
struct is_attr_eq : std::false_type {};
template <class T>
struct is_attr_eq<pred::attr_eq_t<T>> : std::true_type {};

/// One walk of a pattern that draws a graph matching it.
class synthesizer {
public:
    synthesizer(draw& d, coverage& cov, std::vector<std::size_t>& script, bool replay, bool random)
        : d_(d), cov_(cov), script_(script), replay_(replay), random_(random), choices_(d.pick(1u << 30)) {}

    /// The choices made, as (point, option), for coverage once the graph has run.
    std::vector<std::pair<point_key, std::size_t>> made;
    std::vector<graph::value> escaping;

    template <class P>
    graph::value run(const P& p) {
        const auto v = elem(p, std::nullopt, npos);
        if (!v) throw draw_rejected("sgmatch::testing: the pattern drew no node");
        return *v;
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    std::size_t choose(point_key at, std::vector<std::string> names, const std::string& label) {
        auto& pt = cov_.points[at];
        if (pt.names.empty()) {
            pt.label = label;
            pt.seen.assign(names.size(), false);
            pt.names = std::move(names);
        }
        std::size_t c;
        if (replay_ && pos_ < script_.size()) {
            c = script_[pos_];
            if (c >= pt.seen.size())
                throw draw_rejected("sgmatch::testing: choice " + std::to_string(c) + " at " + label + ", which has " +
                                    std::to_string(pt.seen.size()) + " options");
        } else {
            std::vector<std::size_t> open;
            for (std::size_t i = 0; i < pt.seen.size(); ++i)
                if (!pt.seen[i]) open.push_back(i);
            // From a generator of their own: a graph drawn again from its choices draws the same values.
            auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(choices_); };
            c = !random_ && !open.empty() ? open[pick(open.size())] : pick(pt.seen.size());
            if (pos_ < script_.size()) script_.resize(pos_);
            script_.push_back(c);
        }
        ++pos_;
        made.emplace_back(at, c);
        return c;
    }
    static std::vector<std::string> numbered(std::size_t n, std::size_t from = 0) {
        std::vector<std::string> v;
        for (std::size_t i = 0; i < n; ++i) v.push_back(std::to_string(from + i));
        return v;
    }

    // ----- chain elements: each returns the value the next element reads --------------------

    template <class... Ps>
    std::optional<graph::value> elem(const pat::chain<Ps...>& c, std::optional<graph::value> cur, std::size_t slot) {
        bool first = true;
        c.items.for_each([&](const auto& e) {
            cur = elem(e, cur, first ? slot : npos);
            first = false;
        });
        return cur;
    }
    template <class... Ps>
    std::optional<graph::value> elem(const pat::alt<Ps...>& a, std::optional<graph::value> cur, std::size_t slot) {
        std::vector<std::string> names;
        a.items.for_each([&](const auto& e) { names.push_back(notation(e)); });
        const std::size_t pick = choose(key(a), std::move(names), "alternative in " + notation(a));
        std::size_t i = 0;
        std::optional<graph::value> out;
        a.items.for_each([&](const auto& e) {
            if (i++ == pick) out = elem(e, cur, slot);
        });
        return out;
    }
    template <class P>
    std::optional<graph::value> elem(const pat::opt<P>& o, std::optional<graph::value> cur, std::size_t slot) {
        if (choose(key(o), {"absent", "present"}, notation(o)) == 0) return cur;
        return elem(o.p, cur, slot);
    }
    template <std::size_t Lo, std::size_t Hi, class P>
    std::optional<graph::value> elem(const pat::rep<Lo, Hi, P>& r, std::optional<graph::value> cur, std::size_t slot) {
        const std::size_t n = Lo + choose(key(r), numbered(Hi - Lo + 1, Lo), notation(r) + " count");
        for (std::size_t i = 0; i < n; ++i) cur = elem(r.p, cur, i == 0 ? slot : npos);
        return cur;
    }
    template <class Tag, class P>
    std::optional<graph::value> elem(const pat::cap<Tag, P>& c, std::optional<graph::value> cur, std::size_t slot) {
        const auto v = elem(c.p, cur, slot);
        if (v) caps_[&key_of<Tag>] = *v;
        return v;
    }
    template <class P>
    std::optional<graph::value> elem(const pat::esc<P>& e, std::optional<graph::value> cur, std::size_t slot) {
        const auto v = elem(e.p, cur, slot);
        if (v && choose(key(e), {"used inside only", "also a graph output"}, notation(e)) == 1) escaping.push_back(*v);
        return v;
    }
    template <std::size_t I, class P>
    std::optional<graph::value> elem(const pat::in_port<I, P>& e, std::optional<graph::value> cur, std::size_t) {
        return elem(e.p, cur, I);
    }
    template <std::size_t O, class P>
    std::optional<graph::value> elem(const pat::out_port<O, P>& e, std::optional<graph::value> cur, std::size_t slot) {
        if constexpr (O != 0) throw draw_rejected("sgmatch::testing: output port " + std::to_string(O) + " is not drawn");
        return elem(e.p, cur, slot);
    }
    template <class T, class P>
    std::optional<graph::value> elem(const pat::named<T, P>& e, std::optional<graph::value> cur, std::size_t slot) {
        return elem(e.p, cur, slot);
    }
    template <class P, class F>
    std::optional<graph::value> elem(const pat::guarded<P, F>& e, std::optional<graph::value> cur, std::size_t slot) {
        const auto v = elem(e.p, cur, slot);
        if (v) meet(e.pred, v->node);
        return v;
    }
    std::optional<graph::value> elem(const pat::any&, std::optional<graph::value> cur, std::size_t) {
        // Any op: one drawn at random among the unary ones (not a choice point).
        static constexpr std::string_view unary[] = {"Relu", "Sigmoid", "Tanh", "Abs", "Exp"};
        return add_node(d_, unary[d_.pick(std::size(unary))], cur);
    }
    std::optional<graph::value> elem(const pat::graph_input&, std::optional<graph::value>, std::size_t) {
        return d_.activation(d_.pick_of<std::size_t>({2, 4}));
    }
    std::optional<graph::value> elem(const pat::constant&, std::optional<graph::value>, std::size_t) {
        return d_.constant({4});
    }
    template <class T, class... Os>
    std::optional<graph::value> elem(const pat::op<T, Os...>& o, std::optional<graph::value> cur, std::size_t slot) {
        return make_op(o, T{}, cur, slot);
    }
    std::optional<graph::value> elem(const pat::invalid&, std::optional<graph::value>, std::size_t) {
        throw draw_rejected("sgmatch::testing: an invalid pattern");
    }

    // ----- predicates ---------------------------------------------------------------------

    template <class F>
    void meet(const F& pred, node_id n) {
        if constexpr (is_attr_eq<F>::value) {  // set, then checked like the others
            using V = std::decay_t<decltype(pred.value)>;
            if constexpr (std::is_same_v<V, std::int64_t> || std::is_same_v<V, double>) {
                d_.g.set_attr(n, pred.key, pred.value);
            } else if constexpr (std::is_same_v<V, std::string_view>) {
                d_.g.set_attr(n, pred.key, std::string(pred.value));
            } else {
                d_.g.set_attr(n, pred.key, attribute::ints(pred.value.begin(), pred.value.end()));
            }
            if (d_.g.kind(n) == node_kind::op) generators_infer(n);
        }
        if (!pred(node_view<graph>(d_.g, n))) throw predicate_refused("where(" + sgmatch::detail::describe_pred(pred) + ")");
    }
    void generators_infer(node_id n) { testing::detail::infer(d_, n); }

    // ----- ops and their operands ---------------------------------------------------------

    struct plan {
        operand o;
        std::vector<std::function<void(node_id)>> checks;  // on the operand's producer
        const void* capture = nullptr;
    };

    plan operand_of(const pat::any&) { return {}; }
    plan operand_of(const pat::graph_input&) { return {operand{operand::kind::runtime, 0, {}}, {}, nullptr}; }
    plan operand_of(const pat::constant&) { return {operand{operand::kind::constant, 0, {}}, {}, nullptr}; }
    template <class T>
    plan operand_of(const pat::ref<T>&) {
        const auto it = caps_.find(&key_of<T>);
        if (it == caps_.end()) throw draw_rejected("sgmatch::testing: &" + sgmatch::detail::type_name<T>() + " before its capture");
        return {operand{operand::kind::given, 0, it->second}, {}, nullptr};
    }
    template <class Tag, class P>
    plan operand_of(const pat::cap<Tag, P>& c) {
        plan p = operand_of(c.p);
        p.capture = &key_of<Tag>;
        return p;
    }
    template <class P, class F>
    plan operand_of(const pat::guarded<P, F>& g) {
        if constexpr (is_scalar_constant<pat::guarded<P, F>>::value) {
            return {operand{operand::kind::scalar, g.pred.value, {}}, {}, nullptr};
        } else {
            plan p = operand_of(g.p);
            p.checks.push_back([this, pred = g.pred](node_id n) { meet(pred, n); });
            return p;
        }
    }
    template <class P>
    plan operand_of(const pat::esc<P>& e) { return operand_of(e.p); }
    template <std::size_t O, class P>
    plan operand_of(const pat::out_port<O, P>& e) {
        if constexpr (O != 0) throw draw_rejected("sgmatch::testing: output port " + std::to_string(O) + " is not drawn");
        return operand_of(e.p);
    }
    template <class T, class P>
    plan operand_of(const pat::named<T, P>& e) { return operand_of(e.p); }
    template <class... Ps>
    plan operand_of(const pat::alt<Ps...>& a) {
        std::vector<std::string> names;
        a.items.for_each([&](const auto& e) { names.push_back(notation(e)); });
        const std::size_t pick = choose(key(a), std::move(names), "alternative operand " + notation(a));
        std::size_t i = 0;
        plan out;
        a.items.for_each([&](const auto& e) {
            if (i++ == pick) out = operand_of(e);
        });
        return out;
    }
    template <class T, class... Os>
    plan operand_of(const pat::op<T, Os...>& o) {  // another op's result
        const auto v = make_op(o, T{}, std::nullopt, npos);
        return {operand{operand::kind::given, 0, *v}, {}, nullptr};
    }

    template <class... Tags, class... Os>
    std::optional<graph::value> make_op(const pat::op<pat::tags<Tags...>, Os...>& o, pat::tags<Tags...>,
                                        std::optional<graph::value> cur, std::size_t slot) {
        // The op: one of the tags that has a generator.
        std::vector<std::string_view> names;
        std::vector<bool> commutative;
        auto consider = [&](std::string_view n, bool comm) {
            if (can_draw(n)) {
                names.push_back(n);
                commutative.push_back(comm);
            } else if (std::find(cov_.undrawable.begin(), cov_.undrawable.end(), std::string(n)) == cov_.undrawable.end()) {
                cov_.undrawable.emplace_back(n);
            }
        };
        (consider(op_tag_traits<Tags>::name(), op_tag_traits<Tags>::commutative), ...);
        if (names.empty()) throw draw_rejected("sgmatch::testing: no generator for " + notation(o));
        std::size_t which = 0;
        if (names.size() > 1 || sizeof...(Tags) > 1)
            which = choose(key(o), std::vector<std::string>(names.begin(), names.end()), notation(o) + " op");
        // The operands first (a nested op is drawn before the node that reads it).
        std::vector<plan> plans;
        std::apply([&](const auto&... e) { (plans.push_back(operand_of(e)), ...); }, o.operands);
        const std::size_t n_in = plans.size() + (cur ? 1 : 0);
        // Where the chain enters: pinned, or either input of a two-input op.
        if (cur && slot == npos) slot = n_in == 2 ? choose(key(o, 1), {"chain on input 0", "chain on input 1"},
                                                           notation(o) + " input")
                                                  : 0;
        if (!cur) slot = npos;
        // A commutative op's two operands in both orders.
        if (!cur && plans.size() == 2 && commutative[which] &&
            choose(key(o, 2), {"operands in order", "operands swapped"}, notation(o) + " operands") == 1)
            std::swap(plans[0], plans[1]);
        std::vector<operand> ops;
        for (const auto& p : plans) ops.push_back(p.o);
        const graph::value v = add_node(d_, names[which], cur, cur ? slot : 0, ops);
        // Captures and predicates of the operands, on the inputs they became.
        std::size_t in = 0;
        for (const auto& p : plans) {
            if (cur && in == slot) ++in;
            if (in >= d_.g.input_count(v.node)) break;
            const graph::value x = d_.g.input(v.node, in++);
            if (p.capture) caps_[p.capture] = x;
            for (const auto& c : p.checks) c(x.node);
        }
        return v;
    }

    draw& d_;
    coverage& cov_;
    std::vector<std::size_t>& script_;
    bool replay_;
    bool random_;
    std::mt19937_64 choices_;
    std::size_t pos_ = 0;
    std::map<const void*, graph::value> caps_;
};

}  // namespace detail

/// The graph the synthesis draws for `seed` and `choices` (as a report prints them): the first
/// failure again, to debug.
template <class P>
draw synthesize(const P& pattern, std::uint64_t seed, std::vector<std::size_t> choices) {
    detail::coverage cov;
    draw d(seed);
    detail::synthesizer s(d, cov, choices, /*replay=*/true, /*random=*/false);
    const auto out = s.run(pattern);
    d.g.mark_output(out);
    for (const auto& e : s.escaping)
        if (!(e == out)) d.g.mark_output(e);
    return d;
}

}  // namespace testing
SGMATCH_END_NAMESPACE
