// Streamed /files of client_impl (e2b/file_transfer.hpp): a read hands the
// response body to the caller's sink piece by piece as the transport reads it;
// a write streams the caller's source through the transport (http_request::
// body_stream), one chunk at a time. Neither holds the whole file.
#include "core/spawn_op.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/multipart_body.hpp"

#include <algorithm>

namespace asio = boost::asio;

namespace prism_e2b::wire {
namespace {

constexpr std::size_t min_chunk = 1024;
constexpr std::size_t max_chunk = 16u << 20;

std::optional<error> invalid_options(e2b::transfer_options const& o, char const* op)
{
    if (o.chunk_size < min_chunk || o.chunk_size > max_chunk)
        return error(errc::invalid_argument, "chunk_size " + std::to_string(o.chunk_size) + " is outside 1 KiB..16 MiB",
                     {op, 0, {}});
    return std::nullopt;
}

/// The caller's chunk_source as the transport's body_source: reads at most
/// chunk_size at a time into one buffer, reports progress, counts the peak, and
/// frames the bytes as one multipart part when `boundary` is set (envd < 0.5.7).
class source_body final : public body_source {
public:
    source_body(e2b::chunk_source src, e2b::transfer_options const& o, std::optional<std::string> boundary,
                std::string const& filename)
        : src_(std::move(src)), chunk_(o.chunk_size), progress_(o.on_progress)
    {
        if (boundary) {
            head_ = multipart_part_head(*boundary, filename);
            tail_ = multipart_tail(*boundary);
        }
    }

    std::uint64_t size() const noexcept override { return head_.size() + src_.size + tail_.size(); }

    result<void> rewind() override
    {
        if (phase_ != phase::head || sent_ > 0) {
            if (auto r = src_.rewind(); !r) return r;
        }
        phase_ = phase::head;
        sent_ = 0;
        return {};
    }

    result<std::string_view> next() override
    {
        switch (phase_) {
            case phase::head:
                phase_ = phase::data;
                if (!head_.empty()) return std::string_view(head_);
                [[fallthrough]];
            case phase::data: {
                buffer_.resize(chunk_);
                auto n = src_.read(std::span<char>(buffer_.data(), buffer_.size()));
                if (!n) return n.error();
                if (*n > buffer_.size()) return error(errc::invalid_argument, "the source overfilled its buffer");
                if (*n > 0) {
                    sent_ += *n;
                    peak_ = std::max(peak_, *n);
                    if (sent_ > src_.size)
                        return error(errc::invalid_argument, "the source yielded more than its size");
                    if (progress_) progress_(e2b::transfer_progress{sent_, src_.size});
                    return std::string_view(buffer_.data(), *n);
                }
                if (sent_ != src_.size)
                    return error(errc::invalid_argument, "the source ended after " + std::to_string(sent_) +
                                                             " of its " + std::to_string(src_.size) + " bytes");
                phase_ = phase::tail;
                if (!tail_.empty()) return std::string_view(tail_);
                [[fallthrough]];
            }
            case phase::tail:
                phase_ = phase::done;
                [[fallthrough]];
            case phase::done:
                break;
        }
        return std::string_view();
    }

    e2b::transfer_summary summary() const noexcept { return {sent_, peak_}; }

private:
    enum class phase { head, data, tail, done };
    e2b::chunk_source src_;
    std::size_t chunk_;
    e2b::progress_callback progress_;
    std::string head_, tail_;
    std::string buffer_;
    phase phase_ = phase::head;
    std::uint64_t sent_ = 0;
    std::size_t peak_ = 0;
};

}  // namespace

asio::awaitable<result<e2b::transfer_summary>> client_impl::read_file_stream(e2b::envd_target target, std::string path,
                                                                             e2b::chunk_sink sink,
                                                                             e2b::transfer_options options)
{
    if (auto bad = invalid_options(options, "read file")) co_return *bad;
    if (!sink) co_return error(errc::invalid_argument, "read file: no sink", {"read file", 0, {}});
    auto o = envd_origin(target);
    if (!o) co_return o.error();
    http_request req;
    req.method = "GET";
    req.target = files_target(path, options.user);
    req.headers = envd_headers(target, std::nullopt);
    auto slot = co_await envd_slots_->acquire();
    if (!slot) co_return slot.error();
    auto const c = call(true);
    auto opened = co_await stub_->open_stream(*o, std::move(req), c);
    if (!opened) co_return error(opened.error().code(), opened.error().message(), {"read file", 0, {}});
    auto s = std::move(*opened);
    auto const idle = opts_.raw.read_idle_timeout;
    if (s->status() != 200) {
        std::string err_body;  // a small JSON error body
        while (!s->done() && err_body.size() < 65536) {
            auto piece = co_await s->read_some(idle);
            if (!piece || piece->empty()) break;
            err_body += *piece;
        }
        co_return envd_http_error("read file", s->status(), err_body);
    }
    std::optional<std::uint64_t> total;
    if (auto const* cl = find_header(s->headers(), "Content-Length")) {
        try {
            total = std::stoull(*cl);
        } catch (std::exception const&) {
            co_return error(errc::protocol_error, "read file: bad Content-Length", {"read file", 200, {}});
        }
    }
    e2b::transfer_summary sum;
    while (!s->done()) {
        auto piece = co_await s->read_some(idle);
        if (!piece)
            co_return error(piece.error().code(), "read file: " + piece.error().message(), {"read file", 200, {}});
        if (piece->empty()) break;
        // The transport hands over what one read brought (the peak held); the sink gets at most chunk_size at a time.
        for (std::size_t at = 0; at < piece->size(); at += options.chunk_size) {
            auto const part = std::string_view(*piece).substr(at, options.chunk_size);
            if (auto r = sink(part); !r) co_return r.error();
            sum.bytes += part.size();
            if (options.on_progress) options.on_progress(e2b::transfer_progress{sum.bytes, total});
        }
        sum.peak_buffer = std::max(sum.peak_buffer, piece->size());
    }
    if (total && sum.bytes != *total)
        co_return error(
            errc::unknown_outcome,
            "read file: the body ended after " + std::to_string(sum.bytes) + " of " + std::to_string(*total) + " bytes",
            {"read file", 200, {}});
    co_return sum;
}

asio::awaitable<result<e2b::streamed_write>> client_impl::write_file_stream(e2b::envd_target target, std::string path,
                                                                            e2b::chunk_source source,
                                                                            e2b::transfer_options options)
{
    if (auto bad = invalid_options(options, "write file")) co_return *bad;
    if (!source.read || !source.rewind)
        co_return error(errc::invalid_argument, "write file: the source needs read and rewind", {"write file", 0, {}});
    http_request req;
    req.method = "POST";
    req.target = files_target(path, options.user);
    req.headers = envd_headers(target, std::nullopt);
    // octet-stream needs envd >= 0.5.7; older envd takes the bytes as one multipart part.
    std::optional<std::string> boundary;
    if (!target.envd_version.empty() && compare_versions(target.envd_version, "0.5.7") < 0)
        boundary = multipart_boundary({});
    req.headers.emplace_back("Content-Type",
                             boundary ? multipart_content_type(*boundary) : std::string("application/octet-stream"));
    auto body = std::make_shared<source_body>(std::move(source), options, boundary, path);
    req.body_stream = body;
    // No stream can be replayed after the server answered: a 429 is returned, not retried.
    auto c = call(false);
    c.retry.max_retries = 0;
    c.attempt_timeout = std::chrono::milliseconds(0);  // a large file takes long: each piece is bounded instead
    c.deadline = call_options::clock::time_point::max();
    auto r = co_await envd_http(target, std::move(req), c);
    if (!r) co_return r.error();
    auto entry = co_await uploaded_entry(std::move(target), std::move(*r));
    if (!entry) co_return entry.error();
    e2b::streamed_write out;
    out.transfer = body->summary();
    out.entry = std::move(*entry);
    co_return out;
}

void client_impl::do_read_file_stream(e2b::envd_target target, std::string path, e2b::chunk_sink sink,
                                      e2b::transfer_options options, completion_handler<e2b::transfer_summary> h)
{
    detail::spawn_op(get_executor(),
                     read_file_stream(std::move(target), std::move(path), std::move(sink), std::move(options)),
                     std::move(h));
}

void client_impl::do_write_file_stream(e2b::envd_target target, std::string path, e2b::chunk_source source,
                                       e2b::transfer_options options, completion_handler<e2b::streamed_write> h)
{
    detail::spawn_op(get_executor(),
                     write_file_stream(std::move(target), std::move(path), std::move(source), std::move(options)),
                     std::move(h));
}

}  // namespace prism_e2b::wire
