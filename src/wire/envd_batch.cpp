// client_impl's batch write (one multipart POST /files with a part per file, as
// the SDK's files.write([...])) and exists (Stat; not_found is "no").
#include "core/spawn_op.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/multipart_body.hpp"
#include "wire/protojson.hpp"

namespace asio = boost::asio;

namespace prism_e2b::wire {

asio::awaitable<result<std::vector<e2b::entry_info>>> client_impl::write_files(e2b::envd_target target,
                                                                               std::vector<e2b::file_write> files)
{
    if (files.empty()) co_return std::vector<e2b::entry_info>{};
    std::vector<std::string_view> contents;
    for (auto const& f : files) {
        if (f.path.empty()) co_return error(errc::invalid_argument, "write files: a file without a path");
        contents.emplace_back(f.data);
        contents.emplace_back(f.path);
    }
    std::string const boundary = multipart_boundary(contents);
    http_request req;
    req.method = "POST";
    req.target = "/files";  // each part names its file
    req.headers = envd_headers(target, std::nullopt);
    req.headers.emplace_back("Content-Type", multipart_content_type(boundary));
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (i > 0) req.body += multipart_part_gap();
        req.body += multipart_part_head(boundary, files[i].path);
        req.body += files[i].data;
    }
    req.body += multipart_tail(boundary);
    auto r = co_await envd_http(target, std::move(req), call(false));
    if (!r) co_return r.error();
    if (r->status != 200) co_return envd_http_error("write files", r->status, r->body);
    auto entries = protojson::parse_upload_response(r->body);
    if (!entries) co_return error(entries.error().code(), entries.error().message(), {"write files", r->status, {}});
    if (entries->size() != files.size())
        co_return error(errc::unknown_outcome,
                        "envd described " + std::to_string(entries->size()) + " of " + std::to_string(files.size()) +
                            " written files",
                        {"write files", r->status, {}});
    std::vector<e2b::entry_info> out;
    for (auto& e : *entries) out.push_back(co_await stat_or(target, std::move(e)));
    co_return out;
}

asio::awaitable<result<bool>> client_impl::exists(e2b::envd_target target, std::string path)
{
    auto r = co_await stat(std::move(target), std::move(path));
    if (r) co_return true;
    if (r.error() == errc::not_found) co_return false;
    co_return r.error();
}

void client_impl::do_write_files(e2b::envd_target target, std::vector<e2b::file_write> files,
                                 completion_handler<std::vector<e2b::entry_info>> h)
{
    detail::spawn_op(get_executor(), write_files(std::move(target), std::move(files)), std::move(h));
}

void client_impl::do_exists(e2b::envd_target target, std::string path, completion_handler<bool> h)
{
    detail::spawn_op(get_executor(), exists(std::move(target), std::move(path)), std::move(h));
}

}  // namespace prism_e2b::wire
