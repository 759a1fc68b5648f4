# The layer order of sgmatch's headers: a header includes only headers of its own directory or of
# a lower layer. Run by ctest (layers.order): cmake -DROOT=<repo>/include/sgmatch -P check_layers.cmake
#
#   detail < pattern < graph < ops < analysis < match < partition < onednn < reference < exec
#          < passes < onnx < testing < torch < sgmatch.hpp (the umbrella)
#
# The core (detail .. partition) knows nothing of oneDNN, the reference kernels or the executor;
# the executor sits on the kernels; the front ends, the testing aids and the hosts sit on top.
# Every violation is listed with the line that makes it; any makes the test fail.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "check_layers.cmake: -DROOT=<repo>/include/sgmatch is required")
endif()
set(layers detail pattern graph ops analysis match partition onednn reference exec passes onnx testing torch)
list(LENGTH layers umbrella_rank)  # sgmatch.hpp, at the top level: above every layer

function(rank_of path out)
  string(REGEX MATCH "^[^/]+/" dir "${path}")
  if(dir STREQUAL "")
    set(${out} ${umbrella_rank} PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "/$" "" dir "${dir}")
  list(FIND layers "${dir}" r)
  if(r EQUAL -1)
    message(SEND_ERROR "check_layers.cmake: ${path}: directory '${dir}' has no place in the layer order (add it to the list)")
  endif()
  set(${out} ${r} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE headers RELATIVE "${ROOT}" "${ROOT}/*.hpp" "${ROOT}/*.ipp")
list(SORT headers)
set(violations 0)
set(edges 0)
foreach(h IN LISTS headers)
  rank_of("${h}" from)
  file(STRINGS "${ROOT}/${h}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"sgmatch/[^\"]+\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"sgmatch/([^\"]+)\".*" "\\1" target "${line}")
    if(NOT EXISTS "${ROOT}/${target}")
      message(SEND_ERROR "${h}: includes sgmatch/${target}, which does not exist")
      math(EXPR violations "${violations} + 1")
      continue()
    endif()
    rank_of("${target}" to)
    math(EXPR edges "${edges} + 1")
    if(to GREATER from)
      list(GET layers ${from} from_name)
      list(GET layers ${to} to_name)
      message(SEND_ERROR "${h} (layer ${from_name}) includes sgmatch/${target} (layer ${to_name}, above it)")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()
list(LENGTH headers count)
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) against the layer order among ${count} headers")
endif()
message(STATUS "layer order: ${count} headers, ${edges} includes of sgmatch headers, none against the order")
