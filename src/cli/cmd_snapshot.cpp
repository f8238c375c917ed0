// prism-e2b snapshot create|list|delete, as `e2b sandbox snapshot`: persistent
// snapshots of a sandbox (a snapshot id is a template: `create --template ID`
// starts a sandbox from it).
#include "cli/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

json::object to_json(e2b::snapshot_info const& s)
{
    json::array names;
    for (auto const& n : s.names) names.emplace_back(n);
    return json::object{{"snapshotID", s.snapshot_id}, {"names", names}};
}

struct create_options {
    std::string sandbox;
    std::optional<std::string> name;
    output_format format = output_format::text;
};

asio::awaitable<int> create(std::shared_ptr<e2b::client> c, create_options o)
{
    e2b::create_snapshot_params p;
    p.name = o.name;
    auto r = co_await c->async_create_snapshot(o.sandbox, p);
    if (!r) co_return report("snapshot create", r.error());
    if (o.format == output_format::json)
        print_json(to_json(*r));
    else
        std::cout << r->snapshot_id << std::endl;
    co_return exit_ok;
}

struct list_options {
    std::optional<std::string> sandbox, name;
    output_format format = output_format::text;
};

asio::awaitable<int> list(std::shared_ptr<e2b::client> c, list_options o)
{
    e2b::snapshot_list_params p;
    p.sandbox_id = o.sandbox;
    p.name = o.name;
    std::vector<e2b::snapshot_info> all;
    constexpr int max_pages = 10000;  // a server that never stops paging is an error, never a silent stop
    for (int page = 0;; ++page) {
        if (page == max_pages)
            co_return report("snapshot list", error(errc::limit_exceeded, "the server sent more than 10000 pages"));
        auto r = co_await c->async_list_snapshots(p);
        if (!r) co_return report("snapshot list", r.error());
        for (auto& s : r->snapshots) all.push_back(std::move(s));
        if (!r->next_token) break;
        p.next_token = r->next_token;
    }
    if (o.format == output_format::json) {
        json::array out;
        for (auto const& s : all) out.push_back(to_json(s));
        print_json(out);
        co_return exit_ok;
    }
    std::cout << "SNAPSHOT ID\tNAMES\n";
    for (auto const& s : all) {
        std::cout << s.snapshot_id << "\t";
        for (std::size_t i = 0; i < s.names.size(); ++i) std::cout << (i ? "," : "") << s.names[i];
        std::cout << "\n";
    }
    std::cout.flush();
    co_return exit_ok;
}

asio::awaitable<int> delete_snapshot(std::shared_ptr<e2b::client> c, std::string id)
{
    auto r = co_await c->async_delete_snapshot(id);
    if (!r) co_return report("snapshot delete", r.error());
    if (!*r) co_return fail(exit_not_found, "snapshot delete: no snapshot " + id);
    co_return exit_ok;
}

}  // namespace

void add_snapshot_commands(CLI::App& app, run_state& st)
{
    auto* snap = app.add_subcommand("snapshot", "create, list and delete persistent snapshots of sandboxes");
    snap->require_subcommand(1);

    auto co = std::make_shared<create_options>();
    auto* ccreate = snap->add_subcommand("create", "snapshot a sandbox's current state; prints the snapshot id");
    ccreate->add_option("sandbox", co->sandbox, "the sandbox id")->required();
    ccreate->add_option("-n,--name", co->name, "a name for the snapshot");
    add_format_options(ccreate, co->format);
    ccreate->callback([co, &st] {
        st.exit = run_with_client("snapshot create",
                                  [o = *co](std::shared_ptr<e2b::client> c) { return create(std::move(c), o); });
    });

    auto lo = std::make_shared<list_options>();
    auto* clist = snap->add_subcommand("list", "list snapshots (every page)");
    clist->alias("ls");
    clist->add_option("-s,--sandbox", lo->sandbox, "only snapshots of this sandbox");
    clist->add_option("-n,--name", lo->name, "only snapshots of this name or id");
    add_format_options(clist, lo->format);
    clist->callback([lo, &st] {
        st.exit = run_with_client("snapshot list",
                                  [o = *lo](std::shared_ptr<e2b::client> c) { return list(std::move(c), o); });
    });

    auto id = std::make_shared<std::string>();
    auto* cdel = snap->add_subcommand("delete", "delete a snapshot");
    cdel->alias("rm");
    cdel->add_option("snapshot", *id, "the snapshot id")->required();
    cdel->callback([id, &st] {
        st.exit = run_with_client(
            "snapshot delete", [i = *id](std::shared_ptr<e2b::client> c) { return delete_snapshot(std::move(c), i); });
    });
    for (auto* sub : {ccreate, clist, cdel}) sub->footer(exit_codes_help());
}

}  // namespace prism_e2b::cli
