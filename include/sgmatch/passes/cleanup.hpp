// sgmatch/passes/cleanup.hpp - the clean-up an exported model needs before it fuses, written
// with sgmatch's own patterns over any graph that can redirect, erase and add constants.
//
//   sgmatch::passes::cleanup_report r = sgmatch::passes::cleanup(g);   // options: cleanup_options
//
// - pass-through ops removed: Identity, Dropout in inference (its mask unread), and a Pad of
//   zero pads (PyTorch exports one before an AveragePool that counts the padding); their users
//   read the input instead. A bias routed through an Identity is a constant again.
// - shapes made constants: Shape and Size of a value whose dims are all known.
// - constants folded: an op whose inputs are all constants runs once, on its typed kernel
//   (exec/kernels/typed.hpp), and becomes a constant: a Shape -> Gather -> Unsqueeze -> Concat
//   chain becomes a Reshape's constant shape, a Transpose or Cast of a weight becomes the weight
//   the lowering reads. Results over `max_folded_bytes` stay ops.
// - nodes nothing reads any more are erased.
// Each runs to a fixed point (a fold makes the next one possible). The graph needs the
// optional writes redirect, erase and add_constant (graph/adapter.hpp; the built-in graph has
// them). Each write keeps the graph whole: a fold that fails (its kernel refuses the inputs)
// leaves the node as it was and is noted in the report.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace passes {

struct cleanup_options {
    bool pass_through = true;    // Identity and inference Dropout removed
    bool shapes = true;          // Shape / Size of known dims made constants
    bool fold = true;            // ops of constant inputs made constants
    bool dead = true;            // nodes nothing reads erased
    std::size_t max_folded_bytes = std::size_t{64} << 20;
};

struct cleanup_report {
    std::size_t pass_through = 0;  // Identity / Dropout nodes removed
    std::size_t shapes = 0;        // Shape / Size nodes made constants
    std::size_t folded = 0;        // other ops made constants
    std::size_t erased = 0;        // nodes erased because nothing read them
    std::vector<std::string> notes;  // folds not made, with the reason
};

/// The patterns the passes match.
namespace patterns {
/// A node whose every input is a constant (with data).
struct all_inputs_constant {
    template <class View>
    bool operator()(const View& v) const {
        if (v.input_count() == 0) return false;
        for (std::size_t i = 0; i < v.input_count(); ++i)
            if (!v.input(i).is_constant()) return false;
        return true;
    }
};
/// A Pad that pads nothing: its pads (attribute, or constant input 1) all zero.
struct pads_nothing {
    template <class View>
    bool operator()(const View& v) const {
        std::optional<std::vector<std::int64_t>> pads = v.attr_ints("pads");
        if (!pads && v.input_count() > 1)
            if (const auto c = v.input(1).constant(); c && c->data) pads = c->to_ints();
        if (!pads) return false;
        for (auto p : *pads)
            if (p != 0) return false;
        return true;
    }
};
inline constexpr auto pass_through = op<ops::Identity>() | op<ops::Dropout>() | op<ops::Pad>().where(pads_nothing{});
inline constexpr auto shape_of_known = (op<ops::Shape>() | op<ops::Size>());
inline constexpr auto of_constants = any().where(all_inputs_constant{});
}  // namespace patterns

namespace detail {

template <class G>
class cleaner {
public:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    using V = value_ref<N>;

    cleaner(G& g, const cleanup_options& o, cleanup_report& r) : g_(g), o_(o), r_(r) {}

    void run() {
        for (bool changed = true; changed;) {
            changed = false;
            if (o_.pass_through) changed = remove_pass_through() || changed;
            if (o_.shapes) changed = shapes() || changed;
            if (o_.fold) changed = fold() || changed;
        }
        if (o_.dead) erase_dead();
    }

private:
    template <class P>
    std::vector<N> matches(const P& p) const {
        std::vector<N> out;
        for (const auto& m : find_all(op_index<G>(g_), p)) out.push_back(m[0]);
        return out;
    }

    bool is_output(N n) const {
        for (std::uint32_t p = 0; p < traits::output_count(g_, n); ++p)
            if (adapter<G>::is_graph_output(g_, n, p)) return true;
        return false;
    }
    bool port_read(N n, std::uint32_t port) const {
        if (adapter<G>::is_graph_output(g_, n, port)) return true;
        for (std::size_t i = 0; i < traits::user_count(g_, n); ++i)
            if (traits::user(g_, n, i).port == port) return true;
        return false;
    }

    bool remove_pass_through() {
        bool changed = false;
        for (N n : matches(patterns::pass_through)) {
            if (traits::input_count(g_, n) == 0) continue;
            if (traits::op_name(g_, n) == "Dropout") {  // inference only, its mask unread
                bool ok = traits::output_count(g_, n) < 2 || !port_read(n, 1);
                if (ok && traits::input_count(g_, n) > 2) {
                    const auto t = adapter<G>::constant(g_, traits::input(g_, n, 2).node);
                    const auto v = t && t->data ? t->scalar() : std::nullopt;
                    ok = v && *v == 0;
                }
                if (!ok) continue;
            }
            const V in = traits::input(g_, n, 0);
            // A graph input passed straight to a graph output keeps its Identity: the output
            // would otherwise be the input itself.
            if (is_output(n) && traits::kind(g_, in.node) == node_kind::input) continue;
            traits::redirect(g_, V{n, 0}, in);
            traits::erase(g_, n);
            ++r_.pass_through;
            changed = true;
        }
        return changed;
    }

    bool shapes() {
        bool changed = false;
        for (N n : matches(patterns::shape_of_known)) {
            if (traits::input_count(g_, n) != 1) continue;
            const V in = traits::input(g_, n, 0);
            const auto t = adapter<G>::value_type(g_, in.node, in.port);
            const auto c = adapter<G>::constant(g_, in.node);
            if (!t || (t->dims.empty() && !(c && c->rank == 0))) continue;  // an unknown rank
            bool known = true;
            for (auto d : t->dims) known = known && d >= 0;
            if (!known) continue;
            // Its input as a value of those dims (no data: Shape and Size read none).
            const std::int64_t none = 0;
            const exec::value shaped = exec::value::view(&none, dtype::u8, t->dims, exec::shape(t->dims.size(), 0));
            if (evaluate(n, {shaped})) {
                ++r_.shapes;
                changed = true;
            }
        }
        return changed;
    }

    bool fold() {
        bool changed = false;
        for (N n : matches(patterns::of_constants)) {
            const ops::op_schema* s = ops::find_schema(traits::op_name(g_, n));
            if (s == nullptr || exec::find_typed_kernel(s) == nullptr) continue;
            std::vector<exec::value> in;
            bool data = true;
            for (std::size_t i = 0; i < traits::input_count(g_, n) && data; ++i) {
                const auto c = adapter<G>::constant(g_, traits::input(g_, n, i).node);
                data = c && c->data != nullptr;
                if (data) in.push_back(exec::value::view(c->data, c->type, exec::shape(c->dims, c->dims + c->rank)));
            }
            if (data && evaluate(n, in)) {
                ++r_.folded;
                changed = true;
            }
        }
        return changed;
    }

    // Runs n's typed kernel on `in`; on success each output becomes a constant and n is erased.
    bool evaluate(N n, const std::vector<exec::value>& in) {
        const ops::op_schema* s = ops::find_schema(traits::op_name(g_, n));
        const exec::typed_binding* k = s ? exec::find_typed_kernel(s) : nullptr;
        if (k == nullptr) return false;
        std::vector<exec::value> out;
        try {
            const ops::node_of<G> src(g_, n);
            const ops::op_attrs a(*s, src);
            // The outputs' size from the op's shape rule first: nothing is allocated for a result
            // over the limit (an Expand or ConstantOfShape to a huge shape).
            if (exec::typed::estimated_bytes(a, in) > static_cast<long double>(o_.max_folded_bytes)) return false;
            out = k->make(a, src)(in);
        } catch (const std::exception& e) {  // an op_error, exec_error or value_error: the node stays
            r_.notes.push_back("'" + std::string(traits::name(g_, n)) + "' (" + std::string(traits::op_name(g_, n)) +
                               ") not folded: " + e.what());
            return false;
        }
        std::size_t bytes = 0;
        for (const auto& v : out) bytes += v.bytes();
        if (out.size() < traits::output_count(g_, n) || bytes > o_.max_folded_bytes) return false;
        for (std::uint32_t p = 0; p < traits::output_count(g_, n); ++p) {
            if (!port_read(n, p)) continue;
            const exec::value v = out[p].dense_value();
            std::vector<unsigned char> b(v.bytes());
            if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
            std::string name(traits::name(g_, n));
            if (p > 0) name += ":" + std::to_string(p);
            const N c = traits::add_constant(g_, name, v.dims(), v.type(), std::move(b));
            traits::redirect(g_, V{n, p}, V{c, 0});
        }
        traits::erase(g_, n);
        return true;
    }

    // Nodes nothing reads, from the last to the first (a node freed by its user's erasure goes
    // too). Graph inputs stay: they are the graph's signature.
    void erase_dead() {
        const auto& order = traits::nodes(g_);
        std::vector<N> nodes(order.begin(), order.end());
        for (std::size_t i = nodes.size(); i-- > 0;) {
            const N n = nodes[i];
            if (traits::kind(g_, n) == node_kind::input || traits::user_count(g_, n) != 0 || is_output(n)) continue;
            traits::erase(g_, n);
            ++r_.erased;
        }
    }

    G& g_;
    const cleanup_options& o_;
    cleanup_report& r_;
};

}  // namespace detail

/// Runs the clean-up passes on g (see the header comment); returns what they did.
template <class G>
cleanup_report cleanup(G& g, const cleanup_options& o = {}) {
    static_assert(is_rewritable_graph_v<G>,
                  "sgmatch::passes::cleanup(g): graph_traits<G> must define redirect(g, from, to), erase(g, n) and "
                  "add_constant(g, name, dims, dtype, bytes) -- see sgmatch/graph/adapter.hpp");
    cleanup_report r;
    if constexpr (is_rewritable_graph_v<G>) detail::cleaner<G>(g, o, r).run();
    return r;
}

}  // namespace passes
SGMATCH_END_NAMESPACE
