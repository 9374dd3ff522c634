// Not part of sluice: a stand-in for src/core/schema_validate.cpp without its `abort`
// member, so tools/forbidden_calls must report its exemption as unused (see
// tools/CMakeLists.txt).
void validate() {}
