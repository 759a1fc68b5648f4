// Uses the installed oneDNN part's link line: sgmatch's core plus a oneDNN primitive.
#include <cstdio>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>
#include <sgmatch/sgmatch.hpp>

int main() {
    using namespace dnnl;
    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    const memory::desc md({4}, memory::data_type::f32, memory::format_tag::a);
    std::vector<float> in = {-2.f, -1.f, 1.f, 2.f}, out(4, 0.f);
    memory src(md, eng, in.data()), dst(md, eng, out.data());
    const eltwise_forward::desc d(prop_kind::forward_inference, algorithm::eltwise_relu, md, 0.f);
    eltwise_forward(eltwise_forward::primitive_desc(d, eng)).execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    s.wait();
    const bool ok = out[0] == 0.f && out[1] == 0.f && out[2] == 1.f && out[3] == 2.f &&
                    sgmatch::is_pattern_v<decltype(sgmatch::op<sgmatch::ops::Relu>())>;
    std::printf("consumer (onednn): relu via oneDNN %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
