// sgmatch/ops/recurrent.hpp - descriptions of the recurrent layers: RNN, GRU and LSTM, as ONNX
// defines them (opsets 1 to 14).
//
// Inputs: X [seq, batch, input] ([batch, seq, input] with layout 1); W [dirs, G*hidden, input];
// R [dirs, G*hidden, hidden]; then optional B [dirs, 2*G*hidden] (the input biases, then the
// recurrent ones), sequence_lens [batch] (integers), initial_h [dirs, batch, hidden] ([batch,
// dirs, hidden] with layout 1) and, for LSTM, initial_c (as initial_h) and the peepholes P
// [dirs, 3*hidden]. G is 1 (RNN), 3 (GRU: gates z, r, h) or 4 (LSTM: gates i, o, f, c); dirs is
// 2 for `direction` bidirectional, else 1. An optional input of zero elements is absent (what
// the ONNX front end writes for an empty name between given ones).
//
// Outputs: Y [seq, dirs, batch, hidden] ([batch, seq, dirs, hidden] with layout 1), Y_h (the
// last hidden state, initial_h's shape) and, for LSTM, Y_c (the last cell state).
//
// The kernels implement the default activations (RNN: Tanh; GRU: Sigmoid, Tanh; LSTM: Sigmoid,
// Tanh, Tanh): a node that names others (`activations`, `activation_alpha`, `activation_beta`)
// is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// The gates of a recurrent op (the rows of W and R per direction, in units of hidden_size).
inline std::int64_t recurrent_gates(const op_schema& s) {
    if (s.name() == "LSTM") return 4;
    if (s.name() == "GRU") return 3;
    return 1;
}

/// An optional input that is given with data: present and not of zero elements.
inline bool given(const shape_inputs& in, std::size_t slot) {
    if (slot >= in.shapes.size()) return false;
    for (const auto d : in.shapes[slot])
        if (d == 0) return false;
    return true;
}

/// The sizes a recurrent node's inputs agree on, each checked.
struct recurrent_sizes {
    std::int64_t seq, batch, input, hidden, dirs, gates;
    bool batch_first;
};
inline recurrent_sizes recurrent_sizes_of(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const dims& w = in.shapes.at(1);
    const dims& r = in.shapes.at(2);
    if (x.size() != 3) fail(a, "X " + to_string(x) + " is not [seq, batch, input] (rank 3)");
    recurrent_sizes s{};
    s.batch_first = a.i("layout") == 1;
    s.seq = s.batch_first ? x[1] : x[0];
    s.batch = s.batch_first ? x[0] : x[1];
    s.input = x[2];
    s.dirs = a.s("direction") == "bidirectional" ? 2 : 1;
    s.gates = recurrent_gates(a.schema());
    if (w.size() != 3 || w[0] != s.dirs || w[1] % s.gates != 0 || w[2] != s.input)
        fail(a, "W " + to_string(w) + " is not [" + std::to_string(s.dirs) + ", " + std::to_string(s.gates) + "*hidden, " +
                    std::to_string(s.input) + "]");
    s.hidden = w[1] / s.gates;
    if (a.has("hidden_size") && a.i("hidden_size") != s.hidden)
        fail(a, "hidden_size " + std::to_string(a.i("hidden_size")) + " disagrees with W " + to_string(w));
    const dims want_r{s.dirs, s.gates * s.hidden, s.hidden};
    if (r != want_r) fail(a, "R " + to_string(r) + " is not " + to_string(want_r));
    const dims state = s.batch_first ? dims{s.batch, s.dirs, s.hidden} : dims{s.dirs, s.batch, s.hidden};
    auto check = [&](std::size_t slot, const char* name, const dims& want) {
        if (given(in, slot) && in.shapes[slot] != want) fail(a, std::string(name) + " " + to_string(in.shapes[slot]) + " is not " + to_string(want));
    };
    check(3, "B", {s.dirs, 2 * s.gates * s.hidden});
    check(4, "sequence_lens", {s.batch});
    check(5, "initial_h", state);
    if (s.gates == 4) {
        check(6, "initial_c", state);
        check(7, "P", {s.dirs, 3 * s.hidden});
    }
    return s;
}

/// Y, Y_h and (LSTM) Y_c.
inline std::vector<dims> recurrent(const shape_inputs& in, const op_attrs& a) {
    const recurrent_sizes s = recurrent_sizes_of(in, a);
    const dims y = s.batch_first ? dims{s.batch, s.seq, s.dirs, s.hidden} : dims{s.seq, s.dirs, s.batch, s.hidden};
    const dims state = s.batch_first ? dims{s.batch, s.dirs, s.hidden} : dims{s.dirs, s.batch, s.hidden};
    if (s.gates == 4) return {y, state, state};
    return {y, state};
}

}  // namespace rules

namespace schemas {

// What RNN, GRU and LSTM share.
namespace recurrent_attr {
inline constexpr attr_support defaults_only = support::none("only the default activations are implemented");
inline constexpr attr_spec activations{"activations", attr_type::string, def::absent(), defaults_only};
inline constexpr attr_spec alpha{"activation_alpha", attr_type::reals, def::absent(), defaults_only};
inline constexpr attr_spec beta{"activation_beta", attr_type::reals, def::absent(), defaults_only};
/// Bounds every activation's input to [-clip, clip].
inline constexpr attr_spec clip{"clip", attr_type::real, def::absent(), support::at_least(0)};
inline constexpr attr_spec direction{"direction", attr_type::string, def::text("forward"), support::one_of("forward|reverse|bidirectional")};
inline constexpr attr_spec hidden_size{"hidden_size", attr_type::integer, def::absent(), support::at_least(1)};
inline constexpr attr_spec layout{"layout", attr_type::integer, def::value(0), support::range(0, 1)};
/// Opset 1: whether Y is computed; it is whenever the node has it.
inline constexpr attr_spec output_sequence{"output_sequence", attr_type::integer, def::value(0), support::range(0, 1)};
}  // namespace recurrent_attr

inline constexpr attr_spec rnn_attrs[] = {recurrent_attr::activations, recurrent_attr::alpha,  recurrent_attr::beta,
                                          recurrent_attr::clip,        recurrent_attr::direction, recurrent_attr::hidden_size,
                                          recurrent_attr::layout,      recurrent_attr::output_sequence};
inline constexpr attr_spec gru_attrs[] = {recurrent_attr::activations, recurrent_attr::alpha,  recurrent_attr::beta,
                                          recurrent_attr::clip,        recurrent_attr::direction, recurrent_attr::hidden_size,
                                          recurrent_attr::layout,      recurrent_attr::output_sequence,
                                          {"linear_before_reset", attr_type::integer, def::value(0), support::range(0, 1)}};
/// input_forget 1: the forget gate is 1 - the input gate.
inline constexpr attr_spec lstm_attrs[] = {recurrent_attr::activations, recurrent_attr::alpha,  recurrent_attr::beta,
                                           recurrent_attr::clip,        recurrent_attr::direction, recurrent_attr::hidden_size,
                                           recurrent_attr::layout,      recurrent_attr::output_sequence,
                                           {"input_forget", attr_type::integer, def::value(0), support::range(0, 1)}};

inline constexpr input_spec rnn_inputs[] = {{"X"},
                                            {"W"},
                                            {"R"},
                                            {"B", input_spec::presence::optional},
                                            {"sequence_lens", input_spec::presence::optional, true},
                                            {"initial_h", input_spec::presence::optional}};
inline constexpr input_spec lstm_inputs[] = {{"X"},
                                             {"W"},
                                             {"R"},
                                             {"B", input_spec::presence::optional},
                                             {"sequence_lens", input_spec::presence::optional, true},
                                             {"initial_h", input_spec::presence::optional},
                                             {"initial_c", input_spec::presence::optional},
                                             {"P", input_spec::presence::optional}};
inline constexpr std::uint16_t recurrent_types = types::f32 | types::bit(dtype::f64);
/// RNN: Y and Y_h.
inline constexpr op_schema rnn = typed(describe<RNN>(rnn_inputs, rnn_attrs, {}, 2), recurrent_types);
/// GRU: Y and Y_h.
inline constexpr op_schema gru = typed(describe<GRU>(rnn_inputs, gru_attrs, {}, 2), recurrent_types);
/// LSTM: Y, Y_h and Y_c.
inline constexpr op_schema lstm = typed(describe<LSTM>(lstm_inputs, lstm_attrs, {}, 3), recurrent_types);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<RNN> = &schemas::rnn;
template <> inline constexpr shape_rule shape_rule_for<RNN> = rules::recurrent;
template <> inline constexpr const op_schema* description<GRU> = &schemas::gru;
template <> inline constexpr shape_rule shape_rule_for<GRU> = rules::recurrent;
template <> inline constexpr const op_schema* description<LSTM> = &schemas::lstm;
template <> inline constexpr shape_rule shape_rule_for<LSTM> = rules::recurrent;

}  // namespace ops
SGMATCH_END_NAMESPACE
