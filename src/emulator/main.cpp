// prism-e2b-local: run the E2B-compatible local server.
//
//   prism-e2b-local [--listen 127.0.0.1:PORT] [--state-dir DIR] [--api-key-file F]
//                   [--admin-token T] [--engine E] [--no-isolation] [--threads N]
//
// The API key comes from E2B_API_KEY or --api-key-file (argv is visible to every
// user in `ps`); --api-key still works, but its value is wiped from argv at startup
// (as is --admin-token's), so /proc/<pid>/cmdline no longer shows it. When none is
// given one is generated and printed, since the caller has no other way to learn
// it. The admin token (also from PRISM_E2B_ADMIN_TOKEN) is never printed. The first stdout line is
// `E2B_API_URL=...`, the second `E2B_SANDBOX_URL=...`; stdout is flushed.
#include <prism_e2b/local_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <openssl/rand.h>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

void usage(std::ostream& os)
{
    os << "usage: prism-e2b-local [--listen HOST:PORT] [--state-dir DIR] [--api-key-file FILE]\n"
          "                       [--admin-token TOKEN] [--engine E] [--no-isolation] [--disk-mb N]\n"
          "                       [--threads N] [--tls-cert FILE --tls-key FILE]\n"
          "                       [--header-timeout S] [--idle-timeout S]\n"
          "                       [--memory-image WHEN] [--frozen-memory-cap MIB]\n"
          "  --listen        address to bind (default 127.0.0.1:0, an ephemeral port)\n"
          "  --state-dir     where sandboxes' files live (default: a temporary directory, removed on exit)\n"
          "  --api-key-file  file holding the X-API-KEY clients must send (one line). Default: $E2B_API_KEY,\n"
          "                  else one is generated and printed\n"
          "  --api-key KEY   the key itself. Discouraged: argv is readable by every user; the server\n"
          "                  wipes the value from its argv at startup, but it is visible until then\n"
          "  --admin-token   enables the fault-injection routes under /admin (default: $PRISM_E2B_ADMIN_TOKEN;\n"
          "                  wiped from argv like --api-key)\n"
          "  --engine        namespaces | gvisor | mount-namespace | none (default: namespaces; when it cannot\n"
          "                  run the server does not start: a weaker engine only when named. gvisor: runsc\n"
          "                  on the ptrace platform, no network)\n"
          "  --no-isolation  the same as --engine none\n"
          "  --disk-mb       disk quota of a sandbox whose template sets no diskSizeMB, in MiB (default 1024;\n"
          "                  0: none). Needs root, loop devices and mkfs.ext4; without them none is enforced\n"
          "  --tls-cert F    serve TLS with this PEM certificate chain (with --tls-key); ALPN h2 / http/1.1\n"
          "  --tls-key F     the certificate's PEM private key\n"
          "  --header-timeout S  seconds from a request's first byte to the end of its head, and for a new\n"
          "                  connection's first byte (default 10)\n"
          "  --idle-timeout S    seconds a keep-alive connection may wait for its next request (default 60).\n"
          "                  Out of descriptors, the connections idle longest are closed first\n"
          "  --memory-image WHEN  gvisor engine, pause with memory: the pause answers once the sandbox is\n"
          "                  frozen in RAM; its memory image goes to disk (and the RAM is released) WHEN:\n"
          "                  N seconds after the pause (default 10; 0: at once, behind the answer), `pressure`\n"
          "                  (only past --frozen-memory-cap; a host reboot loses what is in RAM) or `sync`\n"
          "                  (before the pause answers: no RAM tier, seconds per GiB)\n"
          "  --frozen-memory-cap MIB  RAM the frozen sandboxes may hold together (default 4096); past it the\n"
          "                  longest-frozen go to disk first\n"
          "  HTTP/2 is always served: h2 by ALPN under TLS, h2c with prior knowledge on plain TCP.\n";
}

std::string generated_key()
{
    unsigned char buf[20];
    if (RAND_bytes(buf, sizeof buf) != 1) std::abort();
    static constexpr char hexd[] = "0123456789abcdef";
    std::string out = "e2b_";
    for (auto b : buf) {
        out.push_back(hexd[b >> 4]);
        out.push_back(hexd[b & 15]);
    }
    return out;
}

/// `v` as a whole decimal number from `min` to `max`; nullopt when it is not one.
std::optional<unsigned long long> whole_number(std::string const& v, unsigned long long min, unsigned long long max)
{
    char* end = nullptr;
    unsigned long long const n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < min || n > max) return std::nullopt;
    return n;
}

/// The first line of `path`, without its line end; exits with a message when unreadable or empty.
std::string read_secret_file(std::string const& path)
{
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) {
        std::cerr << "prism-e2b-local: cannot read " << path << "\n";
        std::exit(2);
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) {
        std::cerr << "prism-e2b-local: " << path << " holds no key\n";
        std::exit(2);
    }
    return line;
}

/// Overwrites a secret's bytes in the process's argument area (what /proc/<pid>/cmdline and ps read).
void wipe_arg(char* arg) { std::memset(arg, 0, std::strlen(arg)); }

}  // namespace

int main(int argc, char** argv)
{
    prism_e2b::local::server_options opts;
    unsigned threads = std::max(2u, std::thread::hardware_concurrency());
    std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        auto const& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) {
                std::cerr << "prism-e2b-local: " << a << " needs a value\n";
                std::exit(2);
            }
            return args[++i];
        };
        if (a == "--listen") {
            std::string v = value();
            auto const colon = v.rfind(':');
            if (colon == std::string::npos) {
                std::cerr << "prism-e2b-local: --listen wants HOST:PORT\n";
                return 2;
            }
            std::string host = v.substr(0, colon);
            if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
            opts.listen_address = host.empty() ? "127.0.0.1" : host;
            char* end = nullptr;
            long const port = std::strtol(v.c_str() + colon + 1, &end, 10);
            if (*end != '\0' || port < 0 || port > 65535) {
                std::cerr << "prism-e2b-local: bad port in --listen\n";
                return 2;
            }
            opts.port = static_cast<std::uint16_t>(port);
        } else if (a == "--state-dir") {
            opts.state_dir = value();
        } else if (a == "--api-key") {
            opts.api_key = value();
            wipe_arg(argv[i + 1]);  // args[i] (the value, copied) is argv[i + 1]
        } else if (a == "--api-key-file") {
            opts.api_key = read_secret_file(value());
        } else if (a == "--admin-token") {
            opts.admin_token = value();
            wipe_arg(argv[i + 1]);
        } else if (a == "--tls-cert") {
            opts.tls_cert_file = value();
        } else if (a == "--tls-key") {
            opts.tls_key_file = value();
        } else if (a == "--no-isolation") {
            opts.isolate = false;
        } else if (a == "--engine") {
            opts.engine = value();
        } else if (a == "--disk-mb") {
            auto const mb = whole_number(value(), 0, 1u << 30);
            if (!mb) {
                std::cerr << "prism-e2b-local: --disk-mb wants a size in MiB (0: no quota)\n";
                return 2;
            }
            opts.sandbox_disk_mb = static_cast<std::uint32_t>(*mb);
        } else if (a == "--header-timeout" || a == "--idle-timeout") {
            auto const s = whole_number(value(), 1, 86400);
            if (!s) {
                std::cerr << "prism-e2b-local: " << a << " wants seconds, 1 to 86400\n";
                return 2;
            }
            (a == "--header-timeout" ? opts.header_timeout : opts.idle_timeout) =
                std::chrono::seconds(static_cast<long long>(*s));
        } else if (a == "--memory-image") {
            std::string const v = value();
            auto& tiers = opts.memory_tiers;
            if (v == "sync") {
                tiers.sync = true;
            } else if (v == "pressure") {
                tiers.image_after.reset();
            } else if (auto const s = whole_number(v, 0, 86400)) {
                tiers.image_after = std::chrono::seconds(static_cast<long long>(*s));
            } else {
                std::cerr << "prism-e2b-local: --memory-image wants seconds (0 to 86400), pressure or sync\n";
                return 2;
            }
        } else if (a == "--frozen-memory-cap") {
            auto const mb = whole_number(value(), 0, 1ull << 40);
            if (!mb) {
                std::cerr << "prism-e2b-local: --frozen-memory-cap wants a size in MiB\n";
                return 2;
            }
            opts.memory_tiers.frozen_memory_cap_mb = *mb;
        } else if (a == "--threads") {
            threads = static_cast<unsigned>(std::max(1, std::atoi(value().c_str())));
        } else if (a == "--help" || a == "-h") {
            usage(std::cout);
            return 0;
        } else {
            std::cerr << "prism-e2b-local: unknown argument " << a << "\n";
            usage(std::cerr);
            return 2;
        }
    }
    bool generated = false;
    if (opts.api_key.empty()) {
        if (char const* k = std::getenv("E2B_API_KEY"); k && *k) opts.api_key = k;
    }
    if (opts.api_key.empty()) {
        opts.api_key = generated_key();
        generated = true;
    }
    if (opts.admin_token.empty())
        if (char const* t = std::getenv("PRISM_E2B_ADMIN_TOKEN"); t && *t) opts.admin_token = t;
    opts.logger = [](prism_e2b::log_level lvl, std::string_view line) {
        if (lvl >= prism_e2b::log_level::info) std::cerr << line << std::endl;
    };
    std::signal(SIGPIPE, SIG_IGN);

    boost::asio::io_context ioc(static_cast<int>(threads));
    prism_e2b::local::server srv(ioc.get_executor(), opts);
    if (auto r = srv.start(); !r) {
        std::cerr << "prism-e2b-local: " << r.error().to_string() << "\n";
        return 1;
    }
    std::cout << "E2B_API_URL=" << srv.api_url() << "\n"
              << "E2B_SANDBOX_URL=" << srv.sandbox_url() << "\n";
    if (generated)
        std::cout << "E2B_API_KEY=" << opts.api_key
                  << "   # generated for this run; pass --api-key or set E2B_API_KEY to choose one\n";
    std::cout << "# isolation: " << srv.isolation() << std::endl;

    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (ec) return;
        std::cerr << "prism-e2b-local: stopping" << std::endl;
        srv.stop();
        ioc.stop();
    });
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back([&] { ioc.run(); });
    ioc.run();
    for (auto& t : pool) t.join();
    srv.stop();
    return 0;
}
