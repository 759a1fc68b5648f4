# Fails unless README.md contains examples/readme_example.cpp verbatim inside a ```cpp block.
file(READ ${README} readme)
file(READ ${EXAMPLE} example)
string(FIND "${readme}" "```cpp\n${example}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not quote examples/readme_example.cpp verbatim; update the README")
endif()
