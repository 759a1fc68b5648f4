# cmake -DNM=nm -DLIGHT=a.o -DCOMPILED=b.o -P symbols.cmake
# The light object (register.cpp, built with SGMATCH_SEPARATE_COMPILATION) defines none of the
# ready-made backend's code; the compiled one (onednn/src.hpp) defines it: the check can fail.
set(backend_code "sgmatch::v0::onednn::(make_backend<|fused_conv::|lower_match<|detail::make_conv1x1_depthwise_property<)")
function(defined_backend_symbols object out)
  # grep reads nm's output (a CMake regex over a debug build's symbol list takes minutes).
  execute_process(COMMAND ${NM} -C --defined-only ${object} COMMAND grep -E "${backend_code}"
    OUTPUT_VARIABLE found RESULTS_VARIABLE rcs)
  list(GET rcs 0 rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(STRIP "${found}" found)
  string(REPLACE "\n" ";" found "${found}")
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
defined_backend_symbols(${LIGHT} light)
defined_backend_symbols(${COMPILED} compiled)
list(LENGTH light n_light)
list(LENGTH compiled n_compiled)
if(NOT n_light EQUAL 0)
  list(GET light 0 first)
  message(FATAL_ERROR "the light translation unit defines ${n_light} symbols of the backend, e.g. ${first}")
endif()
if(n_compiled EQUAL 0)
  message(FATAL_ERROR "the compiled translation unit defines no symbol of the backend: the check reads nothing")
endif()
message(STATUS "light: 0 symbols of the backend; compiled: ${n_compiled}")
