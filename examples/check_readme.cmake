# Fails unless README.md contains EXAMPLE verbatim inside a ```cpp block.
file(READ ${README} readme)
file(READ ${EXAMPLE} example)
string(FIND "${readme}" "```cpp\n${example}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not quote ${EXAMPLE} verbatim; update the README")
endif()
