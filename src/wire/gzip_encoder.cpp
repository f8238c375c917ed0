#include "wire/gzip_encoder.hpp"

#include <system_error>
#include <zlib.h>

namespace prism_e2b::wire {

result<std::string> gzip_encode(std::string_view data)
{
    z_stream z{};
    // 16 + MAX_WBITS: the gzip wrapper; memLevel 8 is zlib's default.
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return error(std::make_error_code(std::errc::not_enough_memory), "cannot initialise zlib");
    std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    int const rc = deflate(&z, Z_FINISH);  // deflateBound guarantees one call suffices
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return error(std::make_error_code(std::errc::not_enough_memory), "gzip failed");
    return out;
}

}  // namespace prism_e2b::wire
