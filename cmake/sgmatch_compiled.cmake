# sgmatch_add_compiled(<name> [ONNX]): separate compilation, as a static library. It compiles once
# what a program's translation units would otherwise each compile: the executor with every kernel
# it binds, the ready-made oneDNN backend and the lowering of fused properties for the built-in
# graph, and with ONNX the ONNX front end; and it gives every target that links it
# SGMATCH_SEPARATE_COMPILATION, under which those headers only declare (sgmatch/detail/config.hpp).
#
#   find_package(sgmatch CONFIG REQUIRED COMPONENTS onednn reference onnx)
#   sgmatch_add_compiled(sgmatch_compiled ONNX)
#   target_link_libraries(app PRIVATE sgmatch_compiled)   # in place of the parts it links
#
# The library is built by the user's build from sources installed with the headers (sgmatch
# stays header-only). Every translation unit of a program must agree: link it to all of them, or
# to none. A graph type of your own: see SGMATCH_ONEDNN_EXTERN_LOWERING (onednn/property.hpp).
set(SGMATCH_COMPILED_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/compiled")
function(sgmatch_add_compiled name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "ONNX" "" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sgmatch_add_compiled(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS} (known: ONNX)")
  endif()
  foreach(part onednn reference)
    if(NOT TARGET sgmatch::${part})
      message(FATAL_ERROR "sgmatch_add_compiled(${name}) needs the ${part} part (find_package(sgmatch COMPONENTS onednn reference))")
    endif()
  endforeach()
  add_library(${name} STATIC "${SGMATCH_COMPILED_SOURCE_DIR}/sgmatch_compiled_exec.cpp"
                             "${SGMATCH_COMPILED_SOURCE_DIR}/sgmatch_compiled_onednn.cpp")
  target_link_libraries(${name} PUBLIC sgmatch::onednn sgmatch::reference)
  if(arg_ONNX)
    if(NOT TARGET sgmatch::onnx)
      message(FATAL_ERROR "sgmatch_add_compiled(${name} ONNX) needs the onnx part (find_package(sgmatch COMPONENTS onnx))")
    endif()
    target_sources(${name} PRIVATE "${SGMATCH_COMPILED_SOURCE_DIR}/sgmatch_compiled_onnx.cpp")
    target_link_libraries(${name} PUBLIC sgmatch::onnx)
  endif()
  target_compile_definitions(${name} PUBLIC SGMATCH_SEPARATE_COMPILATION)
  target_compile_features(${name} PUBLIC cxx_std_17)
  # A shared library or a plugin (a MODULE) may link it.
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
