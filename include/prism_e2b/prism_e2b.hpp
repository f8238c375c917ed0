// Umbrella header: everything a first program needs.
#ifndef PRISM_E2B_PRISM_E2B_HPP
#define PRISM_E2B_PRISM_E2B_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/capabilities.hpp>
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b/coroutine_client.hpp>
#include <prism_e2b/e2b/watch.hpp>
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/exec_governor.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/log.hpp>
#include <prism_e2b/process.hpp>
#include <prism_e2b/process_recovery.hpp>
#include <prism_e2b/process_ref.hpp>
#include <prism_e2b/process_sessions.hpp>
#include <prism_e2b/redactor.hpp>
#include <prism_e2b/sandbox.hpp>
#include <prism_e2b/sandbox_files.hpp>
#include <prism_e2b/sandbox_pty.hpp>
#include <prism_e2b/version.hpp>

#endif
