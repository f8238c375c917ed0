// A certificate chain generated at test time with the openssl CLI: a CA and
// leaves for "localhost" and "other.test" (DNS names), in a temporary directory
// removed with it.
#ifndef PRISM_E2B_TESTS_COMMON_TEST_PKI_HPP
#define PRISM_E2B_TESTS_COMMON_TEST_PKI_HPP

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <string>

namespace prism_e2b::test {

struct test_pki {
    std::filesystem::path dir;

    test_pki()
    {
        char tmpl[] = "/tmp/prism-e2b-tls-XXXXXX";
        dir = ::mkdtemp(tmpl);
        run("openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=prism-e2b test CA'"
            " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
        leaf("localhost");
        leaf("other.test");
    }
    ~test_pki()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    void run(std::string const& cmd) const
    {
        auto full = "cd " + dir.string() + " && " + cmd + " >/dev/null 2>&1";
        BOOST_TEST_REQUIRE(std::system(full.c_str()) == 0, cmd);
    }
    void leaf(std::string const& name) const
    {
        std::ofstream(dir / (name + ".ext"))
            << "subjectAltName=DNS:" << name << "\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n";
        run("openssl req -newkey rsa:2048 -nodes -keyout " + name + ".key -out " + name + ".csr -subj '/CN=" + name +
            "'");
        run("openssl x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -out " + name +
            ".pem -days 2 -extfile " + name + ".ext");
    }
    std::string file(std::string const& f) const { return (dir / f).string(); }
};

}  // namespace prism_e2b::test

#endif
