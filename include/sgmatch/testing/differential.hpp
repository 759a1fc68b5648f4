// sgmatch/testing/differential.hpp - a differential test generated from a pattern's type.
//
//   auto r = sgmatch::testing::differential(conv_post_ops, [&](sgmatch::graph& g) {
//       return sgmatch::apply_property(g, my_property);   // or apply_backend(g, b): the rewrite under test
//   });
//   CHECK(r.ok());          // r.summary(): graphs, fused, declined, coverage; r.first_failure: a DOT graph
//
// Graphs are synthesized so that they match the pattern: every alternative, every optional
// present and absent, every repeat count in its bounds, every op tag of a multi-tag op that has
// a generator (generators.hpp), the chain on either input of a binary op and the operands of a
// commutative op in both orders; each choice is drawn until every option of every choice point
// has run in a graph, then `extra_graphs` more at random. pred::scalar_near constants are drawn
// with their value; every other where() predicate is met by drawing the graph again (at most
// `replays` times with the same choices), and the draws it refused are counted. Each graph runs
// unfused on the reference kernels and rewritten on the executor; the outputs must agree within
// `tolerance` (see same_value; a graph computing a NaN or an infinity is run, not compared). A graph in which the pattern finds nothing is a
// failure too: the synthesis and the matcher disagree.
//
// random_graphs(rewrite, n) does the same for graphs of n ops drawn at random from the
// generators' ops, with no pattern: what a backend does to graphs nobody wrote it for.
//
// Needs the onednn and reference components (it runs the executor).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/partition/dot.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/tag.hpp"
#include "sgmatch/testing/generators.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace testing {

struct differential_options {
    std::uint64_t seed = 1;
    std::size_t extra_graphs = 8;    // drawn at random once every option has run
    std::size_t max_draws = 4000;    // draws in all, refused ones included
    std::size_t replays = 64;        // draws of one set of choices before it is given up
    double tolerance = 1e-4;         // |rewritten - reference| <= tolerance * max(1, |reference|) (+ see same_value)
};

struct differential_report {
    std::string pattern;             // in sgmatch's notation
    std::size_t graphs = 0;          // drawn and run
    std::size_t fused = 0;           // graphs the rewrite fused (one fused node or more)
    std::size_t declined = 0;        // graphs whose matches the rewrite all declined (they ran unfused)
    std::size_t unmatched = 0;       // graphs in which the rewrite found no match (counted as failures)
    std::size_t rejected_predicate = 0;  // draws a where() predicate refused
    std::size_t rejected_shape = 0;      // draws a node's shape rule or attribute check refused
    std::size_t given_up = 0;            // sets of choices no draw of which was accepted
    std::size_t options = 0;             // options of the pattern's choice points
    std::size_t covered = 0;             // of them, drawn in a graph that ran
    std::vector<std::string> uncovered;  // "<choice point>: <option>"
    std::vector<std::string> undrawable; // op tags without a generator (never drawn)
    std::map<std::string, std::size_t> declines;  // the rewrite's reasons, counted
    std::size_t failures = 0;
    double max_error = 0;
    std::size_t nan_graphs = 0;  // graphs computing a NaN or an infinity on the reference: run, values not compared
    std::string first_failure;  // what was drawn (seed and choices), what went wrong, the graph in DOT

    bool ok() const { return failures == 0; }
    std::string summary() const {
        std::ostringstream os;
        os << pattern << ": " << graphs << " graphs, " << fused << " fused, " << declined << " declined, " << unmatched
           << " unmatched, " << failures << " failures (max error " << max_error << "; " << nan_graphs << " with a NaN or an infinity, not compared); options covered " << covered << "/"
           << options << "; draws refused: " << rejected_predicate << " by predicates, " << rejected_shape << " by shapes";
        if (given_up) os << "; " << given_up << " choice sets given up";
        for (const auto& u : uncovered) os << "\n  not drawn: " << u;
        for (const auto& u : undrawable) os << "\n  no generator: " << u;
        return os.str();
    }
};

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

template <class F>
std::string pred_name(const F& f) {
    return sgmatch::detail::describe_pred(f);
}

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
        if (!pred(node_view<graph>(d_.g, n))) throw predicate_refused("where(" + pred_name(pred) + ")");
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

// An element may differ by the tolerance, and by what the reference itself moves when its
// inputs move by a few rounding errors (`moved`, `moved2`: nudged, scaled by 16): x / conv(..)
// where the conv is near 0 amplifies the rounding of its sum, in whatever order a kernel adds,
// and so do exp(exp(..)) and a Round near a half.
inline bool same_value(float got, float want, float moved, float moved2, double tol, double& err) {
    const double scale = std::max(1.0, std::fabs(static_cast<double>(want)));
    const double e = std::fabs(static_cast<double>(got) - want) / scale;
    const double shift = std::max(std::fabs(static_cast<double>(moved) - want), std::fabs(static_cast<double>(moved2) - want));
    const double noise = std::isfinite(shift) ? 16.0 * shift / scale : std::numeric_limits<double>::infinity();
    if (!(e <= tol + noise)) {
        err = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(err, e);
        return false;
    }
    err = std::max(err, std::min(e, tol));  // what the sensitivity allowed beyond tol is not an error
    return true;
}

/// d's inputs moved by a few rounding errors: every element by a relative 1e-6 (coherent), or
/// by 4e-6 with alternating signs (what a sum's rounding in another order looks like).
inline std::map<std::string, reference::array> nudged(const draw& d, bool alternate) {
    std::map<std::string, reference::array> m = d.inputs;
    std::size_t i = 0;
    for (auto& [name, a] : m)
        for (auto& x : a) x *= alternate ? 1.0f + ((i++ % 2) ? 4e-6f : -4e-6f) : 1.0f + 1e-6f;
    return m;
}

struct outcome {
    bool ok = true;
    std::string what;
    double error = 0;
    bool nan = false;  // the reference computed a NaN or an infinity: the values were not compared
    std::size_t candidates = 0, accepted = 0, declined = 0;
    std::map<std::string, std::size_t> reasons;
};

inline void add_reports(outcome& o, const property_report& r) {
    o.candidates += r.candidates;
    o.accepted += r.accepted;
    o.declined += r.rejected_check;
    for (const auto& [k, n] : r.check_reasons) o.reasons[k] += n;
}

/// Run d's graph unfused (reference kernels) and rewritten; compare.
template <class Rewrite>
outcome run_both(const draw& d, Rewrite& rewrite, double tol) {
    outcome o;
    try {
        // The reference with every value an output: a graph that computes a NaN or an infinity
        // anywhere (a Log or Sqrt of a negative value, a division by a rounded 0) has no
        // comparable result: NaN passes through min, max and clip as the CPU's instructions pass
        // it on oneDNN and as numpy does on the reference, and the sign of an infinity is the
        // sign of a 0 that rounding decided.
        graph every = d.g;
        for (node_id n : d.g.nodes())
            if (d.g.kind(n) == node_kind::op && !d.g.has_graph_output(n)) every.mark_output(n);
        const exec::executor reference_run(every);
        const auto expect = reference_run(d.inputs);
        const auto moved = reference_run(nudged(d, false));
        const auto moved2 = reference_run(nudged(d, true));
        for (const auto& a : expect)
            for (float x : a) o.nan = o.nan || !std::isfinite(x);
        graph f = d.g;
        using R = std::decay_t<decltype(rewrite(f))>;
        if constexpr (std::is_same_v<R, property_report>) {
            add_reports(o, rewrite(f));
        } else {
            for (const auto& r : rewrite(f)) add_reports(o, r);
        }
        const auto got = exec::executor(f)(d.inputs);
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (got[i].shape() != expect[i].shape()) {
                o.ok = false;
                o.what = "output " + std::to_string(i) + " has another shape";
                return o;
            }
            for (std::size_t k = 0; k < expect[i].size() && !o.nan; ++k)
                if (!same_value(got[i].data()[k], expect[i].data()[k], moved[i].data()[k], moved2[i].data()[k], tol, o.error)) {
                    o.ok = false;
                    std::ostringstream os;
                    os << "output " << i << " element " << k << ": " << got[i].data()[k] << " rewritten, " << expect[i].data()[k]
                       << " reference";
                    o.what = os.str();
                    return o;
                }
        }
    } catch (const std::exception& e) {
        o.ok = false;
        o.what = std::string("raised: ") + e.what();
    }
    return o;
}

inline std::string attr_text(const attribute& a) {
    std::ostringstream os;
    switch (a.kind()) {
        case attribute::type::integer: os << *a.as_int(); break;
        case attribute::type::real: os << *a.as_real(); break;
        case attribute::type::string: os << '"' << *a.as_string() << '"'; break;
        case attribute::type::integers: {
            os << '[';
            for (std::size_t i = 0; i < a.as_ints()->size(); ++i) os << (i ? "," : "") << (*a.as_ints())[i];
            os << ']';
            break;
        }
        case attribute::type::reals: {
            os << '[';
            for (std::size_t i = 0; i < a.as_reals()->size(); ++i) os << (i ? "," : "") << (*a.as_reals())[i];
            os << ']';
            break;
        }
    }
    return os.str();
}

}  // namespace detail

/// One line per node: `n3 = Conv(x0, c1) {group=1, ...} -> [1, 8, 5, 5]`; constants of up to
/// 8 values with their values (what the DOT picture leaves out).
inline std::string listing(const graph& g) {
    std::ostringstream os;
    for (node_id n : g.nodes()) {
        const auto t = g.value_type(n, 0);
        const std::string shape = t ? ops::to_string(t->dims) : "?";
        if (g.kind(n) == node_kind::input) {
            os << g.name(n) << ": input " << shape << "\n";
            continue;
        }
        if (g.kind(n) == node_kind::constant) {
            os << g.name(n) << ": constant " << shape;
            const auto c = g.constant(n);
            const auto v = c ? c->to_reals() : std::nullopt;
            if (v && v->size() <= 8) {
                os << " =";
                for (double x : *v) os << ' ' << x;
            }
            os << "\n";
            continue;
        }
        os << g.name(n) << " = " << g.op_name(n) << "(";
        for (std::size_t i = 0; i < g.input_count(n); ++i) {
            const auto v = g.input(n, i);
            os << (i ? ", " : "") << g.name(v.node) << (v.port ? ":" + std::to_string(v.port) : "");
        }
        os << ")";
        std::string attrs;
        g.for_each_attr(n, [&](std::string_view k, const attribute& a) {
            attrs += (attrs.empty() ? "" : ", ") + std::string(k) + "=" + detail::attr_text(a);
        });
        if (!attrs.empty()) os << " {" << attrs << "}";
        os << " -> " << shape << (g.has_graph_output(n) ? " (output)" : "") << "\n";
    }
    return os.str();
}

namespace detail {

inline std::string describe_failure(const draw& d, std::uint64_t seed, const std::string& choices, const std::string& what) {
    std::ostringstream os;
    os << "seed " << seed << (choices.empty() ? "" : ", choices " + choices) << ": " << what << "\n" << listing(d.g);
    write_dot(os, d.g, {}, "failing graph");
    return os.str();
}

inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline void record(differential_report& r, const outcome& o, const draw& d, std::uint64_t seed, const std::string& choices) {
    ++r.graphs;
    r.max_error = std::max(r.max_error, o.error);
    r.nan_graphs += o.nan ? 1 : 0;
    if (o.accepted > 0) ++r.fused;
    else if (o.candidates > 0) ++r.declined;
    for (const auto& [k, n] : o.reasons) r.declines[k] += n;
    if (!o.ok) {
        ++r.failures;
        if (r.first_failure.empty()) r.first_failure = describe_failure(d, seed, choices, o.what);
    }
}

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

/// The differential test of `rewrite` (graph& -> property_report or a vector of them) on graphs
/// synthesized from `pattern`. See the top of this file.
template <class P, class Rewrite>
differential_report differential(const P& pattern, Rewrite rewrite, const differential_options& opt = {}) {
    static_assert(is_pattern_v<P>, "sgmatch::testing::differential(pattern, rewrite): pattern must be a pattern");
    differential_report r;
    r.pattern = notation(pattern);
    detail::coverage cov;
    std::size_t draws = 0, extra = 0;
    while (draws < opt.max_draws) {
        // Every option of every choice point first (a pattern without any: one graph), then
        // extra graphs with the choices at random.
        const bool random = r.graphs > 0 && cov.complete();
        if (random && extra >= opt.extra_graphs) break;
        std::vector<std::size_t> script;
        bool ran = false;
        for (std::size_t rep = 0; rep < opt.replays && draws < opt.max_draws && !ran; ++rep) {
            const std::uint64_t seed = detail::mix(opt.seed, draws++);
            draw d(seed);
            detail::synthesizer s(d, cov, script, /*replay=*/rep > 0, random);
            try {
                const auto out = s.run(pattern);
                d.g.mark_output(out);
                for (const auto& e : s.escaping)
                    if (!(e == out)) d.g.mark_output(e);
            } catch (const detail::predicate_refused&) {
                ++r.rejected_predicate;
                continue;
            } catch (const draw_rejected&) {
                ++r.rejected_shape;
                continue;
            }
            std::string choices;
            for (auto c : script) choices += (choices.empty() ? "" : " ") + std::to_string(c);
            const detail::outcome o = detail::run_both(d, rewrite, opt.tolerance);
            detail::outcome counted = o;
            if (o.candidates == 0) {
                counted.ok = false;
                counted.what = "the rewrite found no match in a graph drawn to match";
                ++r.unmatched;
            }
            detail::record(r, counted, d, seed, "[" + choices + "]");
            for (const auto& [at, c] : s.made) cov.points[at].seen[c] = true;
            if (random) ++extra;
            ran = true;
        }
        if (!ran) ++r.given_up;
    }
    for (const auto& [at, p] : cov.points) {
        r.options += p.seen.size();
        for (std::size_t i = 0; i < p.seen.size(); ++i)
            if (p.seen[i]) ++r.covered;
            else r.uncovered.push_back(p.label + ": " + p.names[i]);
    }
    r.undrawable = cov.undrawable;
    return r;
}

namespace detail {
inline bool nonnegative(const graph& g, graph::value v) {
    if (g.kind(v.node) != node_kind::op) return false;
    for (std::string_view op : {"Abs", "Relu", "Sigmoid", "Exp", "Softplus", "HardSigmoid", "Sqrt"})
        if (g.op_name(v.node) == op) return true;
    return false;
}
}  // namespace detail

/// A graph of `ops` nodes drawn at random from the generators' ops for `seed`: chains with
/// branches and joins; every value nothing reads is a graph output. `refused` counts the nodes
/// drawn and refused (a shape rule, an attribute check).
inline draw random_graph(std::uint64_t seed, std::size_t ops, std::size_t* refused = nullptr) {
    const auto& table = generators();
    draw d(seed);
    std::vector<graph::value> pool{d.activation(d.chance(0.7) ? 4 : d.pick_of<std::size_t>({2, 3}))};
    std::vector<bool> used(1, false);
    for (std::size_t k = 0, tries = 0; k < ops && tries < 8 * ops; ++tries) {
        const std::string_view op = table[d.pick(table.size())].op;
        // Mostly the newest value (chains), sometimes an older one (branches).
        std::size_t from = d.chance(0.7) ? pool.size() - 1 : d.pick(pool.size());
        // A Round's result is read by nothing: it would hide from the sensitivity runs (an
        // input nudged by 1e-6 rounds the same) the rounding differences it amplifies later.
        while (from > 0 && d.g.kind(pool[from].node) == node_kind::op && d.g.op_name(pool[from].node) == "Round") --from;
        std::vector<operand> operands;
        // Log and Sqrt of values that cannot be negative (a graph that computes a NaN is not
        // compared, see run_both).
        if ((op == "Log" || op == "Sqrt") && !detail::nonnegative(d.g, pool[from])) continue;
        // Pow and Div take a drawn exponent or divisor (bounded away from 0), never a computed
        // one: x / (a - b) with a near b only measures how rounding differs.
        const bool divides = op == "Pow" || op == "Div";
        if (!divides && d.chance(0.3)) {  // a join: another value of the same shape, when there is one
            for (std::size_t j = 0; j < pool.size(); ++j)
                if (j != from && d.shape(pool[j]) == d.shape(pool[from])) {
                    operands.push_back(operand{operand::kind::given, 0, pool[j]});
                    break;
                }
        }
        const graph before = d.g;  // a refused node leaves nothing behind
        const auto inputs_before = d.inputs;
        try {
            const graph::value v = add_node(d, op, pool[from], divides ? 0 : d.pick(2), operands);
            for (std::size_t i = 0; i < d.g.input_count(v.node); ++i)  // what the node reads (a unary op no operand)
                for (std::size_t j = 0; j < pool.size(); ++j)
                    if (pool[j] == d.g.input(v.node, i)) used[j] = true;
            pool.push_back(v);
            used.push_back(false);
            ++k;
        } catch (const draw_rejected&) {
            d.g = before;
            d.inputs = inputs_before;
            if (refused) ++*refused;
        }
    }
    for (std::size_t j = 1; j < pool.size(); ++j)
        if (!used[j]) d.g.mark_output(pool[j]);
    return d;
}

/// n_graphs random graphs (random_graph) of `ops` nodes each, run unfused and rewritten. Their
/// seeds come from opt.seed; `unmatched` stays 0: nothing promises a match.
template <class Rewrite>
differential_report random_graphs(Rewrite rewrite, std::size_t n_graphs, std::size_t ops, const differential_options& opt = {}) {
    differential_report r;
    r.pattern = "random graphs of " + std::to_string(ops) + " ops";
    for (std::size_t i = 0; r.graphs < n_graphs && i < opt.max_draws + n_graphs; ++i) {
        const std::uint64_t seed = detail::mix(opt.seed, i);
        const draw d = random_graph(seed, ops, &r.rejected_shape);
        if (d.g.graph_output_count() == 0) continue;
        detail::record(r, detail::run_both(d, rewrite, opt.tolerance), d, seed, "");
    }
    return r;
}

}  // namespace testing
SGMATCH_END_NAMESPACE
