// sgmatch/onednn/threads.hpp - how many threads oneDNN's kernels use, decided by the caller.
//
//   sgmatch::onednn::max_threads();            // what a primitive created on this thread now would use
//   { sgmatch::onednn::thread_cap cap(1);      // this thread's oneDNN work runs on 1 thread
//     ... }                                    // until the cap goes out of scope
//   sgmatch::onednn::parallel_ranges(n, grain, f);  // f(begin, end) on the team oneDNN would use
//
// sgmatch never changes the process's threading behind a framework's back: it sets no
// environment variable and no process-wide setting. With oneDNN's OpenMP runtime (Debian's
// oneDNN 2.6 and the default of oneDNN 3.x builds) the number of threads is OpenMP's nthreads
// setting, which belongs to each calling thread: thread_cap sets it for the calling thread only
// (omp_set_num_threads, found in the OpenMP runtime oneDNN loaded) and puts the old value back;
// other threads, and this one after the cap, are unaffected. oneDNN fixes a primitive's thread
// count when the primitive is created and keys its primitive cache by it, so a primitive created
// under a cap runs on that many threads wherever it runs: cap the creation as well as the run
// (exec::executor::set_threads does both).
//
// What is not possible: handing oneDNN a framework's own thread pool needs a oneDNN built with
// the threadpool runtime (DNNL_CPU_RUNTIME=THREADPOOL, not Debian's); with TBB the cap would be a
// tbb::task_arena, which sgmatch does not link. Under either runtime a cap is refused
// (kernel_error naming the runtime); under the sequential runtime every cap is 1 already.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include <dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// The CPU threading runtime the oneDNN in use was built with.
inline const char* cpu_runtime() {
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    return "OpenMP";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_TBB
    return "TBB";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_SEQ
    return "sequential";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_THREADPOOL
    return "threadpool";
#else
    return "unknown";
#endif
}

namespace detail {

/// OpenMP's per-thread calls, from the runtime already in the process (the one oneDNN links).
struct omp_calls {
    int (*get_max_threads)() = nullptr;
    void (*set_num_threads)(int) = nullptr;
    static const omp_calls& get() {
        static const omp_calls c = [] {
            omp_calls r;
            r.get_max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
            r.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
            if (r.get_max_threads == nullptr || r.set_num_threads == nullptr) r = omp_calls{};
            return r;
        }();
        return c;
    }
};

}  // namespace detail

/// The threads a oneDNN primitive created on the calling thread now would use.
inline int max_threads() {
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    const auto& omp = detail::omp_calls::get();
    return omp.get_max_threads != nullptr ? omp.get_max_threads() : 1;
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_SEQ
    return 1;
#else
    return 0;  // not known to sgmatch under this runtime
#endif
}

/// While it lives, oneDNN work started on the calling thread uses at most n threads (n <= 0:
/// no cap). Not copyable; destroy it on the thread that made it.
class thread_cap {
public:
    explicit thread_cap(int n) {
        if (n <= 0) return;
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
        const auto& omp = detail::omp_calls::get();
        if (omp.set_num_threads == nullptr)
            throw kernel_error("sgmatch::onednn::thread_cap: oneDNN uses OpenMP, but no OpenMP runtime is in the process");
        saved_ = omp.get_max_threads();
        if (saved_ != n) omp.set_num_threads(n);
        else saved_ = 0;
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_SEQ
        (void)n;
#else
        throw kernel_error(std::string("sgmatch::onednn::thread_cap: oneDNN uses the ") + cpu_runtime() +
                           " runtime; sgmatch caps threads only under OpenMP");
#endif
    }
    ~thread_cap() {
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
        if (saved_ > 0) detail::omp_calls::get().set_num_threads(saved_);
#endif
    }
    thread_cap(const thread_cap&) = delete;
    thread_cap& operator=(const thread_cap&) = delete;

private:
    int saved_ = 0;
};

namespace detail {

/// OpenMP's parallel region as compilers emit it (GOMP_parallel, which libgomp and LLVM's
/// libomp both export), found in the runtime oneDNN loaded: a kernel of sgmatch's own then runs
/// on the team oneDNN's primitives use, without the program being built with -fopenmp.
struct omp_team_calls {
    void (*parallel)(void (*)(void*), void*, unsigned, unsigned) = nullptr;
    int (*thread_num)() = nullptr;
    int (*num_threads)() = nullptr;
    static const omp_team_calls& get() {
        static const omp_team_calls c = [] {
            omp_team_calls r;
            r.parallel = reinterpret_cast<void (*)(void (*)(void*), void*, unsigned, unsigned)>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
            r.thread_num = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
            r.num_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
            if (r.parallel == nullptr || r.thread_num == nullptr || r.num_threads == nullptr) r = omp_team_calls{};
            return r;
        }();
        return c;
    }
};

}  // namespace detail

/// f(begin, end) over [0, n) in contiguous ranges, one per thread of the team a oneDNN
/// primitive created on the calling thread now would use (max_threads(); a thread_cap holds),
/// each range at least `grain` long; on the calling thread alone when there is one thread, no
/// OpenMP runtime, or too little work. f must not throw.
template <class F>
void parallel_ranges(std::size_t n, std::size_t grain, F&& f) {
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    const auto& omp = detail::omp_team_calls::get();
    const std::size_t most = grain == 0 ? n : n / grain;
    const std::size_t team = std::min<std::size_t>(most, static_cast<std::size_t>(std::max(max_threads(), 1)));
    if (omp.parallel != nullptr && team > 1) {
        struct work {
            F* f;
            std::size_t n;
            const detail::omp_team_calls* omp;
        } w{&f, n, &omp};
        omp.parallel(
            [](void* p) {
                const auto& w = *static_cast<const work*>(p);
                const auto k = static_cast<std::size_t>(w.omp->num_threads()), i = static_cast<std::size_t>(w.omp->thread_num());
                const std::size_t b = w.n * i / k, e = w.n * (i + 1) / k;
                if (b < e) (*w.f)(b, e);
            },
            &w, static_cast<unsigned>(team), 0);
        return;
    }
#else
    (void)grain;
#endif
    f(std::size_t{0}, n);
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
