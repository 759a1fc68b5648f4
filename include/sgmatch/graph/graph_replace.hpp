// sgmatch/graph/graph_replace.hpp - the built-in graph's rewrites: redirect and erase (the
// clean-up passes' writes); prepare_replace reads a node set's boundary (and keeps what it
// learned for the replace that follows); replace_with checks and reserves everything, then
// commits the new node without a throw (the strong guarantee).
// Members of sgmatch::graph (graph/graph.hpp), defined here.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"

SGMATCH_BEGIN_NAMESPACE

inline void graph::redirect(value from, value to) {
    check_value("redirect", 0, from);
    check_value("redirect", 1, to);
    if (from == to) return;
    if (reaches(from.node, to.node))
        throw graph_error("sgmatch::graph::redirect: '" + std::string(name_of(to.node)) + "' depends on '" +
                          std::string(name_of(from.node)) + "': redirecting its uses there would make a cycle");
    std::size_t moved = 0;
    for (const auto& u : users(from.node)) moved += u.port == from.port;
    reserve_uses(to.node, recs_[to.node.value].user_count + moved);
    scratch_.uses.clear();
    scratch_.uses.reserve(moved);
    for (const auto& u : users(from.node))
        if (u.port == from.port) scratch_.uses.push_back(u);
    // ---- commit: nothing below throws ----
    ++writes_;
    scratch_.prepared = false;
    bool later = false;  // a user placed before `to`: the order is recomputed on the next read
    for (const auto& u : scratch_.uses) {
        ins_[recs_[u.user.value].in_begin + u.slot] = to;
        add_use(to.node, use<node_id>{u.user, u.slot, to.port});
        later = later || order_ == order_state::dirty || key_[u.user.value] < key_[to.node.value];
    }
    prune_uses(from.node, [&](const use<node_id>& u) { return u.port == from.port; });
    bool still_output = false;
    for (auto& o : graph_outputs_) {
        if (o == from) {
            o = to;
            recs_[to.node.value].flags |= rec::output_flag;
        }
        still_output = still_output || o.node == from.node;
    }
    if (!still_output) recs_[from.node.value].flags &= static_cast<std::uint8_t>(~rec::output_flag);
    if (later) order_ = order_state::dirty;
}

inline void graph::erase(node_id n) {
    check_node(n, "erase");
    if (recs_[n.value].user_count != 0 || recs_[n.value].is_output())
        throw graph_error("sgmatch::graph::erase: '" + std::string(name_of(n)) + "' is still read (" +
                          std::to_string(recs_[n.value].user_count) + " users" +
                          (recs_[n.value].is_output() ? ", a graph output)" : ")"));
    // ---- commit: nothing below throws ----
    ++writes_;
    scratch_.prepared = false;
    const rec& r = recs_[n.value];
    for (std::uint32_t i = 0; i < r.in_count; ++i)
        prune_uses(ins_[r.in_begin + i].node, [n](const use<node_id>& u) { return u.user == n; });
    rec& m = recs_[n.value];
    m.flags &= static_cast<std::uint8_t>(~rec::alive_flag);
    free_uses(n);
    --live_;
    if (order_ != order_state::dirty) {
        order_list_[key_[n.value]] = tombstone;
        order_ = order_state::stale;
    }
}

inline void graph::prepare_replace(const node_id* nodes, std::size_t count, std::vector<value>& inputs,
                     std::vector<value>& outputs) {
    scratch& x = scratch_;
    x.prepared = false;
    x.set.assign(nodes, nodes + count);
    check_set([] { return std::string("sgmatch::graph::prepare_replace: "); });
    inputs.clear();
    outputs.clear();
    const member_marks marks(*this);
    // Inputs: each producer once by a flag on its record (a value read twice, or a second
    // port of a producer, is looked for among the inputs so far; for many inputs, by one
    // sort at the end instead).
    x.producers.clear();
    struct producer_marks {  // cleared on every way out
        graph& g;
        ~producer_marks() {
            for (auto pn : g.scratch_.producers)
                g.recs_[pn.value].flags &= static_cast<std::uint8_t>(~rec::producer_flag);
        }
    } const unmark_producers{*this};
    bool repeats = false;
    for (std::size_t i = 0; i < count; ++i) {
        const rec& m = recs_[nodes[i].value];
        const value* in = ins_.data() + m.in_begin;
        for (std::uint32_t k = 0; k < m.in_count; ++k) {
            const value v = in[k];
            rec& p = recs_[v.node.value];
            if (p.flags & rec::member_flag) continue;
            if (!(p.flags & rec::producer_flag)) {
                x.producers.push_back(v.node);
                p.flags |= rec::producer_flag;
                inputs.push_back(v);
            } else if (inputs.size() <= 32) {
                if (std::find(inputs.begin(), inputs.end(), v) == inputs.end()) inputs.push_back(v);
            } else {
                inputs.push_back(v);
                repeats = true;
            }
        }
    }
    if (repeats) detail::unique_in_order(inputs, value_key);
    // Outputs: one pass over each member's users tells whether another member reads it and
    // which of its ports (below 64: a mask) are read outside; graph outputs are looked up
    // only for members that produce one.
    auto escapes = [&](node_id n, std::uint64_t mask, std::uint32_t port) {
        if (port < 64) {
            if ((mask >> port) & 1) return true;
        } else {
            for (auto& u : users(n))
                if (u.port == port && !(recs_[u.user.value].flags & rec::member_flag)) return true;
        }
        return recs_[n.value].is_output() && is_graph_output(n, port);
    };
    x.read_inside.assign(count, 0);
    x.read_outside.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t mask = 0;
        for (auto& u : users(nodes[i])) {
            if (recs_[u.user.value].flags & rec::member_flag) x.read_inside[i] = 1;
            else if (u.port < 64) mask |= std::uint64_t(1) << u.port;
        }
        x.read_outside[i] = mask;
    }
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < count; ++i) {
            if ((x.read_inside[i] != 0) != (pass == 1)) continue;
            const std::uint32_t outs = recs_[nodes[i].value].outputs;
            for (std::uint32_t port = 0; port < outs; ++port)
                if (escapes(nodes[i], x.read_outside[i], port)) outputs.push_back(value{nodes[i], port});
        }
    // What the replace will need: the uses to redirect and graph outputs to move (every one
    // is a declared output by construction).
    classify_outside(outputs, [](const auto&) {
        throw graph_error("sgmatch::graph::prepare_replace: internal error, a use outside the set escaped");
    });
    x.prepared_inputs.assign(inputs.begin(), inputs.end());
    x.prepared_outputs.assign(outputs.begin(), outputs.end());
    x.prepared_nodes.assign(nodes, nodes + count);
    x.prepared_at = writes_;
    x.prepared = true;
}

template <class Where>
void graph::check_set(const Where& where) {
    std::vector<node_id>& set = scratch_.set;
    if (set.empty()) throw graph_error(where() + "no nodes to replace");
    sort_ids(set);
    if (std::adjacent_find(set.begin(), set.end()) != set.end()) throw graph_error(where() + "a node is listed twice");
    for (auto n : set)
        if (!contains(n)) throw graph_error(where() + "node " + std::to_string(n.value) + " is not in the graph");
}

template <class Missing>
void graph::classify_outside(const std::vector<value>& outs, const Missing& missing) {
    scratch& x = scratch_;
    // Which declared output a value is (the first if declared twice): a scan of a few, a
    // binary search of many.
    const bool many = outs.size() > 8;
    if (many) {
        x.outputs.clear();
        for (std::size_t i = 0; i < outs.size(); ++i) x.outputs.emplace_back(value_key(outs[i]), i);
        std::sort(x.outputs.begin(), x.outputs.end());
    }
    auto out_index = [&](value v) -> std::ptrdiff_t {
        if (many) {
            const auto it = std::lower_bound(x.outputs.begin(), x.outputs.end(),
                                             std::pair<std::uint64_t, std::size_t>(value_key(v), 0));
            return it != x.outputs.end() && it->first == value_key(v) ? static_cast<std::ptrdiff_t>(it->second) : -1;
        }
        for (std::size_t i = 0; i < outs.size(); ++i)
            if (outs[i] == v) return static_cast<std::ptrdiff_t>(i);
        return -1;
    };
    x.redirects.clear();
    bool produces_output = false;  // the graph outputs are scanned only when it matters
    for (auto n : x.set) {
        produces_output = produces_output || recs_[n.value].is_output();
        for (auto& u : users(n)) {
            if (member(u.user)) continue;
            auto k = out_index(value{n, u.port});
            if (k < 0) missing(u);
            x.redirects.push_back(use<node_id>{u.user, u.slot, static_cast<std::uint32_t>(k)});
        }
    }
    x.out_redirects.clear();
    for (std::size_t i = 0; produces_output && i < graph_outputs_.size(); ++i) {
        if (!member(graph_outputs_[i].node)) continue;
        auto k = out_index(graph_outputs_[i]);
        if (k < 0) missing(graph_outputs_[i]);
        x.out_redirects.emplace_back(i, static_cast<std::uint32_t>(k));
    }
}

inline node_id graph::replace_with(const replacement<node_id>& r, std::any& payload) {
    auto where = [&] { return "sgmatch::graph::replace('" + r.name + "'): "; };  // for errors only
    scratch& x = scratch_;
    // The boundary prepare_replace read, with no write since: its classification holds.
    // (Never an empty set: prepare_replace refuses one; a moved-from graph's lists are empty.)
    const bool prepared = x.prepared && x.prepared_at == writes_ && !r.nodes.empty() && r.nodes == x.prepared_nodes &&
                          r.inputs == x.prepared_inputs && r.outputs == x.prepared_outputs;
    x.prepared = false;
    if (!prepared) {
        x.set.assign(r.nodes.begin(), r.nodes.end());
        check_set(where);
    }
    const auto& set = x.set;
    const member_marks marks(*this);
    auto in_set = [this](node_id n) { return member(n); };
    if (!prepared) {
        for (std::size_t i = 0; i < r.inputs.size(); ++i) {
            check_value(r.name, i, r.inputs[i]);
            if (in_set(r.inputs[i].node))
                throw graph_error(where() + "input " + std::to_string(i) + " is produced by '" +
                                  std::string(name_of(r.inputs[i].node)) + "', a node being replaced");
        }
        for (std::size_t i = 0; i < r.outputs.size(); ++i) {
            const auto& v = r.outputs[i];
            if (!in_set(v.node) || v.port >= recs_[v.node.value].outputs)
                throw graph_error(where() + "output " + std::to_string(i) +
                                  " is not an output of a node being replaced");
        }
        // Every use of a replaced node from outside the set, and every graph output it
        // produces, must be one of the declared outputs; otherwise the write would dangle.
        classify_outside(r.outputs, [&](const auto& what) {
            if constexpr (std::is_same_v<std::decay_t<decltype(what)>, use<node_id>>) {
                const value used = ins_[recs_[what.user.value].in_begin + what.slot];
                throw graph_error(where() + "'" + std::string(name_of(what.user)) + "' uses output " +
                                  std::to_string(used.port) + " of '" + std::string(name_of(used.node)) +
                                  "', which is not an output of the replacement");
            } else {
                throw graph_error(where() + "graph output '" + std::string(name_of(what.node)) +
                                  "' is not an output of the replacement");
            }
        });
    }

    // Reserve everything, then commit with operations that cannot throw.
    const auto outputs = static_cast<std::uint32_t>(std::max<std::size_t>(1, r.outputs.size()));
    if (outputs > 0xffff) throw graph_error(where() + "more than 65535 outputs");
    // The inputs go into the members' own runs when those are one block large enough (no
    // room to reserve then), else at the end.
    const std::uint32_t in_at = reusable_inputs(set, r.inputs.size());
    reserve_node(r.name, in_at == none ? r.inputs.size() : 0, /*appended=*/false);
    room_for(payloads_, 1);
    // The inputs' producers lose their uses inside the set and gain the new node's: room
    // for what they will hold (moving a list inside the pool changes nothing observable).
    // Each producer once, with the number of inputs it feeds (sorted when there are many).
    // A prepared boundary needs none: its inputs are distinct values each read by a member,
    // so no producer gains more uses than it loses.
    if (!prepared) {
        x.producers.clear();
        for (auto& v : r.inputs) x.producers.push_back(v.node);
        sort_ids(x.producers);
        for (std::size_t i = 0; i < x.producers.size();) {
            const node_id p = x.producers[i];
            std::size_t add = 0;
            while (i < x.producers.size() && x.producers[i] == p) ++i, ++add;
            std::size_t keep = 0;
            for (auto& u : users(p)) keep += !in_set(u.user);
            reserve_uses(p, keep + add);
        }
        // A member may read a value from outside that the new node does not (the caller chose
        // other inputs): its producer loses those uses too, and gains none.
        for (auto n : set)
            for (const value& v : inputs(n))
                if (!in_set(v.node)) x.producers.push_back(v.node);
        sort_ids(x.producers);
        x.producers.erase(std::unique(x.producers.begin(), x.producers.end()), x.producers.end());
    }
    const std::size_t uses = x.redirects.size();  // the new node's own list, after the above
    if (uses >= 2) {
        if (uses_.size() + uses >= none) throw graph_error(where() + "more than 2^32 - 2 uses");
        room_for(uses_, uses);
    }
    const std::uint32_t op_id = intern_op(r.op_name.empty() ? std::string_view("sgmatch.fused")
                                                            : std::string_view(r.op_name));
    // Where the new node goes in the order: the slot of the last member when every outside
    // user comes after it, else the first member's when every input comes before it, else
    // the order is recomputed on the next read.
    std::uint32_t slot = none;
    if (order_ != order_state::dirty) {
        std::uint32_t lo = none, hi = 0;
        for (auto n : set) {
            lo = std::min(lo, key_[n.value]);
            hi = std::max(hi, key_[n.value]);
        }
        bool after = true, before = true;
        for (auto& u : x.redirects) after = after && key_[u.user.value] > hi;
        if (after) {
            slot = hi;
        } else {
            for (auto& v : r.inputs) before = before && key_[v.node.value] < lo;
            if (before) slot = lo;
        }
    }

    // The replaced values' types go to the new node's outputs (copied, and room made, here).
    std::vector<std::optional<tensor_type>> out_types;
    bool typed = false;
    out_types.reserve(r.outputs.size());
    for (const auto& v : r.outputs) {
        out_types.push_back(value_type(v.node, v.port));
        typed = typed || out_types.back().has_value();
    }
    if (typed) room_for(types_, outputs);  // geometric: an exact reserve moved every type on each replace

    // ---- commit: nothing below throws (all capacity reserved above) ----
    ++writes_;
    if (slot == none) {
        order_ = order_state::dirty;
    } else {
        for (auto n : set) order_list_[key_[n.value]] = tombstone;  // the new node takes one
        order_ = order_state::stale;
    }
    const node_id id = new_node_unchecked(node_kind::op, op_id, r.name, r.inputs.data(), r.inputs.size(),
                                          outputs, slot, in_at);
    if (uses >= 2) {
        use_at_[id.value] = use_range{static_cast<std::uint32_t>(uses_.size()), static_cast<std::uint32_t>(uses)};
        recs_[id.value].flags |= rec::ranged_flag;
        uses_.resize(uses_.size() + uses);
    }
    cold_[id.value].payload = static_cast<std::uint32_t>(payloads_.size());
    payloads_.push_back(std::move(payload));
    if (typed) {
        cold_[id.value].type_begin = static_cast<std::uint32_t>(types_.size());
        types_.resize(types_.size() + outputs);  // within the capacity reserved above
        for (std::size_t i = 0; i < out_types.size(); ++i)
            if (out_types[i]) types_[cold_[id.value].type_begin + i] = std::move(*out_types[i]);
    }
    for (auto p : x.producers) prune_uses(p, [&](const use<node_id>& u) { return in_set(u.user); });
    for (std::size_t i = 0; i < r.inputs.size(); ++i)
        add_use(r.inputs[i].node, use<node_id>{id, static_cast<std::uint32_t>(i), r.inputs[i].port});
    for (auto& u : x.redirects) {
        ins_[recs_[u.user.value].in_begin + u.slot] = value{id, u.port};
        add_use(id, use<node_id>{u.user, u.slot, u.port});
    }
    for (auto& [i, k] : x.out_redirects) {
        graph_outputs_[i] = value{id, k};
        recs_[id.value].flags |= rec::output_flag;
    }
    for (auto n : set) {
        rec& m = recs_[n.value];
        m.flags &= static_cast<std::uint8_t>(~rec::alive_flag);
        free_uses(n);
        m.user_count = 0;
        --live_;
    }
    return id;
}

SGMATCH_END_NAMESPACE
