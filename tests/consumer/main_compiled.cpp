// Uses the installed package in separate compilation (sgmatch_add_compiled): this translation
// unit only declares the executor and the ready-made backend; the library the installed function
// built compiles them. A residual conv block runs fused and unfused, and both agree.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include <sgmatch/exec/graph_executor.hpp>
#include <sgmatch/graph/builders.hpp>
#include <sgmatch/onednn/register.hpp>
#include <sgmatch/sgmatch.hpp>

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#error "sgmatch_add_compiled's library gives its users SGMATCH_SEPARATE_COMPILATION"
#endif

int main() {
    using namespace sgmatch;
    graph g;
    build::layers L(g, /*params=*/true, /*data_seed=*/7);
    build::act x{g.add_input("data", tensor_type{dtype::f32, {1, 8, 10, 10}}), 1, 8, 10, 10};
    build::act y = L.relu("relu1", L.bn("bn1", L.conv("conv1", x, 8, 3, 1, 1)));
    y = L.relu("relu2", L.add("add", L.bn("bn2", L.conv("conv2", y, 8, 3, 1, 1)), x));
    g.mark_output(y.node);
    const exec::graph_executor<graph> unfused(g, exec::mode::reference);

    onednn::register_backend<graph>();
    std::size_t fused = 0;
    for (const auto& r : apply_backend(g, "onednn")) fused += r.accepted;
    const exec::graph_executor<graph> run(g, exec::mode::onednn);

    std::vector<float> data(800);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::sin(0.1f * static_cast<float>(i));
    const auto in = exec::value::view(data.data(), dtype::f32, {1, 8, 10, 10});
    const auto a = run.run({in}).at(0).to_floats(), b = unfused.run({in}).at(0).to_floats();
    float worst = a.size() == b.size() && !a.empty() ? 0.0f : INFINITY;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) worst = std::fmax(worst, std::fabs(a[i] - b[i]));
    const bool ok = fused == 2 && worst < 1e-4f;
    std::printf("consumer (separately compiled): %zu fused nodes, max |fused - unfused| %g: %s\n", fused, worst, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
