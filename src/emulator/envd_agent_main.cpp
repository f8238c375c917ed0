// prism-e2b-envd's entry point (envd_agent.hpp).
#include "emulator/envd_agent.hpp"

int main(int argc, char** argv) { return prism_e2b::local::detail::envd_agent_main(argc, argv); }
