// Uses the installed library: limits validation, the redactor and the error type.
#include <prism_e2b/prism_e2b.hpp>

#include <iostream>

int main()
{
    prism_e2b::sandbox_limits limits;
    limits.max_concurrent_execs = 9;  // above the hard cap of 8
    auto r = limits.validate();
    if (r.has_value()) {
        std::cerr << "an out-of-range limit was accepted\n";
        return 1;
    }
    prism_e2b::secret_redactor::global().add("consumer-secret-123");
    prism_e2b::error e(prism_e2b::errc::unauthenticated, "key consumer-secret-123 refused");
    if (e.to_string().find("consumer-secret-123") != std::string::npos) {
        std::cerr << "secret leaked\n";
        return 1;
    }
    std::cout << "installed prism_e2b works: " << r.error().to_string() << "\n";
    return 0;
}
