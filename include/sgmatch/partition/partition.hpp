// sgmatch/partition/partition.hpp - apply properties to a graph: match, check, rewrite.
//
//   sgmatch::register_property<my_graph>("my_backend", sgmatch::make_property<my_graph>(...));
//   ...
//   sgmatch::apply_backend(g, "my_backend");   // or, in the executor: sgmatch::apply_backend_from_env(g)
//
// Rules (docs/design.md, "Partitioning"): properties run in registration order, each over the
// whole graph. Within one property, candidates are tried in topological order of their anchor;
// at an anchor the longest legal match wins (the matcher tries alternatives longest first and
// the legality checks can decline each), and its nodes are then not available to later
// candidates. All matches of a property are found on the graph
// as it stands before the property's first rewrite; each rewrite is then one atomic write: its
// node factory runs first, and the adapter's replace either completes or changes nothing. If a
// factory or a replace throws, the exception propagates with every earlier rewrite in place and
// the graph valid.
#pragma once

#include <algorithm>
#include <any>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/index_marks.hpp"
#include "sgmatch/detail/unique_in_order.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/replacement.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/partition/convexity.hpp"
#include "sgmatch/partition/property.hpp"

SGMATCH_BEGIN_NAMESPACE

/// What one property did in one pass.
struct property_report {
    std::string property;
    bool skipped = false;            // disabled, or inference_only on a graph that needs gradients
    std::string skip_reason;
    std::size_t candidates = 0;      // complete matches the checks below saw (a declined one is
                                     // followed by the next-longest at the same anchor)
    std::size_t accepted = 0;        // rewritten into a fused node
    std::size_t rejected_size = 0;   // outside [min_size, max_size]
    std::size_t rejected_cycle = 0;  // a path would leave the subgraph and re-enter it
    std::size_t rejected_check = 0;  // declined by the property's own check (property::check)
    std::map<std::string, std::size_t> check_reasons;  // how often each reason was given
};

/// Raised for an unknown backend name; the message lists the registered ones.
struct backend_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

namespace detail {

// Whether value (n, port) is used by a node for which inside() is false, or is a graph output.
template <class G, class N, class Inside>
bool used_outside(const G& g, const Inside& inside, N n, std::uint32_t port) {
    using traits = graph_traits<G>;
    if (adapter<G>::is_graph_output(g, n, port)) return true;
    const std::size_t uc = traits::user_count(g, n);
    for (std::size_t i = 0; i < uc; ++i) {
        const auto u = traits::user(g, n, i);
        if (u.port == port && !inside(u.user)) return true;
    }
    return false;
}

// The boundary of a node set, read from the graph as it is now, into s (its vectors are
// cleared and refilled: a pass reuses one subgraph, so a rewrite allocates nothing here once
// the buffers have grown). O(E) in the set's edges with `marks` (reused across calls: a pass
// classifies the edges of thousands of capability regions, some of thousands of nodes),
// O(E log E) without.
template <class G>
void boundary(subgraph<G>& s, const G& g, const typename graph_traits<G>::node_type* nodes, std::size_t count,
              index_marks* marks = nullptr) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    s.graph = &g;
    s.nodes.assign(nodes, nodes + count);
    s.inputs.clear();
    s.outputs.clear();
    // Membership: a scan for small sets, behind a 64-bit filter of the members' indices mod 64
    // (a neighbour of a match, mostly a few indices away, is ruled out by one test); marks, or
    // a binary search over sorted indices, for large ones.
    constexpr std::size_t small = 16;
    std::vector<std::size_t> members;
    index_filter filter;
    if (count <= small)
        for (std::size_t i = 0; i < count; ++i) filter.add(traits::index(g, nodes[i]));
    if (count > small && marks != nullptr) {
        marks->start(traits::index_bound(g));
        for (std::size_t i = 0; i < count; ++i) marks->add(traits::index(g, nodes[i]));
    } else if (count > small) {
        members.resize(count);
        for (std::size_t i = 0; i < count; ++i) members[i] = traits::index(g, nodes[i]);
        std::sort(members.begin(), members.end());
    }
    auto inside = [&](const N& n) {
        if (count <= small) {
            if (!filter.may_have(traits::index(g, n))) return false;
            for (std::size_t j = 0; j < count; ++j)
                if (nodes[j] == n) return true;
            return false;
        }
        if (marks != nullptr) return marks->has(traits::index(g, n));
        return std::binary_search(members.begin(), members.end(), traits::index(g, n));
    };
    // Inputs: values read from outside, each once, in order of first use (room for all first:
    // one allocation).
    std::size_t reads = 0;
    for (std::size_t i = 0; i < count; ++i) reads += traits::input_count(g, nodes[i]);
    s.inputs.reserve(reads);
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t ic = traits::input_count(g, nodes[i]);
        for (std::size_t k = 0; k < ic; ++k) {
            const auto v = traits::input(g, nodes[i], k);
            if (!inside(v.node)) s.inputs.push_back(v);
        }
    }
    if (s.inputs.size() <= 2 * small) {  // a scan for repeats, behind the same kind of filter
        std::size_t kept = 0;
        index_filter kept_filter;
        for (std::size_t i = 0; i < s.inputs.size(); ++i) {
            const std::size_t at = traits::index(g, s.inputs[i].node);
            bool seen = false;
            if (kept_filter.may_have(at))
                for (std::size_t j = 0; j < kept && !seen; ++j) seen = s.inputs[j] == s.inputs[i];
            kept_filter.add(at);
            if (!seen) s.inputs[kept++] = s.inputs[i];
        }
        s.inputs.resize(kept);
    } else {  // by a sort (stable: the first use stays first)
        unique_in_order(s.inputs, [&](const value_ref<N>& v) { return std::make_pair(traits::index(g, v.node), v.port); });
    }
    // Outputs: first those of the subgraph's sinks (nodes no other member reads: the match's
    // last node), then escaping intermediates; each in node order, ports in order.
    if (count <= small) {
        // One pass over each member's users classifies them: read inside, or the ports (below
        // 64, a mask) read outside; graph outputs are asked only of ports not already known.
        bool read_in[small];
        std::uint64_t read_out[small];
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t uc = traits::user_count(g, nodes[i]);
            bool in = false;
            std::uint64_t out = 0;
            for (std::size_t k = 0; k < uc; ++k) {
                const auto u = traits::user(g, nodes[i], k);
                if (inside(u.user)) in = true;
                else if (u.port < 64) out |= std::uint64_t(1) << u.port;
            }
            read_in[i] = in;
            read_out[i] = out;
        }
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t i = 0; i < count; ++i) {
                if (read_in[i] != (pass == 1)) continue;
                const auto outs = static_cast<std::uint32_t>(traits::output_count(g, nodes[i]));
                const bool maybe_graph_output =
                    !has_has_graph_output<traits, G>::value || adapter<G>::has_graph_output(g, nodes[i]);
                for (std::uint32_t p = 0; p < outs; ++p) {
                    const bool used = p < 64 ? ((read_out[i] >> p) & 1) != 0 ||
                                                   (maybe_graph_output && adapter<G>::is_graph_output(g, nodes[i], p))
                                             : used_outside(g, inside, nodes[i], p);
                    if (used) s.outputs.push_back(value_ref<N>{nodes[i], p});
                }
            }
        return;
    }
    auto read_inside = [&](const N& n) {
        const std::size_t uc = traits::user_count(g, n);
        for (std::size_t k = 0; k < uc; ++k)
            if (inside(traits::user(g, n, k).user)) return true;
        return false;
    };
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < count; ++i) {
            if (read_inside(nodes[i]) != (pass == 1)) continue;
            const auto outs = static_cast<std::uint32_t>(traits::output_count(g, nodes[i]));
            for (std::uint32_t p = 0; p < outs; ++p)
                if (used_outside(g, inside, nodes[i], p)) s.outputs.push_back(value_ref<N>{nodes[i], p});
        }
}

}  // namespace detail

namespace detail {
template <class G>
property_report apply_writable(G& g, const property<G>& prop);
}  // namespace detail

/// Apply one property to g (see the rules at the top of this header). Returns what it did.
template <class G>
property_report apply_property(G& g, const property<G>& prop) {
    static_assert(is_writable_graph_v<G>,
                  "sgmatch::apply_property(g, prop): graph_traits<G> must define the write side, "
                  "static replace(G&, const sgmatch::replacement<node_type>&)");
    if constexpr (!is_writable_graph_v<G>) {
        (void)g;
        (void)prop;
        return property_report{};
    } else {
        return detail::apply_writable(g, prop);
    }
}

namespace detail {

template <class G>
property_report apply_writable(G& g, const property<G>& prop) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    property_report rep;
    rep.property = prop.name();
    if (prop.disabled()) {
        rep.skipped = true;
        rep.skip_reason = "disabled";
        return rep;
    }
    if (prop.is_inference_only() && traits::needs_gradients(g)) {
        rep.skipped = true;
        rep.skip_reason = "inference_only, and the graph needs gradients";
        return rep;
    }
    const G& cg = g;
    const op_index<G> index(cg);  // checks the graph: a malformed one raises graph_error here
    taken_mask taken;
    std::optional<detail::quotient_checker<G>> legal;  // built on first use
    auto accept = [&](const N* nodes, std::size_t count) {
        ++rep.candidates;
        if (count < prop.min_nodes() || count > prop.max_nodes()) {
            ++rep.rejected_size;
            return false;
        }
        if (prop.checker()) {
            std::string why = prop.checker()(cg, nodes, count);
            if (!why.empty()) {
                ++rep.rejected_check;
                ++rep.check_reasons[std::move(why)];
                return false;
            }
        }
        // Convexity in the graph with the earlier matches of this pass contracted: free for
        // matches under the closure rule, a bounded search for escaping ones (convexity.hpp);
        // nothing to do for sets convex together by construction (capability regions).
        if (!prop.is_convex_by_construction()) {
            if (!legal) legal.emplace(index);
            if (!legal->accept(nodes, count)) {
                ++rep.rejected_cycle;
                return false;
            }
        }
        return true;
    };
    std::size_t id = 0;
    const std::string op = prop.fused_op_name();
    detail::index_marks marks;
    // One subgraph and one replacement serve every rewrite: their buffers are reused (the
    // vectors pass between them by swap), so a rewrite allocates only what the graph keeps.
    subgraph<G> s;
    s.property = prop.name();
    replacement<N> r;
    const std::string prefix = prop.name() + "_";  // fused nodes are named <property>_<id>
    prop.scan(index, taken, accept, [&](const N* nodes, std::size_t count, const typename property<G>::factory_fn& make) {
        if constexpr (has_prepare_replace<traits, G>::value) {  // the graph reads it, for its replace
            s.graph = &cg;
            s.nodes.assign(nodes, nodes + count);
            traits::prepare_replace(g, nodes, count, s.inputs, s.outputs);
        } else {
            detail::boundary(s, cg, nodes, count, &marks);
        }
        s.id = id;
        r.payload = make(s);  // before any write: a throwing factory changes nothing
        r.nodes.swap(s.nodes);
        r.inputs.swap(s.inputs);
        r.outputs.swap(s.outputs);
        char digits[24];
        const auto end = std::to_chars(digits, digits + sizeof digits, id).ptr;
        const std::size_t digit_count = static_cast<std::size_t>(end - digits);
        r.name.resize(prefix.size() + digit_count);  // no reallocation once grown
        std::memcpy(&r.name[0], prefix.data(), prefix.size());
        std::memcpy(&r.name[prefix.size()], digits, digit_count);
        if (r.op_name != op) r.op_name.assign(op);  // set once (unless the adapter moved it away)
        traits::replace(g, std::move(r));  // all or nothing (the adapter's promise)
        // Back to s for the next rewrite (an adapter's replace may have moved from them: they
        // are cleared before reuse either way).
        r.nodes.swap(s.nodes);
        r.inputs.swap(s.inputs);
        r.outputs.swap(s.outputs);
        r.payload.reset();
        ++id;
        ++rep.accepted;
    });
    return rep;
}

}  // namespace detail

/// A named, ordered list of properties: apply_backend offers the graph to each in order, and a
/// node a property fused is not offered to the ones after it.
///
/// Minimal complete definition: a name and its properties (add). Requirements on G are those of
/// partitioning (graph/adapter.hpp: the minimal definition plus replace), checked by one
/// static_assert where the backend is applied. Laws (tests/partition/, and testing::differential
/// for a fused property): applying a backend leaves a graph whose outputs, run, equal the
/// original's; a match a property declines leaves the graph as it was; a property earlier in the
/// list wins a node it shares with a later one.
template <class G>
class backend {
public:
    explicit backend(std::string name) : name_(std::move(name)) {}
    const std::string& name() const { return name_; }
    backend& add(property<G> p) {
        props_.push_back(std::move(p));
        return *this;
    }
    const std::vector<property<G>>& properties() const { return props_; }
    std::vector<property<G>>& properties() { return props_; }

private:
    std::string name_;
    std::vector<property<G>> props_;
};

/// The backends registered for graphs of type G (one registry per graph type). Safe to use from
/// several threads at once: a registered backend is never changed in place (adding a property
/// publishes a new copy), so find() hands out a snapshot that a concurrent registration leaves
/// as it was, and an apply_backend that is running keeps the properties it started with.
template <class G>
class backend_registry {
public:
    static backend_registry& instance() {
        static backend_registry r;
        return r;
    }
    /// Append p to backend `name` (created if new).
    void add(const std::string& name, property<G> p) {
        std::unique_lock lock(mu_);
        for (auto& b : backends_) {
            if (b->name() != name) continue;
            auto grown = std::make_shared<backend<G>>(*b);
            grown->add(std::move(p));
            b = std::move(grown);
            return;
        }
        auto b = std::make_shared<backend<G>>(name);
        b->add(std::move(p));
        backends_.push_back(std::move(b));
    }
    /// Register b whole, unless a backend of its name exists; returns whether b was registered.
    /// Two threads inserting the same name register it once.
    bool insert(backend<G> b) {
        std::unique_lock lock(mu_);
        for (auto& e : backends_)
            if (e->name() == b.name()) return false;
        backends_.push_back(std::make_shared<const backend<G>>(std::move(b)));
        return true;
    }
    /// The backend called name as it is now (null if none).
    std::shared_ptr<const backend<G>> find(std::string_view name) const {
        std::shared_lock lock(mu_);
        for (auto& b : backends_)
            if (b->name() == name) return b;
        return nullptr;
    }
    std::vector<std::string> names() const {
        std::shared_lock lock(mu_);
        std::vector<std::string> out;
        for (auto& b : backends_) out.push_back(b->name());
        return out;
    }

private:
    mutable std::shared_mutex mu_;
    std::vector<std::shared_ptr<const backend<G>>> backends_;
};

/// Add p to the end of backend `name` (created if new). Returns true, so that a .cpp can
/// register at static-initialization time: `static const bool r = register_property<G>(...);`.
template <class G>
bool register_property(const std::string& backend_name, property<G> p) {
    backend_registry<G>::instance().add(backend_name, std::move(p));
    return true;
}

/// What the environment says to sgmatch: SGMATCH_BACKEND (the backend apply_backend_from_env
/// applies), SGMATCH_DISABLE=a,b (properties every apply_backend skips) and SGMATCH_VERBOSE=1
/// (every apply_backend prints its passes and counts to stderr). The process reads it once, on
/// first use (environment::process()); a program that changes its environment later, or a test,
/// reads it again with environment::read() and passes the result.
struct environment {
    std::string backend;
    std::vector<std::string> disable;
    bool verbose = false;

    /// The environment as it is now.
    static environment read() {
        environment e;
        if (const char* b = std::getenv("SGMATCH_BACKEND")) e.backend = b;
        e.disable = split_list(std::getenv("SGMATCH_DISABLE"));
        const char* v = std::getenv("SGMATCH_VERBOSE");
        e.verbose = v != nullptr && std::string_view(v) == "1";
        return e;
    }
    /// The environment as the process first asked for it (read once, thread-safe).
    static const environment& process() {
        static const environment e = read();
        return e;
    }

private:
    static std::vector<std::string> split_list(const char* s) {
        std::vector<std::string> out;
        if (s == nullptr) return out;
        std::string cur;
        for (const char* c = s;; ++c) {
            if (*c == ',' || *c == '\0') {
                if (!cur.empty()) out.push_back(cur);
                cur.clear();
                if (*c == '\0') break;
            } else if (*c != ' ') {
                cur += *c;
            }
        }
        return out;
    }
};

struct apply_options {
    std::vector<std::string> disable;  // property names to skip (added to the environment's)
    bool verbose = false;              // also switched on by the environment's SGMATCH_VERBOSE=1
    /// The environment to obey; null: environment::process(), read once per process.
    const environment* env = nullptr;
};

/// Run every property of backend b over g, in order (b need not be registered). The
/// environment's SGMATCH_DISABLE=a,b skips properties a and b; SGMATCH_VERBOSE=1 prints each pass
/// and its counts to stderr (see environment).
template <class G>
std::vector<property_report> apply_backend(G& g, const backend<G>& b, const apply_options& opt = {}) {
    static_assert(is_writable_graph_v<G>,
                  "sgmatch::apply_backend(g, backend): graph_traits<G> must define the write side, "
                  "static replace(G&, const sgmatch::replacement<node_type>&)");
    std::vector<property_report> reports;
    if constexpr (is_writable_graph_v<G>) {
        const environment& env = opt.env != nullptr ? *opt.env : environment::process();
        std::vector<std::string> off = env.disable;
        off.insert(off.end(), opt.disable.begin(), opt.disable.end());
        const bool verbose = opt.verbose || env.verbose;
        for (const property<G>& p : b.properties()) {
            bool disabled = false;
            for (auto& o : off) disabled = disabled || o == p.name();
            if (verbose) std::fprintf(stderr, "start to execute subgraph pass %s\n", p.name().c_str());
            property_report r;
            if (disabled) {
                r.property = p.name();
                r.skipped = true;
                r.skip_reason = "disabled by SGMATCH_DISABLE";
            } else {
                r = detail::apply_writable(g, p);
            }
            if (verbose) {
                if (r.skipped) {
                    std::fprintf(stderr, "  %s: skipped (%s)\n", r.property.c_str(), r.skip_reason.c_str());
                } else {
                    std::fprintf(stderr,
                                 "  %s: %zu candidates, %zu fused, rejected: %zu by size, %zu would make a cycle, "
                                 "%zu by the property's check\n",
                                 r.property.c_str(), r.candidates, r.accepted, r.rejected_size, r.rejected_cycle,
                                 r.rejected_check);
                    for (const auto& [why, n] : r.check_reasons) std::fprintf(stderr, "    %zux %s\n", n, why.c_str());
                }
            }
            reports.push_back(std::move(r));
        }
    } else {
        (void)g;
        (void)b;
        (void)opt;
    }
    return reports;
}

/// Run every property of the registered backend `name` over g, as above (the backend as it was
/// registered when the call began). An unknown name raises backend_error listing the
/// registered backends.
template <class G>
std::vector<property_report> apply_backend(G& g, std::string_view name, const apply_options& opt = {}) {
    const std::shared_ptr<const backend<G>> b = backend_registry<G>::instance().find(name);
    if (b == nullptr) {
        std::string known;
        for (auto& n : backend_registry<G>::instance().names()) known += (known.empty() ? "" : ", ") + n;
        throw backend_error("sgmatch::apply_backend: no backend named '" + std::string(name) +
                            "'; registered: " + (known.empty() ? std::string("(none)") : known));
    }
    return apply_backend(g, *b, opt);
}

/// The one-line hook for a framework's executor: applies the backend named by SGMATCH_BACKEND
/// (in env: by default the process's environment, read once), if set (nothing otherwise).
template <class G>
std::vector<property_report> apply_backend_from_env(G& g, const environment& env = environment::process()) {
    if (env.backend.empty()) return {};
    apply_options opt;
    opt.env = &env;
    return apply_backend(g, env.backend, opt);
}

SGMATCH_END_NAMESPACE
