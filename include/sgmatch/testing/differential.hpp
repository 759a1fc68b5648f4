// sgmatch/testing/differential.hpp - a differential test generated from a pattern's type.
//
//   auto r = sgmatch::testing::differential(conv_post_ops, [&](sgmatch::graph& g) {
//       return sgmatch::apply_property(g, my_property);   // or apply_backend(g, b): the rewrite under test
//   });
//   CHECK(r.ok());          // r.summary(): graphs, fused, declined, coverage; r.first_failure: a DOT graph
//
// Graphs are synthesized so that they match the pattern (synthesize.hpp): every alternative,
// every optional present and absent, every repeat count in its bounds, every op tag of a
// multi-tag op that has a generator (generators.hpp), the chain on either input of a binary op
// and the operands of a commutative op in both orders, until every option of every choice point
// has run in a graph, then `extra_graphs` more at random. A where() predicate that refuses a draw
// has the graph drawn again with the same choices (at most `replays` times; refusals counted).
// Each graph runs unfused on the reference kernels and rewritten on the executor; the outputs
// must agree within `tolerance` (see same_value; a graph computing a NaN or an infinity is run,
// not compared). A graph in which the rewrite finds no match is a failure too: the synthesis and
// the matcher disagree. So is a run in which the rewrite fused none of the graphs (every match
// declined): a test of a fusion that never fuses tests nothing, unless `expect_declines` says
// that declining is what is tested.
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
#include "sgmatch/testing/synthesize.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace testing {

struct differential_options {
    std::uint64_t seed = 1;
    std::size_t extra_graphs = 8;    // drawn at random once every option has run
    std::size_t max_draws = 4000;    // draws in all, refused ones included
    std::size_t replays = 64;        // draws of one set of choices before it is given up
    double tolerance = 1e-4;         // |rewritten - reference| <= tolerance * max(1, |reference|) (+ see same_value)
    bool expect_declines = false;    // a run that fuses no graph passes (else it is a failure)
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
    std::size_t unfused_post_ops = 0;  // graphs whose fused nodes ran their post-ops after the main primitive: oneDNN
                                       // rejected the fused primitive or would have run it on a reference
                                       // implementation (run_stats::unfused_post_ops): the fusion saves nothing there
    std::string first_failure;  // what was drawn (seed and choices), what went wrong, the graph in DOT

    bool fused_none = false;    // no graph fused, and the options did not expect that (a failure)

    bool ok() const { return failures == 0 && !fused_none; }
    std::string summary() const {
        std::ostringstream os;
        os << pattern << ": " << graphs << " graphs, " << fused << " fused, " << declined << " declined, " << unmatched
           << " unmatched, " << failures << " failures (max error " << max_error << "; " << nan_graphs << " with a NaN or an infinity, not compared); options covered " << covered << "/"
           << options << "; draws refused: " << rejected_predicate << " by predicates, " << rejected_shape << " by shapes";
        if (given_up) os << "; " << given_up << " choice sets given up";
        if (unfused_post_ops) os << "; " << unfused_post_ops << " ran their post-ops unfused (oneDNN rejected the fusion or would run it on a reference implementation)";
        if (fused_none) os << "; FAILED: no graph fused (declines were not expected)";
        for (const auto& u : uncovered) os << "\n  not drawn: " << u;
        for (const auto& u : undrawable) os << "\n  no generator: " << u;
        return os.str();
    }
};

namespace detail {

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
    bool unfused = false;  // a fused node ran its post-ops after the main primitive
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
        exec::run_stats st;
        const auto got = exec::executor(f)(d.inputs, &st);
        o.unfused = st.unfused_post_ops != 0;
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
        case attribute::type::graph: os << "<graph>"; break;
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
    r.unfused_post_ops += o.unfused ? 1 : 0;
    if (o.accepted > 0) ++r.fused;
    else if (o.candidates > 0) ++r.declined;
    for (const auto& [k, n] : o.reasons) r.declines[k] += n;
    if (!o.ok) {
        ++r.failures;
        if (r.first_failure.empty()) r.first_failure = describe_failure(d, seed, choices, o.what);
    }
}

}  // namespace detail

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
    if (r.graphs > 0 && r.fused == 0 && !opt.expect_declines) {
        r.fused_none = true;
        std::string why = "the rewrite fused none of the " + std::to_string(r.graphs) + " graphs";
        for (const auto& [reason, n] : r.declines) why += "\n  declined " + std::to_string(n) + "x: " + reason;
        why += "\n(set differential_options::expect_declines if declining is what this tests)";
        if (r.first_failure.empty()) r.first_failure = why;  // else the graph that failed says more
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

/// The differential test of a property definition that serves any graph type (a definition d
/// with d.pattern and d.for_graph<G>(): onednn::fusion): its property for the built-in graph
/// applied to graphs synthesized from its pattern.
template <class Def, class = decltype(std::declval<const Def&>().pattern),
          class = decltype(std::declval<const Def&>().template for_graph<graph>())>
differential_report differential(const Def& d, const differential_options& opt = {}) {
    const auto prop = d.template for_graph<graph>();
    return differential(d.pattern, [&](graph& g) { return apply_property(g, prop); }, opt);
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
