// sgmatch/match/program.hpp - a pattern compiled to a small runtime program (no promises: use
// match.hpp).
//
// The pattern's type is its AST; matching it does not need one function per pattern. A pattern
// is emitted once, when a matcher is made, into a flat array of instructions in pre-order, with
// its op tags resolved to the graph's op ids and its predicates bound to the pattern object.
// One engine per graph type (engine.hpp) runs every program. The per-pattern code is only the
// emitter for each AST node type (shared by every pattern that uses that node type) and one
// trampoline per predicate type; that is what keeps a TU with many patterns cheap to compile.
#pragma once

#include <boost/hana/basic_tuple.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/analysis/anchors.hpp"
#include "sgmatch/analysis/captures.hpp"
#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/type_name.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/fold.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// Most capture entries one match can record.
template <class P, class... Rs>
struct cap_fills_on : std::integral_constant<std::size_t, (std::size_t{0} + ... + Rs::value)> {
    using type = cap_fills_on;
};
template <class... Ps, class... Rs>
struct cap_fills_on<pat::alt<Ps...>, Rs...> : std::integral_constant<std::size_t, max_of(0, Rs::value...)> {
    using type = cap_fills_on;
};
template <std::size_t Lo, std::size_t Hi, class P, class R>
struct cap_fills_on<pat::rep<Lo, Hi, P>, R> : std::integral_constant<std::size_t, Hi * R::value> {
    using type = cap_fills_on;
};
template <class T, class P, class R>
struct cap_fills_on<pat::cap<T, P>, R> : std::integral_constant<std::size_t, 1 + R::value> {
    using type = cap_fills_on;
};
template <class P>
constexpr std::size_t cap_fills_v = pat::fold_t<P, cap_fills_on>::value;

template <class P>
struct is_leaf : std::false_type {};
template <>
struct is_leaf<pat::graph_input> : std::true_type {};
template <>
struct is_leaf<pat::constant> : std::true_type {};
template <class P, class F>
struct is_leaf<pat::guarded<P, F>> : is_leaf<P> {};
template <class T, class P>
struct is_leaf<pat::cap<T, P>> : is_leaf<P> {};
template <class T, class P>
struct is_leaf<pat::named<T, P>> : is_leaf<P> {};

// Patterns the straight-line path handles: chains of op elements whose operands are all plain
// any(), with captures, predicates and names allowed.
template <class E>
struct fast_elem : std::false_type {};
template <class T, class... Os>
struct fast_elem<pat::op<T, Os...>> : std::bool_constant<(std::is_same_v<Os, pat::any> && ...)> {};
template <class P, class F>
struct fast_elem<pat::guarded<P, F>> : fast_elem<P> {};
template <class Tag, class P>
struct fast_elem<pat::cap<Tag, P>> : fast_elem<P> {};
template <class Tag, class P>
struct fast_elem<pat::named<Tag, P>> : fast_elem<P> {};
template <class P>
struct fast_pattern : fast_elem<P> {};
template <class... Ps>
struct fast_pattern<pat::chain<Ps...>> : std::bool_constant<(fast_elem<Ps>::value && ...)> {};

// A unique address per type: capture names are looked up by it when a program is emitted.
template <class T>
struct type_key {
    static constexpr char id = 0;
};

enum class instr_kind : std::uint8_t {
    op, any, input, constant, chain, alt, opt, rep, guard, cap, ref, esc, in_port, out_port, invalid
};

/// One instruction: a node of the pattern's AST. Children are kids[first, first + n).
struct instr {
    instr_kind kind = instr_kind::invalid;
    bool leaf = false;         // guard / cap: the child is a graph input or constant matcher
    std::uint32_t arg0 = 0;    // what it holds depends on the kind: read it by the names below
    std::uint32_t arg1 = 0;
    std::uint32_t first = 0;
    std::uint32_t n = 0;
    std::uint32_t tags = 0;      // op: first tag (for messages)
    std::uint32_t tag_n = 0;     // op: tag count

    constexpr std::uint32_t first_id() const { return arg0; }    // op: its first op id (prog.ids)
    constexpr std::uint32_t id_count() const { return arg1; }    // op: how many op ids
    constexpr std::uint32_t min_count() const { return arg0; }   // rep: the fewest repetitions
    constexpr std::uint32_t max_count() const { return arg1; }   // rep: the most
    constexpr std::uint32_t predicate() const { return arg0; }   // guard: its predicate (prog.preds)
    constexpr std::uint32_t capture() const { return arg0; }     // cap, ref: its capture slot
    constexpr std::uint32_t port() const { return arg0; }        // in_port, out_port: the port
};

struct tag_desc {
    std::string_view (*alias)(std::size_t);
    std::size_t alias_count;
    bool commutative;
};

// Calls f(id) with the graph's op id of each of the tag's names the graph has (an alias resolved
// to its op id): what an op instruction and the anchor list both read a tag as.
template <class G, class F>
void for_each_op_id(const G& g, const tag_desc& t, F f) {
    for (std::size_t a = 0; a < t.alias_count; ++a)
        if (const auto o = graph_traits<G>::find_op(g, t.alias(a))) f(static_cast<std::uint32_t>(*o));
}

template <class G>
struct pred_slot {
    using N = typename graph_traits<G>::node_type;
    const void* obj;
    bool (*test)(const void*, const G&, N);
    std::string (*describe)(const void*);
};

template <class G, class F>
bool pred_test(const void* f, const G& g, typename graph_traits<G>::node_type n) {
    return (*static_cast<const F*>(f))(node_view<G>(g, n));
}
template <class F>
std::string pred_describe(const void* f) {
    return describe_pred(*static_cast<const F*>(f));
}

/// A pattern compiled for one graph: instructions in pre-order (the root is code[0]), op ids
/// resolved, predicates bound to the pattern object (which must outlive the program).
template <class G>
struct program {
    std::vector<instr> code;
    std::vector<std::uint32_t> kids;
    std::vector<std::uint32_t> ids;     // op ids per op instruction
    std::vector<std::uint8_t> comm;     // whether that id's tag is commutative
    std::vector<tag_desc> tags;
    std::vector<pred_slot<G>> preds;
    std::vector<std::string (*)()> ref_names;  // per capture index, for messages
    std::vector<std::uint32_t> anchor_ids;     // op ids an anchored scan starts from
    std::size_t max_nodes = 1;
    std::size_t max_log = 1;
    bool fast = false;         // the straight-line path applies
    bool wildcard = false;     // the anchor may be any node

    const instr* root() const { return code.data(); }
    const instr* kid(const instr* e, std::size_t i) const { return code.data() + kids[e->first + i]; }

    bool op_is(const instr* e, std::uint32_t o) const {
        const std::uint32_t* p = ids.data() + e->first_id();
        for (std::uint32_t i = 0; i < e->id_count(); ++i)
            if (p[i] == o) return true;
        return false;
    }
    bool commutative(const instr* e, std::uint32_t o) const {
        for (std::uint32_t i = 0; i < e->id_count(); ++i)
            if (ids[e->first_id() + i] == o) return comm[e->first_id() + i] != 0;
        return false;
    }
    std::string tag_names(const instr* e) const {
        std::string s;
        for (std::uint32_t i = 0; i < e->tag_n; ++i) {
            if (i) s += "|";
            s += std::string(tags[e->tags + i].alias(0));
        }
        return s;
    }
};

// ----- emission -----

template <class G>
struct emitter {
    const G& g;
    program<G>& prog;
    const void* const* cap_keys;
    std::size_t cap_count;

    std::uint32_t capture_index(const void* key) const {
        for (std::size_t i = 0; i < cap_count; ++i)
            if (cap_keys[i] == key) return static_cast<std::uint32_t>(i);
        return 0;  // unreachable: check_entry proved every name known
    }
    std::uint32_t add(const instr& e) {
        prog.code.push_back(e);
        return static_cast<std::uint32_t>(prog.code.size() - 1);
    }
    // Children are emitted after their parent; their indices land in kids[first, first + n).
    std::uint32_t reserve_kids(std::uint32_t at, std::size_t n) {
        const auto first = static_cast<std::uint32_t>(prog.kids.size());
        prog.kids.resize(prog.kids.size() + n);
        prog.code[at].first = first;
        prog.code[at].n = static_cast<std::uint32_t>(n);
        return first;
    }
    void add_tag(const tag_desc& t) {
        prog.tags.push_back(t);
        // The op being emitted is the last instruction so far: its ids start at its first_id.
        const std::size_t from = prog.code.back().first_id();
        for_each_op_id(g, t, [&](std::uint32_t o) {
            for (std::size_t i = from; i < prog.ids.size(); ++i)
                if (prog.ids[i] == o) return;
            prog.ids.push_back(o);
            prog.comm.push_back(t.commutative ? 1 : 0);
        });
    }
};

template <class T>
tag_desc tag_of() {
    return tag_desc{&op_tag_traits<T>::alias, op_tag_traits<T>::alias_count, op_tag_traits<T>::commutative};
}

// The instruction of one pattern node, without its children; emit() adds those.
template <class G>
std::uint32_t emit_head(emitter<G>& em, const pat::any&) { return em.add(instr{instr_kind::any}); }
template <class G>
std::uint32_t emit_head(emitter<G>& em, const pat::graph_input&) { return em.add(instr{instr_kind::input}); }
template <class G>
std::uint32_t emit_head(emitter<G>& em, const pat::constant&) { return em.add(instr{instr_kind::constant}); }
template <class G>
std::uint32_t emit_head(emitter<G>& em, const pat::invalid&) { return em.add(instr{instr_kind::invalid}); }
template <class G, class... Ps>
std::uint32_t emit_head(emitter<G>& em, const pat::chain<Ps...>&) { return em.add(instr{instr_kind::chain}); }
template <class G, class... Ps>
std::uint32_t emit_head(emitter<G>& em, const pat::alt<Ps...>&) { return em.add(instr{instr_kind::alt}); }
template <class G, class P>
std::uint32_t emit_head(emitter<G>& em, const pat::opt<P>&) { return em.add(instr{instr_kind::opt}); }
template <class G, class P>
std::uint32_t emit_head(emitter<G>& em, const pat::esc<P>&) { return em.add(instr{instr_kind::esc}); }
template <class G, class... Ts, class... Os>
std::uint32_t emit_head(emitter<G>& em, const pat::op<pat::tags<Ts...>, Os...>&) {
    instr i{instr_kind::op};
    i.arg0 = static_cast<std::uint32_t>(em.prog.ids.size());  // first_id
    i.tags = static_cast<std::uint32_t>(em.prog.tags.size());
    i.tag_n = sizeof...(Ts);
    const std::uint32_t at = em.add(i);
    (em.add_tag(tag_of<Ts>()), ...);
    em.prog.code[at].arg1 = static_cast<std::uint32_t>(em.prog.ids.size() - em.prog.code[at].first_id());  // id_count
    return at;
}
template <class G, class T>
std::uint32_t emit_head(emitter<G>& em, const pat::ref<T>&) {
    instr i{instr_kind::ref};
    i.arg0 = em.capture_index(&type_key<T>::id);  // capture
    em.prog.ref_names[i.capture()] = &type_name<T>;
    return em.add(i);
}
template <class G, std::size_t Lo, std::size_t Hi, class P>
std::uint32_t emit_head(emitter<G>& em, const pat::rep<Lo, Hi, P>&) {
    instr i{instr_kind::rep};
    i.arg0 = static_cast<std::uint32_t>(Lo);  // min_count
    i.arg1 = static_cast<std::uint32_t>(Hi);  // max_count
    return em.add(i);
}
template <class G, class P, class F>
std::uint32_t emit_head(emitter<G>& em, const pat::guarded<P, F>& e) {
    instr i{instr_kind::guard};
    i.leaf = is_leaf<P>::value;
    i.arg0 = static_cast<std::uint32_t>(em.prog.preds.size());  // predicate
    em.prog.preds.push_back(pred_slot<G>{&e.pred, &pred_test<G, F>, &pred_describe<F>});
    return em.add(i);
}
template <class G, class T, class P>
std::uint32_t emit_head(emitter<G>& em, const pat::cap<T, P>&) {
    instr i{instr_kind::cap};
    i.leaf = is_leaf<P>::value;
    i.arg0 = em.capture_index(&type_key<T>::id);  // capture
    return em.add(i);
}
template <class G, std::size_t I, class P>
std::uint32_t emit_head(emitter<G>& em, const pat::in_port<I, P>&) {
    instr i{instr_kind::in_port};
    i.arg0 = static_cast<std::uint32_t>(I);  // port
    return em.add(i);
}
template <class G, std::size_t I, class P>
std::uint32_t emit_head(emitter<G>& em, const pat::out_port<I, P>&) {
    instr i{instr_kind::out_port};
    i.arg0 = static_cast<std::uint32_t>(I);  // port
    return em.add(i);
}

template <class P>
constexpr bool is_named_v = false;
template <class T, class P>
constexpr bool is_named_v<pat::named<T, P>> = true;
template <class P>
constexpr bool is_ref_v = false;
template <class T>
constexpr bool is_ref_v<pat::ref<T>> = true;
template <class P>
struct is_op_node : std::false_type {};
template <class T, class... Os>
struct is_op_node<pat::op<T, Os...>> : std::true_type {};

template <bool Operand, class G, class P>
std::uint32_t emit(emitter<G>& em, const P& e);

// Emits the children of the instruction at `at` (called by pat::with_children).
template <bool Operand, class G>
struct put_children {
    emitter<G>& em;
    std::uint32_t at;
    template <class... Cs>
    void operator()(const Cs&... c) const {
        if constexpr (sizeof...(Cs) > 0) {
            std::uint32_t k = em.reserve_kids(at, sizeof...(Cs));
            ((em.prog.kids[k++] = emit<Operand>(em, c)), ...);
        }
    }
};

// Appends e's instructions in pre-order (the node, then its children's, walked with
// pat::with_children) and returns the index of its root. Operand: e is (inside) an op's operand.
template <bool Operand, class G, class P>
std::uint32_t emit(emitter<G>& em, const P& e) {
    if constexpr (is_named_v<P>) {
        return emit<Operand>(em, e.p);  // a name is for the reader and for analyses
    } else {
        if constexpr (is_ref_v<P>)
            static_assert(Operand, "sgmatch: ref<Name>() can only be an operand, as in op<Mul>(ref<Name>())");
        const std::uint32_t at = emit_head(em, e);
        if constexpr (!std::is_same_v<pat::children_t<P>, boost::hana::basic_tuple<>>)
            pat::with_children(e, put_children<Operand || is_op_node<P>::value, G>{em, at});
        return at;
    }
}

template <class Names>
struct cap_key_list;
template <class... Ns>
struct cap_key_list<boost::hana::basic_tuple<Ns...>> {
    static constexpr const void* keys[sizeof...(Ns) + 1] = {&type_key<typename Ns::type>::id..., nullptr};
    static constexpr std::size_t size = sizeof...(Ns);
};

template <class G, class Tags>
struct anchor_descs;
template <class G, class... Ts>
struct anchor_descs<G, boost::hana::basic_tuple<Ts...>> {
    static void add(const G& g, std::vector<std::uint32_t>& out) {
        const tag_desc ds[sizeof...(Ts) + 1] = {tag_of<typename Ts::type>()..., tag_desc{nullptr, 0, false}};
        for (std::size_t t = 0; t < sizeof...(Ts); ++t)
            for_each_op_id(g, ds[t], [&](std::uint32_t o) {
                if (std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
            });
    }
};

/// Compile p for g. p must outlive the program (its predicates are referenced, not copied).
template <class G, class P>
void compile(const G& g, const P& p, program<G>& prog) {
    using keys = cap_key_list<capture_names_t<P>>;
    prog.ref_names.assign(keys::size, nullptr);
    emitter<G> em{g, prog, keys::keys, keys::size};
    emit<false>(em, p);
    prog.max_nodes = max_nodes_v<P> == 0 ? 1 : max_nodes_v<P>;
    prog.max_log = cap_fills_v<P> == 0 ? 1 : cap_fills_v<P>;
    prog.fast = fast_pattern<P>::value;
    prog.wildcard = anchor_is_wildcard_v<P>;
    if (!prog.wildcard) anchor_descs<G, anchor_tags_t<P>>::add(g, prog.anchor_ids);
}

}  // namespace detail
SGMATCH_END_NAMESPACE
