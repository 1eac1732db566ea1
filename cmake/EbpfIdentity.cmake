# cmake -DINPUT=ward.bpf.o -DOUTPUT=ward_identity.h -P EbpfIdentity.cmake
# The BPF object's SHA-256 as a header, so that ward names its program
# cache entries by the programs' bytes without hashing them at every run.
file(SHA256 ${INPUT} _hash)
set(_text "// Generated from ward.bpf.o by cmake/EbpfIdentity.cmake.\n#pragma once\n#define WARD_EBPF_OBJECT_SHA256 \"${_hash}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} _old)
  if(_old STREQUAL _text)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${_text}")
