// prism-e2b volume create|list|info|delete (the /volumes API) and volume
// ls|stat|mkdir|read|write|rm|chown (its content API), as `e2b volume`. The content
// commands fetch the volume's token from the control plane: it never comes from
// argv and is never printed.
#include "cli/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

char const* type_name(e2b::volume_entry_type t)
{
    switch (t) {
        case e2b::volume_entry_type::file:
            return "file";
        case e2b::volume_entry_type::directory:
            return "directory";
        case e2b::volume_entry_type::symlink:
            return "symlink";
        default:
            return "unknown";
    }
}

json::object entry_json(e2b::volume_entry const& e)
{
    json::object o{{"name", e.name}, {"path", e.path}, {"type", type_name(e.type)}, {"size", e.size}, {"mode", e.mode},
                   {"uid", e.uid},   {"gid", e.gid},   {"mtime", e.mtime}};
    if (e.target) o["target"] = *e.target;
    return o;
}

void print_entry(e2b::volume_entry const& e)
{
    std::ostringstream mode;
    mode << std::oct << e.mode;
    std::cout << type_name(e.type) << "\t" << mode.str() << "\t" << e.uid << ":" << e.gid << "\t" << e.size << "\t"
              << e.mtime << "\t" << e.path << (e.target ? " -> " + *e.target : std::string()) << "\n";
}

/// The volume's content reference: its token from the control plane.
asio::awaitable<std::optional<e2b::volume_ref>> ref_of(e2b::client& c, std::string const& cmd, std::string id,
                                                       int& exit)
{
    auto v = co_await c.async_get_volume(std::move(id));
    if (!v) {
        exit = report(cmd, v.error());
        co_return std::nullopt;
    }
    co_return e2b::volume_ref{v->volume_id, v->token};
}

struct content_options {
    std::string volume, path, local;
    std::uint32_t depth = 1;
    bool parents = false;
    std::optional<std::uint32_t> uid, gid, mode;
    output_format format = output_format::text;
};

/// One content command (`what`) on the volume named in `o`.
asio::awaitable<int> content(std::shared_ptr<e2b::client> c, std::string what, content_options o)
{
    std::string const cmd = "volume " + what;
    int exit = exit_ok;
    auto ref = co_await ref_of(*c, cmd, o.volume, exit);
    if (!ref) co_return exit;
    e2b::volume_write_options wo;
    wo.metadata = {o.uid, o.gid, o.mode};
    wo.force = o.parents;
    if (what == "ls") {
        auto r = co_await c->async_volume_list(*ref, o.path, o.depth);
        if (!r) co_return report(cmd, r.error());
        json::array out;
        for (auto const& e : *r) {
            if (o.format == output_format::json)
                out.push_back(entry_json(e));
            else
                print_entry(e);
        }
        if (o.format == output_format::json) print_json(out);
        std::cout.flush();
        co_return exit_ok;
    }
    if (what == "read") {
        auto r = co_await c->async_volume_read_file(*ref, o.path);
        if (!r) co_return report(cmd, r.error());
        if (o.local.empty() || o.local == "-") {
            std::cout.write(r->data(), static_cast<std::streamsize>(r->size()));
            std::cout.flush();
        } else {
            std::ofstream file(o.local, std::ios::binary | std::ios::trunc);
            if (!file.write(r->data(), static_cast<std::streamsize>(r->size())) || !file.flush())
                co_return fail(exit_io, cmd + ": cannot write " + o.local);
        }
        co_return exit_ok;
    }
    if (what == "rm") {
        auto r = co_await c->async_volume_remove(*ref, o.path);
        co_return r ? exit_ok : report(cmd, r.error());
    }
    result<e2b::volume_entry> r = error(errc::invalid_argument, "unknown volume command");
    if (what == "stat") {
        r = co_await c->async_volume_stat(*ref, o.path);
    } else if (what == "mkdir") {
        r = co_await c->async_volume_make_dir(*ref, o.path, wo);
    } else if (what == "chown") {
        r = co_await c->async_volume_update_metadata(*ref, o.path, wo.metadata);
    } else if (what == "write") {
        std::string data;
        if (o.local.empty() || o.local == "-") {
            data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        } else {
            std::ifstream file(o.local, std::ios::binary);
            if (!file) co_return fail(exit_io, cmd + ": cannot read " + o.local);
            data.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
            if (file.bad()) co_return fail(exit_io, cmd + ": cannot read " + o.local);
        }
        r = co_await c->async_volume_write_file(*ref, o.path, std::move(data), wo);
    }
    if (!r) co_return report(cmd, r.error());
    if (o.format == output_format::json)
        print_json(entry_json(*r));
    else
        print_entry(*r);
    std::cout.flush();
    co_return exit_ok;
}

asio::awaitable<int> manage(std::shared_ptr<e2b::client> c, std::string what, std::string arg, output_format format)
{
    std::string const cmd = "volume " + what;
    if (what == "delete") {
        auto r = co_await c->async_delete_volume(arg);
        if (!r) co_return report(cmd, r.error());
        if (!*r) co_return fail(exit_not_found, cmd + ": no volume " + arg);
        co_return exit_ok;
    }
    if (what == "list") {
        auto r = co_await c->async_list_volumes();
        if (!r) co_return report(cmd, r.error());
        json::array out;
        if (format == output_format::text) std::cout << "VOLUME ID\tNAME\n";
        for (auto const& v : *r) {
            if (format == output_format::json)
                out.push_back(json::object{{"volumeID", v.volume_id}, {"name", v.name}});
            else
                std::cout << v.volume_id << "\t" << v.name << "\n";
        }
        if (format == output_format::json) print_json(out);
        std::cout.flush();
        co_return exit_ok;
    }
    // create, info: the token is a secret, never printed.
    // No ?: around co_await: g++ 12 destroys such temporaries twice.
    result<e2b::volume_info> r = error(errc::invalid_argument, "unknown volume command");
    if (what == "create")
        r = co_await c->async_create_volume(arg);
    else
        r = co_await c->async_get_volume(arg);
    if (!r) co_return report(cmd, r.error());
    if (format == output_format::json)
        print_json(json::object{{"volumeID", r->volume_id}, {"name", r->name}});
    else if (what == "create")
        std::cout << r->volume_id << std::endl;
    else
        std::cout << r->volume_id << "\t" << r->name << std::endl;
    co_return exit_ok;
}

}  // namespace

void add_volume_commands(CLI::App& app, run_state& st)
{
    auto* vol = app.add_subcommand("volume", "create, list and delete volumes; read and write their files");
    vol->require_subcommand(1);
    std::vector<CLI::App*> subs;

    struct manage_options {
        std::string arg;
        output_format format = output_format::text;
    };
    for (auto [name, help, arg_help] :
         {std::tuple{"create", "create a volume; prints its id", "the volume's name ([A-Za-z0-9_-])"},
          std::tuple{"info", "a volume's id and name", "the volume id"},
          std::tuple{"delete", "delete a volume and its files", "the volume id"},
          std::tuple{"list", "list volumes", ""}}) {
        auto o = std::make_shared<manage_options>();
        auto* sub = vol->add_subcommand(name, help);
        if (*arg_help) sub->add_option(std::string(name) == "create" ? "name" : "volume", o->arg, arg_help)->required();
        add_format_options(sub, o->format);
        std::string const what = name;
        sub->callback([o, what, &st] {
            st.exit = run_with_client("volume " + what, [o = *o, what](std::shared_ptr<e2b::client> c) {
                return manage(std::move(c), what, o.arg, o.format);
            });
        });
        subs.push_back(sub);
    }

    for (auto [name, help] :
         {std::pair{"ls", "list a directory of a volume"}, std::pair{"stat", "one entry of a volume"},
          std::pair{"mkdir", "make a directory in a volume"},
          std::pair{"read", "print a volume's file (or save it with -o)"},
          std::pair{"write", "write a volume's file from a local file or stdin"},
          std::pair{"rm", "remove a file or a directory (with its contents) from a volume"},
          std::pair{"chown", "set the owner and mode of an entry of a volume"}}) {
        auto o = std::make_shared<content_options>();
        std::string const what = name;
        auto* sub = vol->add_subcommand(name, help);
        sub->add_option("volume", o->volume, "the volume id")->required();
        sub->add_option("path", o->path, "the path in the volume (\"/\" is its root)")->required();
        if (what == "ls")
            sub->add_option("-d,--depth", o->depth, "levels to list (default 1)")->check(CLI::Range(1, 64));
        if (what == "mkdir") sub->add_flag("-p,--parents", o->parents, "make missing parents; an existing one is fine");
        if (what == "read") sub->add_option("-o,--output", o->local, "write to this local file instead of stdout");
        if (what == "write") sub->add_option("local", o->local, "the local file (default: stdin)");
        if (what == "mkdir" || what == "write" || what == "chown") {
            sub->add_option("--uid", o->uid, "owner, as a sandbox sees it (1000: user)")->check(CLI::Range(0, 65535));
            sub->add_option("--gid", o->gid, "group, as a sandbox sees it")->check(CLI::Range(0, 65535));
            sub->add_option("--mode", o->mode, "permission bits, octal (e.g. 644)")->transform([](std::string s) {
                std::size_t used = 0;
                unsigned long v = 0;
                try {
                    v = std::stoul(s, &used, 8);
                } catch (std::exception const&) {
                    used = 0;
                }
                if (used == 0 || used != s.size() || v > 07777)
                    throw CLI::ValidationError("--mode", "must be octal, at most 7777");
                return std::to_string(v);
            });
        }
        if (what != "read" && what != "rm") add_format_options(sub, o->format);
        sub->callback([o, what, &st] {
            st.exit = run_with_client("volume " + what, [o = *o, what](std::shared_ptr<e2b::client> c) {
                return content(std::move(c), what, o);
            });
        });
        subs.push_back(sub);
    }
    for (auto* sub : subs) sub->footer(exit_codes_help());
}

}  // namespace prism_e2b::cli
