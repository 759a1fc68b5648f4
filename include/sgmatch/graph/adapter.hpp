// sgmatch/graph/adapter.hpp - the contract between sgmatch and a user's graph type.
//
// A user teaches sgmatch their graph by specializing `sgmatch::graph_traits<G>`. Everything is
// a static member taking the graph by const reference (the write takes it by reference), so the
// user's graph type itself is never changed and may come from a library they cannot edit.
//
// Minimal complete definition (`n` is a node_type, `g` a const G&):
//
//   using node_type = ...;                    // cheap handle, copyable, ==
//   nodes(g)                -> range of node_type, in a topological order (producers first)
//   node_count(g)           -> std::size_t    // number of nodes in nodes(g)
//   index_bound(g)          -> std::size_t
//   index(g, n)             -> std::size_t    // distinct per node, < index_bound(g)
//   name(g, n)              -> string-like    // used in messages
//   kind(g, n)              -> sgmatch::node_kind
//   op(g, n)                -> std::uint32_t  // op id of an op node, dense: < op_count(g)
//   op_count(g)             -> std::size_t
//   op_name(g, n)           -> string-like    // name of the op of an op node
//   find_op(g, string_view) -> std::optional<std::uint32_t>   // op id for a name, if present
//   input_count(g, n)       -> std::size_t
//   input(g, n, i)          -> sgmatch::value_ref<node_type>  // producer and its output port
//   output_count(g, n)      -> std::size_t
//   user_count(g, n)        -> std::size_t
//   user(g, n, i)           -> sgmatch::use<node_type>        // every use of every output
//   graph_output_count(g)   -> std::size_t
//   graph_output(g, i)      -> sgmatch::value_ref<node_type>
//   needs_gradients(g)      -> bool
//   attr(g, n, string_view) -> std::optional<sgmatch::attribute>
//
// Optional (detected; sgmatch works without them):
//   is_graph_output(g, n, port) -> bool       // else: a scan of graph_output(g, i)
//   has_graph_output(g, n)  -> bool           // any port of n; else: is_graph_output per port
//   value_type(g, n, port)  -> std::optional<sgmatch::tensor_type>   // shape predicates, lowering
//   constant(g, n)          -> std::optional<sgmatch::const_tensor_view>
//   constant_owner(g, n)    -> std::shared_ptr<const void>   // keeps constant n's data alive and
//                                             // unchanged while held (null: no such promise): the
//                                             // oneDNN lowering then shares a weight, not copies it
//   replace(G&, const sgmatch::replacement<node_type>&) -> node_type  // the write side
//   prepare_replace(G&, const node_type* nodes, std::size_t count,
//                   std::vector<sgmatch::value_ref<node_type>>& inputs,
//                   std::vector<sgmatch::value_ref<node_type>>& outputs) -> void
//                                             // with replace: the boundary of a node set exactly
//                                             // as sgmatch computes it (see subgraph in
//                                             // partition/property.hpp), read by the graph itself
//                                             // so that it can keep what it learned for the
//                                             // replace that follows; else sgmatch reads it
//                                             // through the calls above
//   redirect(G&, value_ref from, value_ref to) -> void   // clean-up passes (passes/cleanup.hpp):
//                                             // every use of `from` (users' inputs, graph outputs)
//                                             // reads `to` instead; refused when `to` depends on
//                                             // `from`'s node
//   erase(G&, n)            -> void           // removes a node nothing reads
//   add_constant(G&, std::string_view name, std::vector<std::int64_t> dims, sgmatch::dtype,
//                std::vector<unsigned char> bytes) -> node_type   // a new constant (folding)
//   for_each_attr(g, n, f)  -> void           // f(string-like key, const sgmatch::attribute&) for
//                                             // every attribute of n; else: the keys asked for
//   payload(g, n)           -> const std::any*  // what replace() was given for the node it made
//                                             // (replacement::payload), null for other nodes: the
//                                             // executor of a whole adapter graph runs fused nodes
//                                             // through it (exec/graph_executor.hpp, which
//                                             // detects it: the core does not include <any>)
//   static constexpr bool checked_by_construction = true;   // the graph itself guarantees that
//                                             // nodes(g) is a topological order of every node, with
//                                             // inputs, ports and op ids in range (it checks each
//                                             // write): sgmatch then skips its own check of them
//   op_codes(g)             -> const std::uint32_t*  // optional: every node's op in one array,
//                                             // indexed by index(g, n) below index_bound(g): the op
//                                             // id of an op node, a value >= op_count(g) for inputs
//                                             // and constants, agreeing with kind() and op()
//                                             // (op_index then reads 4 bytes a node, not the node)
//
// The write `replace` must either complete or leave the graph unchanged (strong guarantee), and
// must leave nodes(g) topologically ordered afterwards. Handles of the nodes it did not replace
// must stay valid (and keep their index): a property finds all its matches, then writes them one
// by one, holding the later matches' handles across the earlier writes.
//
// Users of output port p of node n are reported by user(g, n, i) for all ports; a user that
// reads the same value on two slots appears twice. sgmatch checks the graph it reads: an input
// whose producer is not in the graph, a port out of range, a cycle, or users that are not the
// input slots reading the node (op_index compares them) raises sgmatch::graph_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE

template <class Node>
struct replacement;  // sgmatch/graph/replacement.hpp

/// Specialize for your graph type. The primary template marks "not specialized".
template <class G, class = void>
struct graph_traits {
    static constexpr bool sgmatch_unspecialized = true;
};

namespace detail {

template <class T, class = void>
struct is_unspecialized : std::false_type {};
template <class T>
struct is_unspecialized<T, std::void_t<decltype(T::sgmatch_unspecialized)>> : std::true_type {};

template <class Tr, class = void>
struct has_node_type : std::false_type {};
template <class Tr>
struct has_node_type<Tr, std::void_t<typename Tr::node_type>> : std::true_type {};

template <class G>
using graph_cref = const G&;

// One detector per required function. Each is checked only once node_type exists.
#define SGMATCH_DETAIL_DETECT(fname, ...)                                          \
    template <class Tr, class G, class = void>                                     \
    struct has_##fname : std::false_type {};                                       \
    template <class Tr, class G>                                                   \
    struct has_##fname<Tr, G, std::void_t<decltype(Tr::fname(__VA_ARGS__))>> : std::true_type {};

#define SGMATCH_DETAIL_N std::declval<typename Tr::node_type>()
SGMATCH_DETAIL_DETECT(nodes, std::declval<graph_cref<G>>())
SGMATCH_DETAIL_DETECT(node_count, std::declval<graph_cref<G>>())
SGMATCH_DETAIL_DETECT(index_bound, std::declval<graph_cref<G>>())
SGMATCH_DETAIL_DETECT(index, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(name, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(kind, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(op, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(op_count, std::declval<graph_cref<G>>())
SGMATCH_DETAIL_DETECT(op_name, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(find_op, std::declval<graph_cref<G>>(), std::string_view())
SGMATCH_DETAIL_DETECT(input_count, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(input, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N, std::size_t())
SGMATCH_DETAIL_DETECT(output_count, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(user_count, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(user, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N, std::size_t())
SGMATCH_DETAIL_DETECT(graph_output_count, std::declval<graph_cref<G>>())
SGMATCH_DETAIL_DETECT(graph_output, std::declval<graph_cref<G>>(), std::size_t())
SGMATCH_DETAIL_DETECT(needs_gradients, std::declval<graph_cref<G>>())
SGMATCH_DETAIL_DETECT(attr, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N, std::string_view())
SGMATCH_DETAIL_DETECT(is_graph_output, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N, std::uint32_t())
SGMATCH_DETAIL_DETECT(has_graph_output, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(value_type, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N, std::uint32_t())
SGMATCH_DETAIL_DETECT(constant, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(constant_owner, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(for_each_attr, std::declval<graph_cref<G>>(), SGMATCH_DETAIL_N,
                      std::declval<void (*)(std::string_view, const attribute&)>())
SGMATCH_DETAIL_DETECT(replace, std::declval<G&>(),
                      std::declval<const replacement<typename Tr::node_type>&>())
SGMATCH_DETAIL_DETECT(prepare_replace, std::declval<G&>(), std::declval<const typename Tr::node_type*>(),
                      std::size_t(), std::declval<std::vector<value_ref<typename Tr::node_type>>&>(),
                      std::declval<std::vector<value_ref<typename Tr::node_type>>&>())
SGMATCH_DETAIL_DETECT(redirect, std::declval<G&>(), std::declval<value_ref<typename Tr::node_type>>(),
                      std::declval<value_ref<typename Tr::node_type>>())
SGMATCH_DETAIL_DETECT(erase, std::declval<G&>(), SGMATCH_DETAIL_N)
SGMATCH_DETAIL_DETECT(add_constant, std::declval<G&>(), std::string_view(), std::vector<std::int64_t>(), dtype(),
                      std::vector<unsigned char>())
#undef SGMATCH_DETAIL_N
#undef SGMATCH_DETAIL_DETECT

// What each required function must return (checked once it is there): a type convertible to
// the contract's, and, for counts and ids, an integer or an enum-free integral type.
template <class R>
constexpr bool is_count_v = std::is_integral_v<std::decay_t<R>> && !std::is_same_v<std::decay_t<R>, bool>;
template <class Tr, class G, class = void>
struct nodes_are_nodes : std::false_type {};
template <class Tr, class G>
struct nodes_are_nodes<Tr, G, std::void_t<decltype(*std::begin(Tr::nodes(std::declval<graph_cref<G>>()))),
                                          decltype(std::end(Tr::nodes(std::declval<graph_cref<G>>())))>>
    : std::is_convertible<decltype(*std::begin(Tr::nodes(std::declval<graph_cref<G>>()))), typename Tr::node_type> {};
#define SGMATCH_DETAIL_RET(fname, ...) decltype(Tr::fname(__VA_ARGS__))
#define SGMATCH_DETAIL_G std::declval<graph_cref<G>>()
#define SGMATCH_DETAIL_N std::declval<typename Tr::node_type>()

// Index of the first required function whose return type is not the contract's (0 = none),
// numbered after the missing-function requirements of first_missing_requirement.
template <class Tr, class G>
constexpr int first_wrong_return() {
    using N = typename Tr::node_type;
    const bool ok[] = {
        nodes_are_nodes<Tr, G>::value,
        is_count_v<SGMATCH_DETAIL_RET(node_count, SGMATCH_DETAIL_G)>,
        is_count_v<SGMATCH_DETAIL_RET(index_bound, SGMATCH_DETAIL_G)>,
        is_count_v<SGMATCH_DETAIL_RET(index, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N)>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(name, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N), std::string_view>,
        std::is_same_v<std::decay_t<SGMATCH_DETAIL_RET(kind, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N)>, node_kind>,
        is_count_v<SGMATCH_DETAIL_RET(op, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N)>,
        is_count_v<SGMATCH_DETAIL_RET(op_count, SGMATCH_DETAIL_G)>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(op_name, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N), std::string_view>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(find_op, SGMATCH_DETAIL_G, std::string_view()), std::optional<std::uint32_t>>,
        is_count_v<SGMATCH_DETAIL_RET(input_count, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N)>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(input, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N, std::size_t()), value_ref<N>>,
        is_count_v<SGMATCH_DETAIL_RET(output_count, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N)>,
        is_count_v<SGMATCH_DETAIL_RET(user_count, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N)>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(user, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N, std::size_t()), use<N>>,
        is_count_v<SGMATCH_DETAIL_RET(graph_output_count, SGMATCH_DETAIL_G)>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(graph_output, SGMATCH_DETAIL_G, std::size_t()), value_ref<N>>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(needs_gradients, SGMATCH_DETAIL_G), bool>,
        std::is_convertible_v<SGMATCH_DETAIL_RET(attr, SGMATCH_DETAIL_G, SGMATCH_DETAIL_N, std::string_view()),
                              std::optional<attribute>>,
    };
    for (int i = 0; i < static_cast<int>(sizeof(ok)); ++i)
        if (!ok[i]) return 22 + i;
    return 0;
}
#undef SGMATCH_DETAIL_N
#undef SGMATCH_DETAIL_G
#undef SGMATCH_DETAIL_RET

template <class Tr, class = void>
struct says_checked_by_construction : std::false_type {};
template <class Tr>
struct says_checked_by_construction<Tr, std::void_t<decltype(Tr::checked_by_construction)>>
    : std::bool_constant<static_cast<bool>(Tr::checked_by_construction)> {};

/// Whether graph_traits<G> declares the graph checked by construction (see above).
template <class G>
constexpr bool checked_by_construction_v = says_checked_by_construction<graph_traits<G>>::value;

template <class G, class = void>
struct has_op_codes : std::false_type {};
template <class G>
struct has_op_codes<G, std::void_t<decltype(graph_traits<G>::op_codes(std::declval<const G&>()))>>
    : std::is_convertible<decltype(graph_traits<G>::op_codes(std::declval<const G&>())), const std::uint32_t*> {};
/// Whether graph_traits<G> offers op_codes (see above).
template <class G>
constexpr bool has_op_codes_v = has_op_codes<G>::value;

// Index of the first requirement the traits miss (0 = none). Used so that exactly one
// static_assert fires, naming that requirement.
template <class G>
constexpr int first_missing_requirement() {
    using Tr = graph_traits<G>;
    if constexpr (is_unspecialized<Tr>::value) {
        return 1;
    } else if constexpr (!has_node_type<Tr>::value) {
        return 2;
    } else {
        constexpr bool have[] = {
            has_nodes<Tr, G>::value,          has_node_count<Tr, G>::value,
            has_index_bound<Tr, G>::value,    has_index<Tr, G>::value,
            has_name<Tr, G>::value,           has_kind<Tr, G>::value,
            has_op<Tr, G>::value,             has_op_count<Tr, G>::value,
            has_op_name<Tr, G>::value,        has_find_op<Tr, G>::value,
            has_input_count<Tr, G>::value,    has_input<Tr, G>::value,
            has_output_count<Tr, G>::value,   has_user_count<Tr, G>::value,
            has_user<Tr, G>::value,           has_graph_output_count<Tr, G>::value,
            has_graph_output<Tr, G>::value,   has_needs_gradients<Tr, G>::value,
            has_attr<Tr, G>::value,
        };
        for (int i = 0; i < static_cast<int>(sizeof(have)); ++i)
            if (!have[i]) return 3 + i;
        // Return types only once every function is there (what is missing is named first).
        constexpr bool all = [&] {
            for (bool h : have)
                if (!h) return false;
            return true;
        }();
        if constexpr (all)
            return first_wrong_return<Tr, G>();
        else
            return 0;  // not reached: the loop above returned
    }
}

}  // namespace detail

/// True when graph_traits<G> provides the whole minimal complete definition.
template <class G>
constexpr bool is_graph_v = detail::first_missing_requirement<G>() == 0;

/// True when graph_traits<G> also provides the write side.
template <class G>
constexpr bool is_writable_graph_v = [] {
    if constexpr (is_graph_v<G>)
        return detail::has_replace<graph_traits<G>, G>::value;
    else
        return false;
}();

/// True when graph_traits<G> also provides the writes the clean-up passes make (redirect,
/// erase, add_constant).
template <class G>
constexpr bool is_rewritable_graph_v = [] {
    if constexpr (is_graph_v<G>)
        return detail::has_redirect<graph_traits<G>, G>::value && detail::has_erase<graph_traits<G>, G>::value &&
               detail::has_add_constant<graph_traits<G>, G>::value;
    else
        return false;
}();

namespace detail {

// Fires exactly one static_assert naming the first missing requirement; returns whether the
// traits are complete so that the caller can branch to an inert path.
template <class G>
constexpr bool check_graph() {
    constexpr int m = first_missing_requirement<G>();
#define SGMATCH_DETAIL_REQ(i, text) \
    static_assert(m != i, "sgmatch: graph_traits<G> " text " -- see sgmatch/graph/adapter.hpp");
    SGMATCH_DETAIL_REQ(1, "is not specialized for this graph type")
    SGMATCH_DETAIL_REQ(2, "must define `using node_type = ...`")
    SGMATCH_DETAIL_REQ(3, "must define static nodes(g)")
    SGMATCH_DETAIL_REQ(4, "must define static node_count(g)")
    SGMATCH_DETAIL_REQ(5, "must define static index_bound(g)")
    SGMATCH_DETAIL_REQ(6, "must define static index(g, n)")
    SGMATCH_DETAIL_REQ(7, "must define static name(g, n)")
    SGMATCH_DETAIL_REQ(8, "must define static kind(g, n)")
    SGMATCH_DETAIL_REQ(9, "must define static op(g, n)")
    SGMATCH_DETAIL_REQ(10, "must define static op_count(g)")
    SGMATCH_DETAIL_REQ(11, "must define static op_name(g, n)")
    SGMATCH_DETAIL_REQ(12, "must define static find_op(g, std::string_view)")
    SGMATCH_DETAIL_REQ(13, "must define static input_count(g, n)")
    SGMATCH_DETAIL_REQ(14, "must define static input(g, n, i)")
    SGMATCH_DETAIL_REQ(15, "must define static output_count(g, n)")
    SGMATCH_DETAIL_REQ(16, "must define static user_count(g, n)")
    SGMATCH_DETAIL_REQ(17, "must define static user(g, n, i)")
    SGMATCH_DETAIL_REQ(18, "must define static graph_output_count(g)")
    SGMATCH_DETAIL_REQ(19, "must define static graph_output(g, i)")
    SGMATCH_DETAIL_REQ(20, "must define static needs_gradients(g)")
    SGMATCH_DETAIL_REQ(21, "must define static attr(g, n, std::string_view)")
    SGMATCH_DETAIL_REQ(22, "static nodes(g) must return a range of node_type (producers first)")
    SGMATCH_DETAIL_REQ(23, "static node_count(g) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(24, "static index_bound(g) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(25, "static index(g, n) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(26, "static name(g, n) must return a string (convertible to std::string_view)")
    SGMATCH_DETAIL_REQ(27, "static kind(g, n) must return sgmatch::node_kind")
    SGMATCH_DETAIL_REQ(28, "static op(g, n) must return an integer op id (std::uint32_t)")
    SGMATCH_DETAIL_REQ(29, "static op_count(g) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(30, "static op_name(g, n) must return a string (convertible to std::string_view)")
    SGMATCH_DETAIL_REQ(31, "static find_op(g, std::string_view) must return std::optional<std::uint32_t>")
    SGMATCH_DETAIL_REQ(32, "static input_count(g, n) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(33, "static input(g, n, i) must return sgmatch::value_ref<node_type>")
    SGMATCH_DETAIL_REQ(34, "static output_count(g, n) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(35, "static user_count(g, n) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(36, "static user(g, n, i) must return sgmatch::use<node_type>")
    SGMATCH_DETAIL_REQ(37, "static graph_output_count(g) must return an integer (std::size_t)")
    SGMATCH_DETAIL_REQ(38, "static graph_output(g, i) must return sgmatch::value_ref<node_type>")
    SGMATCH_DETAIL_REQ(39, "static needs_gradients(g) must return bool")
    SGMATCH_DETAIL_REQ(40, "static attr(g, n, std::string_view) must return std::optional<sgmatch::attribute>")
#undef SGMATCH_DETAIL_REQ
    return m == 0;
}

}  // namespace detail

/// Uniform access to the optional parts of the contract.
template <class G>
struct adapter {
    using traits = graph_traits<G>;
    using node_type = typename traits::node_type;

    static bool is_graph_output(const G& g, node_type n, std::uint32_t port) {
        if constexpr (detail::has_is_graph_output<traits, G>::value) {
            return traits::is_graph_output(g, n, port);
        } else {
            const std::size_t k = traits::graph_output_count(g);
            for (std::size_t i = 0; i < k; ++i) {
                auto v = traits::graph_output(g, i);
                if (v.node == n && v.port == port) return true;
            }
            return false;
        }
    }
    /// Whether any output of n is a graph output.
    static bool has_graph_output(const G& g, node_type n) {
        if constexpr (detail::has_has_graph_output<traits, G>::value) {
            return traits::has_graph_output(g, n);
        } else {
            const std::size_t outs = traits::output_count(g, n);
            for (std::uint32_t p = 0; p < outs; ++p)
                if (is_graph_output(g, n, p)) return true;
            return false;
        }
    }
    static std::optional<tensor_type> value_type(const G& g, node_type n, std::uint32_t port) {
        if constexpr (detail::has_value_type<traits, G>::value)
            return traits::value_type(g, n, port);
        else
            return std::nullopt;
    }
    static std::optional<const_tensor_view> constant(const G& g, node_type n) {
        if constexpr (detail::has_constant<traits, G>::value)
            return traits::constant(g, n);
        else
            return std::nullopt;
    }
    /// What keeps constant n's data alive and unchanged, where the adapter promises so; else null.
    static std::shared_ptr<const void> constant_owner(const G& g, node_type n) {
        if constexpr (detail::has_constant_owner<traits, G>::value)
            return traits::constant_owner(g, n);
        else
            return nullptr;
    }
    /// f(key, value) for every attribute of n when the adapter can list them; else for each of
    /// `keys` that n has (what a caller that copies a node needs to know it reads).
    template <class Keys, class F>
    static void for_each_attr(const G& g, node_type n, const Keys& keys, F f) {
        if constexpr (detail::has_for_each_attr<traits, G>::value) {
            (void)keys;
            traits::for_each_attr(g, n, [&](auto&& k, const attribute& a) { f(std::string_view(k), a); });
        } else {
            for (std::string_view k : keys)
                if (auto a = traits::attr(g, n, k)) f(k, *a);
        }
    }
};

SGMATCH_END_NAMESPACE
