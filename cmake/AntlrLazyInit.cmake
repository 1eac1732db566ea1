# cmake -DDIR=<grammar output> -P AntlrLazyInit.cmake
# ANTLR's generated lexer and parser deserialize their ATN in a static
# initializer, at every start of every program linked with them: about 1 ms
# of `ward run`'s start even when the run cache spares the front end. This
# moves that work into the constructors, behind a function-local static
# (thread-safe, once): the first lexer or parser built pays it, a program
# that builds none never does. Fails the build if the generated code does
# not have the expected shape (another ANTLR version).
foreach(_class WardLexer WardParser)
  set(_file ${DIR}/${_class}.cpp)
  file(READ ${_file} _text)
  set(_static "${_class}::Initializer ${_class}::_init;")
  if(_class STREQUAL "WardLexer")
    set(_ctor "${_class}::${_class}(CharStream *input) : Lexer(input) {\n")
  else()
    set(_ctor "${_class}::${_class}(TokenStream *input) : Parser(input) {\n")
  endif()
  string(FIND "${_text}" "${_static}" _at_static)
  string(FIND "${_text}" "${_ctor}" _at_ctor)
  if(_at_static EQUAL -1 OR _at_ctor EQUAL -1)
    message(FATAL_ERROR "AntlrLazyInit: ${_file} has no '${_static}' or no constructor "
                        "'${_ctor}': the ANTLR version changed; update cmake/AntlrLazyInit.cmake")
  endif()
  string(REPLACE "${_static}" "// ${_static} (moved into the constructor: cmake/AntlrLazyInit.cmake)" _text "${_text}")
  string(REPLACE "${_ctor}" "${_ctor}  static Initializer once;\n" _text "${_text}")
  file(WRITE ${_file} "${_text}")
endforeach()
