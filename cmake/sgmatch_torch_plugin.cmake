# sgmatch_add_torch_plugin(<name>): a shared library that a Python program loads with
# torch.ops.load_library(path) to get the sgmatch operators (sgmatch/torch/library.hpp). It is
# built by the user's build from one source file installed with the headers, so that sgmatch
# itself stays header-only.
set(SGMATCH_TORCH_PLUGIN_SOURCE "${CMAKE_CURRENT_LIST_DIR}/sgmatch_torch_plugin.cpp")
function(sgmatch_add_torch_plugin name)
  add_library(${name} MODULE "${SGMATCH_TORCH_PLUGIN_SOURCE}")
  target_link_libraries(${name} PRIVATE sgmatch::torch)
  target_compile_features(${name} PRIVATE cxx_std_17)
  set_target_properties(${name} PROPERTIES PREFIX "lib")
endfunction()
