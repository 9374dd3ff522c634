// Not part of sluice: a stand-in for src/schema/validate.cpp without its `abort`
// member, so tools/forbidden_calls must report its exemption as unused (see
// tools/CMakeLists.txt).
void validate() {}
