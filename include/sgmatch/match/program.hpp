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
#include "sgmatch/analysis/typelist.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/type_name.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// Most capture entries one match can record.
template <class P, class = void>
struct cap_fills {
    static constexpr std::size_t value = 0;
};
template <class P>
struct cap_fills<P, std::void_t<pat::detail::unwrap_t<P>>> : cap_fills<pat::detail::unwrap_t<P>> {};
template <class T, class... Os>
struct cap_fills<pat::op<T, Os...>> {
    static constexpr std::size_t value = (std::size_t{0} + ... + cap_fills<Os>::value);
};
template <class... Ps>
struct cap_fills<pat::chain<Ps...>> {
    static constexpr std::size_t value = (std::size_t{0} + ... + cap_fills<Ps>::value);
};
template <class... Ps>
struct cap_fills<pat::alt<Ps...>> {
    static constexpr std::size_t value = max_of(0, cap_fills<Ps>::value...);
};
template <class P>
struct cap_fills<pat::opt<P>> : cap_fills<P> {};
template <std::size_t Lo, std::size_t Hi, class P>
struct cap_fills<pat::rep<Lo, Hi, P>> {
    static constexpr std::size_t value = Hi * cap_fills<P>::value;
};
template <class T, class P>
struct cap_fills<pat::cap<T, P>> {
    static constexpr std::size_t value = 1 + cap_fills<P>::value;
};

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

enum class ik : std::uint8_t {
    op, any, input, constant, chain, alt, opt, rep, guard, cap, ref, esc, in_port, out_port, invalid
};

/// One instruction: a node of the pattern's AST. Children are kids[first, first + n).
struct instr {
    ik kind = ik::invalid;
    bool leaf = false;      // guard / cap: the child is a graph input or constant matcher
    std::uint32_t a = 0;    // op: first op id; rep: min; guard: predicate; cap / ref: capture; ports: index
    std::uint32_t b = 0;    // op: op id count; rep: max
    std::uint32_t first = 0;
    std::uint32_t n = 0;
    std::uint32_t tags = 0;      // op: first tag (for messages)
    std::uint32_t tag_n = 0;     // op: tag count
};

struct tag_desc {
    std::string_view (*alias)(std::size_t);
    std::size_t alias_count;
    bool commutative;
};

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
        const std::uint32_t* p = ids.data() + e->a;
        for (std::uint32_t i = 0; i < e->b; ++i)
            if (p[i] == o) return true;
        return false;
    }
    bool commutative(const instr* e, std::uint32_t o) const {
        for (std::uint32_t i = 0; i < e->b; ++i)
            if (ids[e->a + i] == o) return comm[e->a + i] != 0;
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
        for (std::size_t a = 0; a < t.alias_count; ++a) {
            const auto o = graph_traits<G>::find_op(g, t.alias(a));
            if (!o) continue;
            bool seen = false;  // the op being emitted is the last instruction so far
            for (std::size_t i = prog.code.back().a; i < prog.ids.size(); ++i) seen = seen || prog.ids[i] == *o;
            if (!seen) {
                prog.ids.push_back(*o);
                prog.comm.push_back(t.commutative ? 1 : 0);
            }
        }
    }
};

// emit<E, Operand>::put(em, e) appends e's instructions and returns the index of its root.
template <class E, bool Operand>
struct emit;

template <class T>
tag_desc tag_of() {
    return tag_desc{&op_tag_traits<T>::alias, op_tag_traits<T>::alias_count, op_tag_traits<T>::commutative};
}

template <class... Ts, class... Os, bool Operand>
struct emit<pat::op<pat::tags<Ts...>, Os...>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::op<pat::tags<Ts...>, Os...>& e) {
        instr i;
        i.kind = ik::op;
        i.a = static_cast<std::uint32_t>(em.prog.ids.size());
        i.tags = static_cast<std::uint32_t>(em.prog.tags.size());
        i.tag_n = sizeof...(Ts);
        const std::uint32_t at = em.add(i);
        (em.add_tag(tag_of<Ts>()), ...);
        em.prog.code[at].b = static_cast<std::uint32_t>(em.prog.ids.size() - em.prog.code[at].a);
        if constexpr (sizeof...(Os) > 0) {
            const std::uint32_t first = em.reserve_kids(at, sizeof...(Os));
            put_operands(em, e, first, std::index_sequence_for<Os...>{});
        }
        return at;
    }
    template <class G, std::size_t... I>
    static void put_operands(emitter<G>& em, const pat::op<pat::tags<Ts...>, Os...>& e, std::uint32_t first,
                             std::index_sequence<I...>) {
        ((em.prog.kids[first + I] = emit<Os, true>::put(em, std::get<I>(e.operands))), ...);
    }
};

template <class G>
std::uint32_t emit_simple(emitter<G>& em, ik k) {
    instr i;
    i.kind = k;
    return em.add(i);
}

template <bool Operand>
struct emit<pat::any, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::any&) { return emit_simple(em, ik::any); }
};
template <bool Operand>
struct emit<pat::graph_input, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::graph_input&) { return emit_simple(em, ik::input); }
};
template <bool Operand>
struct emit<pat::constant, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::constant&) { return emit_simple(em, ik::constant); }
};
template <bool Operand>
struct emit<pat::invalid, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::invalid&) { return emit_simple(em, ik::invalid); }
};

template <class T, bool Operand>
struct emit<pat::ref<T>, Operand> {
    static_assert(Operand, "sgmatch: ref<Name>() can only be an operand, as in op<Mul>(ref<Name>())");
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::ref<T>&) {
        instr i;
        i.kind = ik::ref;
        i.a = em.capture_index(&type_key<T>::id);
        em.prog.ref_names[i.a] = &type_name<T>;
        return em.add(i);
    }
};

// Elements with a list of children (chain items, alternatives).
template <ik K, bool Operand, class Pack, class... Ps, class G, std::size_t... I>
std::uint32_t emit_list(emitter<G>& em, const Pack& items, std::index_sequence<I...>) {
    instr i;
    i.kind = K;
    const std::uint32_t at = em.add(i);
    const std::uint32_t first = em.reserve_kids(at, sizeof...(Ps));
    ((em.prog.kids[first + I] =
          emit<Ps, Operand>::put(em, static_cast<const pat::detail::leaf<I, Ps>&>(items).value)),
     ...);
    return at;
}

template <class... Ps, bool Operand>
struct emit<pat::chain<Ps...>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::chain<Ps...>& c) {
        return emit_list<ik::chain, Operand, decltype(c.items), Ps...>(em, c.items, std::index_sequence_for<Ps...>{});
    }
};
template <class... Ps, bool Operand>
struct emit<pat::alt<Ps...>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::alt<Ps...>& c) {
        return emit_list<ik::alt, Operand, decltype(c.items), Ps...>(em, c.items, std::index_sequence_for<Ps...>{});
    }
};

// Elements with one child.
template <bool Operand, class P, class G>
std::uint32_t emit_unary(emitter<G>& em, instr i, const P& child) {
    const std::uint32_t at = em.add(i);
    const std::uint32_t first = em.reserve_kids(at, 1);
    em.prog.kids[first] = emit<P, Operand>::put(em, child);
    return at;
}

template <class P, bool Operand>
struct emit<pat::opt<P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::opt<P>& e) {
        instr i;
        i.kind = ik::opt;
        return emit_unary<Operand>(em, i, e.p);
    }
};
template <std::size_t Lo, std::size_t Hi, class P, bool Operand>
struct emit<pat::rep<Lo, Hi, P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::rep<Lo, Hi, P>& e) {
        instr i;
        i.kind = ik::rep;
        i.a = static_cast<std::uint32_t>(Lo);
        i.b = static_cast<std::uint32_t>(Hi);
        return emit_unary<Operand>(em, i, e.p);
    }
};
template <class P, class F, bool Operand>
struct emit<pat::guarded<P, F>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::guarded<P, F>& e) {
        instr i;
        i.kind = ik::guard;
        i.leaf = is_leaf<P>::value;
        i.a = static_cast<std::uint32_t>(em.prog.preds.size());
        em.prog.preds.push_back(pred_slot<G>{&e.pred, &pred_test<G, F>, &pred_describe<F>});
        return emit_unary<Operand>(em, i, e.p);
    }
};
template <class T, class P, bool Operand>
struct emit<pat::cap<T, P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::cap<T, P>& e) {
        instr i;
        i.kind = ik::cap;
        i.leaf = is_leaf<P>::value;
        i.a = em.capture_index(&type_key<T>::id);
        return emit_unary<Operand>(em, i, e.p);
    }
};
template <class P, bool Operand>
struct emit<pat::esc<P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::esc<P>& e) {
        instr i;
        i.kind = ik::esc;
        return emit_unary<Operand>(em, i, e.p);
    }
};
template <std::size_t I, class P, bool Operand>
struct emit<pat::in_port<I, P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::in_port<I, P>& e) {
        instr i;
        i.kind = ik::in_port;
        i.a = static_cast<std::uint32_t>(I);
        return emit_unary<Operand>(em, i, e.p);
    }
};
template <std::size_t I, class P, bool Operand>
struct emit<pat::out_port<I, P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::out_port<I, P>& e) {
        instr i;
        i.kind = ik::out_port;
        i.a = static_cast<std::uint32_t>(I);
        return emit_unary<Operand>(em, i, e.p);
    }
};
// A name is for the reader and for analyses: it emits nothing of its own.
template <class T, class P, bool Operand>
struct emit<pat::named<T, P>, Operand> {
    template <class G>
    static std::uint32_t put(emitter<G>& em, const pat::named<T, P>& e) { return emit<P, Operand>::put(em, e.p); }
};

template <class Names>
struct cap_key_list;
template <class... Ns>
struct cap_key_list<tlist<Ns...>> {
    static constexpr const void* keys[sizeof...(Ns) + 1] = {&type_key<Ns>::id..., nullptr};
    static constexpr std::size_t size = sizeof...(Ns);
};

template <class G, class Tags>
struct anchor_descs;
template <class G, class... Ts>
struct anchor_descs<G, tlist<Ts...>> {
    static void add(const G& g, std::vector<std::uint32_t>& out) {
        const tag_desc ds[sizeof...(Ts) + 1] = {tag_of<Ts>()..., tag_desc{nullptr, 0, false}};
        for (std::size_t t = 0; t < sizeof...(Ts); ++t)
            for (std::size_t a = 0; a < ds[t].alias_count; ++a) {
                const auto o = graph_traits<G>::find_op(g, ds[t].alias(a));
                if (!o) continue;
                bool seen = false;
                for (auto x : out) seen = seen || x == *o;
                if (!seen) out.push_back(*o);
            }
    }
};

/// Compile p for g. p must outlive the program (its predicates are referenced, not copied).
template <class G, class P>
void compile(const G& g, const P& p, program<G>& prog) {
    using keys = cap_key_list<capture_names_t<P>>;
    prog.ref_names.assign(keys::size, nullptr);
    emitter<G> em{g, prog, keys::keys, keys::size};
    emit<P, false>::put(em, p);
    prog.max_nodes = max_nodes_v<P> == 0 ? 1 : max_nodes_v<P>;
    prog.max_log = cap_fills<P>::value == 0 ? 1 : cap_fills<P>::value;
    prog.fast = fast_pattern<P>::value;
    prog.wildcard = anchor_is_wildcard_v<P>;
    if (!prog.wildcard) anchor_descs<G, anchor_tags_t<P>>::add(g, prog.anchor_ids);
}

}  // namespace detail
SGMATCH_END_NAMESPACE
