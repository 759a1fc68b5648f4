// The sgmatch plugin for PyTorch: torch.ops.load_library("libsgmatch_torch.so") registers the
// sgmatch operators (sgmatch/torch/library.hpp). Built by sgmatch_add_torch_plugin(name).
#include <sgmatch/torch/library.hpp>

SGMATCH_TORCH_LIBRARY()
