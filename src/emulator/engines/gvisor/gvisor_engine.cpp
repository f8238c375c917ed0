// The `gvisor` engine (gvisor_engine.hpp): a sandbox's life on top of runsc (runsc.hpp).
#include "emulator/engines/gvisor/gvisor_engine.hpp"

#include "emulator/cgroups.hpp"
#include "emulator/engines/cgroup_limited_engine.hpp"
#include "emulator/engines/gvisor/image_writer.hpp"
#include "emulator/engines/gvisor/runsc.hpp"
#include "emulator/engines/namespaces/sandbox_init.hpp"
#include "emulator/envd_proxy.hpp"
#include "emulator/sandbox_tree.hpp"
#include "emulator/server_state.hpp"

#include <boost/json/serialize.hpp>

#include <atomic>
#include <tuple>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

constexpr char const* frozen_in_ram = "cgroup-freezer";  // sandbox::freeze_method of the RAM tier
constexpr char const* image_on_disk = "checkpoint";      // ... and of the disk tier
// A write that did not happen while the sandbox runs on in RAM is tried again this much later.
constexpr auto image_retry = std::chrono::seconds(60);

/// Paused with its memory frozen in RAM, its image not yet on disk (sb.mutex held).
bool in_ram_tier(sandbox const& sb)
{
    return sb.state == sandbox_state::paused && sb.paused_with_memory && sb.freeze_method == frozen_in_ram;
}

class gvisor_engine final : public cgroup_limited_engine {
public:
    gvisor_engine(runsc_config runsc, cgroup_roots roots, std::string agent, memory_tier_policy tiers)
        : cgroup_limited_engine(std::move(roots)),
          runsc_(std::move(runsc)),
          agent_(std::move(agent)),
          writer_(
              std::move(tiers), [this](std::string const& id) { return write_image(id); },
              [this](std::string const& id) { return held_bytes(id); })
    {
    }

    std::string_view name() const noexcept override { return "gvisor"; }
    sandbox_capabilities capabilities(bool) const override
    {
        sandbox_capabilities c;  // no network whatever is asked for
        c.workspace_coherent = true;
        c.filesystem_isolated = true;
        c.process_isolated = true;
        c.privilege_isolated = true;
        c.network_isolated = true;
        return c;
    }
    enforcement enforced() const override { return {false, true, false}; }
    // runsc cannot checkpoint the host's network: its sandboxes have none.
    bool allows_internet() const noexcept override { return false; }
    bool boots() const noexcept override { return true; }
    bool checkpoints_memory() const noexcept override { return true; }
    std::optional<std::string> volume_mount_problem() const override { return std::nullopt; }

    void attach(sandbox& sb) const override
    {
        sb.boot_id_file = sb.dir / "boot_id";
        sb.agent = std::make_shared<agent_pool>(gvisor_agent_socket(sb.dir));
    }

    result<void> boot(server_state& st, sandbox& sb) override
    {
        if (!write_boot_id(sb.boot_id_file))
            return error(errc::server_error, "cannot write the sandbox's boot id", {"create"});
        auto spec = spec_for(st, sb);
        if (!spec) return spec.error();
        auto booted = gvisor_boot(runsc_, *spec);
        if (booted) sb.agent->reset();
        return booted;
    }

    pid_t halt(sandbox& sb) override
    {
        writer_.cancel(sb.id);
        end_container(sb, sb.cgroup_dir, true);
        if (sb.agent) sb.agent->reset();
        return -1;
    }

    result<memory_pause> pause_with_memory(server_state& st, sandbox& sb) override
    {
        // Refused now, not once frozen: its memory must be able to reach the disk.
        if (auto refused = gvisor_checkpoint_refusal(sb.dir)) return *refused;
        if (!writer_.policy().sync && !sb.cgroup_dir.empty()) {
            // Frozen whole (the Sentry, its gofer and stubs are in the freezer cgroup), its memory
            // in RAM; the image follows behind the answer (write_image).
            // Twice: a task that does not freeze within a try (seen on a first boot here, not
            // understood) is usually frozen by the next.
            std::string unfrozen;
            if (freeze_cgroup(sb.cgroup_dir, &unfrozen) || freeze_cgroup(sb.cgroup_dir, &unfrozen)) {
                server_ = &st;
                writer_.schedule(sb.id);
                return memory_pause{frozen_in_ram, std::nullopt};
            }
            st.log(log_level::warning, "prism-e2b-local: sandbox " + sb.id + " did not freeze in time (" + unfrozen +
                                           "): its memory image is written before the answer");
        }
        bool lost_memory = false;
        if (auto saved = checkpoint(sb, lost_memory); !saved) {
            if (!lost_memory) {  // it runs on
                st.log(log_level::warning,
                       "prism-e2b-local: sandbox " + sb.id + " was not paused: " + saved.error().message());
                return saved.error();
            }
            return memory_pause{image_on_disk, saved.error()};  // the container is gone, its files are kept
        }
        return memory_pause{image_on_disk, std::nullopt};
    }

    result<void> resume_with_memory(server_state& st, sandbox& sb) override
    {
        if (sb.freeze_method != frozen_in_ram) return restore(st, sb);
        writer_.cancel(sb.id);
        thaw_cgroup(sb.cgroup_dir);
        if (auto listens = gvisor_agent_listens(runsc_, sb.id, sb.dir); !listens) {
            freeze_cgroup_of(sb);  // still paused, as the caller reports
            writer_.schedule(sb.id);
            return listens;
        }
        return result<void>{};
    }

    result<void> start_command(server_state&, std::shared_ptr<sandbox> const& sb, os_user const& user) override
    {
        // Started inside the container, as after boot in E2B.
        std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                        "HOME=" + user.home, "USER=" + user.name, "E2B_SANDBOX=true"};
        for (auto const& [k, v] : sb->env_vars) env.push_back(k + "=" + v);
        return gvisor_exec_detached(runsc_, sb->id, user.uid, user.home, env, {"/bin/bash", "-lc", sb->start_cmd});
    }

    void configure_agent(agent_config& cfg) const override { cfg.listen_path = gvisor_socket_in_container; }

    result<bool> capture(server_state& st, sandbox& sb, fs::path const& to, bool& paused_now) override
    {
        bool const running = sb.state == sandbox_state::running;
        if (in_ram_tier(sb)) {
            // Its image is written now, not behind: a snapshot holds the memory (E2B's does).
            writer_.cancel(sb.id);
            bool lost_memory = false;
            auto taken = take_image(sb, lost_memory);
            auto written = commit_image(st, sb, std::move(taken), lost_memory);
            paused_now = true;  // its tier changed: the ledger is written
            if (!written) {
                if (sb.paused_with_memory) writer_.schedule(sb.id, image_retry);
                return written.error();
            }
        }
        bool const checkpointed = sb.state == sandbox_state::paused && sb.paused_with_memory &&
                                  sb.freeze_method == image_on_disk && gvisor_has_memory_image(sb.dir);
        if (!running && !checkpointed) return isolation_engine::capture(st, sb, to, paused_now);
        bool lost_memory = false;
        if (auto saved = running ? checkpoint(sb, lost_memory) : result<void>{}; !saved) {
            if (!lost_memory) {  // runsc refused before it stopped anything (a host socket it cannot save)
                st.log(log_level::warning, "prism-e2b-local: the snapshot of sandbox " + sb.id +
                                               " holds its files only: " + saved.error().message());
                return isolation_engine::capture(st, sb, to, paused_now);
            }
            auto booted = boot(st, sb);  // the container is gone with its memory: boot it again
            return error(errc::server_error,
                         saved.error().message() + (booted ? "; the sandbox booted again from its files"
                                                           : "; it could not boot again: " + booted.error().message()),
                         {"snapshot"});
        }
        // The container is stopped now: its files and image are still.
        auto copied = copy_tree(sb.root, to / "root", 0);
        if (copied) copied = gvisor_copy_memory_image(sb.dir, to);
        if (running) {
            if (auto restored = restore(st, sb); !restored) {  // its memory is still on disk: paused
                sb.state = sandbox_state::paused;
                sb.paused_with_memory = true;
                sb.freeze_method = "checkpoint";
                paused_now = true;
                return error(errc::server_error,
                             "the sandbox could not run on after its snapshot, it is paused (its memory on disk): " +
                                 restored.error().message(),
                             {"snapshot"});
            }
        }
        if (!copied) return copied.error();
        return true;
    }

    result<void> restore_memory(server_state& st, sandbox& sb, fs::path const& snapshot_dir) override
    {
        if (auto copied = gvisor_copy_memory_image(snapshot_dir, sb.dir); !copied) return copied;
        if (auto restored = restore(st, sb); !restored) {
            end_container(sb, sb.cgroup_dir, true);
            return restored;
        }
        return result<void>{};
    }

    std::optional<std::uint64_t> memory_image_bytes(sandbox const& sb) const override
    {
        if (sb.freeze_method != image_on_disk) return std::nullopt;
        return gvisor_memory_image_bytes(sb.dir);
    }

    result<bool> adopt(server_state&, sandbox& sb, sandbox_remains const& left) override
    {
        // Its container outlived the server (running, or frozen with its memory in RAM), or its
        // memory image is on disk (paused).
        bool adopted = false;
        std::string tier = left.freeze_method;
        if (left.cgroups.size() == 3) {
            if (left.was_running) {
                adopted = gvisor_status(runsc_, sb.id) == "running" &&
                          agent_get(sb.agent->socket_path(), "/health", std::chrono::seconds(5)).has_value();
            } else if (left.paused_with_memory && left.freeze_method == frozen_in_ram) {
                // An image write the dead server started goes on without it: its end is waited
                // for; a whole image then holds the memory, else the container does, still frozen
                // (or thawed by the interrupted write: frozen again below).
                gvisor_settle_image_write(sb.dir);
                if (gvisor_has_memory_image(sb.dir)) {
                    end_container(sb, left.freezer_cgroup, false);  // stopped by its checkpoint
                    tier = image_on_disk;
                    adopted = true;
                } else {  // its Sentry still in its cgroup (runsc would wait on a frozen Sentry forever)
                    adopted = !left.freezer_cgroup.empty() && !cgroup_pids(left.freezer_cgroup).empty();
                }
            } else {
                adopted = left.paused_with_memory && gvisor_has_memory_image(sb.dir);
            }
        }
        if (adopted) {
            sb.limit_cgroups = left.cgroups;
            sb.cgroup_dir = left.freezer_cgroup;
            sb.paused_with_memory = !left.was_running;
            sb.freeze_method = tier;
            if (sb.paused_with_memory && tier == frozen_in_ram && !freeze_cgroup_of(sb))
                return error(errc::server_error, "it could not be frozen again", {"restore"});
        } else {  // it boots again (running) or stays paused with its files
            end_container(sb, left.freezer_cgroup, true);
            remove_left_cgroups(left);
        }
        return adopted;
    }

    void took_back(server_state& st, sandbox& sb) override
    {
        std::lock_guard lk(sb.mutex);
        if (!in_ram_tier(sb)) return;
        server_ = &st;
        writer_.schedule(sb.id);  // its image is due again, as from a pause now
    }

    std::optional<memory_tier_report> memory_tiers() const override
    {
        return memory_tier_report{writer_.policy(), writer_.stats()};
    }

    void stop() override
    {
        writer_.stop();
        cgroup_limited_engine::stop();
    }

private:
    /// What the sandbox's container is made of.
    result<gvisor_boot_spec> spec_for(server_state const& st, sandbox const& sb) const
    {
        gvisor_boot_spec spec;
        spec.id = sb.id;
        spec.dir = sb.dir;
        spec.root = sb.root;
        spec.boot_id_file = sb.boot_id_file;
        spec.passwd_file = st.passwd_file;
        spec.group_file = st.group_file;
        spec.hostname = "e2b-" + sb.id.substr(0, 8);
        spec.agent_path = agent_;
        spec.agent_config = boost::json::serialize(st.agent_config_for(sb).to_json());
        spec.cgroup_dirs = sb.limit_cgroups;
        if (!sb.cgroup_dir.empty()) spec.cgroup_dirs.push_back(sb.cgroup_dir);
        spec.limits = sb.limits;
        for (auto const& m : sb.volume_mounts) spec.volumes.push_back({st.volumes.data_dir(m.volume_id), m.path});
        auto layer = st.system_layer_for(sb, spec.hostname);
        if (!layer) return layer.error();
        std::tie(spec.system_layer, spec.system_etc) = std::move(*layer);
        return spec;
    }

    /// A checkpoint of the running sandbox, then a fresh agent pool.
    result<void> checkpoint(sandbox& sb, bool& lost_memory)
    {
        // The pooled connections go after the checkpoint: closing them before would leave sockets
        // whose host end is closed and the agent has not yet read that, which runsc cannot save.
        auto saved = gvisor_checkpoint(runsc_, sb.id, sb.dir, lost_memory);
        sb.agent->reset();
        return saved;
    }

    /// A restore from dir/memory, then a fresh agent pool.
    result<void> restore(server_state const& st, sandbox& sb)
    {
        auto spec = spec_for(st, sb);
        if (!spec) return spec.error();
        auto restored = gvisor_restore(runsc_, *spec);
        sb.agent->reset();  // the connections from before the checkpoint are gone
        return restored;
    }

    /// The writer's job: the image of a sandbox frozen in RAM written to disk, unless it was
    /// resumed, killed or written meanwhile.
    image_writer::outcome write_image(std::string const& id)
    {
        auto* st = server_.load();
        if (!st || st->stopping) return image_writer::outcome::skipped;
        auto sb = st->find(id);
        if (!sb) return image_writer::outcome::skipped;
        {
            std::lock_guard lk(sb->mutex);
            if (sb->gone || !in_ram_tier(*sb) || sb->memory_writing) return image_writer::outcome::skipped;
            sb->memory_writing = true;  // resumes and snapshots wait; the lock is let go for the write
        }
        bool lost_memory = false;
        auto written = take_image(*sb, lost_memory);
        bool retry = false, gone = false;
        {
            std::lock_guard lk(sb->mutex);
            written = commit_image(*st, *sb, std::move(written), lost_memory);
            sb->memory_writing = false;
            gone = sb->gone;
            retry = !written && sb->paused_with_memory && !gone;
        }
        sb->memory_written.notify_all();
        if (gone) return image_writer::outcome::skipped;
        st->persist(*sb);
        if (retry && written.error() != errc::conflict) writer_.schedule(id, image_retry);
        return written ? image_writer::outcome::written : image_writer::outcome::failed;
    }

    /// The checkpoint of a sandbox frozen in RAM: thawed for it (its agent must let go of its
    /// socket first, which runsc cannot save), stopped by it.
    result<void> take_image(sandbox& sb, bool& lost_memory)
    {
        thaw_cgroup(sb.cgroup_dir);
        return checkpoint(sb, lost_memory);
    }

    /// Records the tier take_image left the sandbox in (sb.mutex held): on disk; in RAM, frozen
    /// again (the write did not happen); or neither (runsc lost the memory: it boots from its files).
    result<void> commit_image(server_state& st, sandbox& sb, result<void> taken, bool lost_memory)
    {
        if (sb.gone) return taken;  // killed meanwhile: its container went with it
        if (taken) {
            sb.freeze_method = image_on_disk;
            return taken;
        }
        if (lost_memory) {
            sb.paused_with_memory = false;
            sb.freeze_method.clear();
            st.log(log_level::error, "prism-e2b-local: the memory image of paused sandbox " + sb.id +
                                         " could not be written and its memory is lost (it boots from its "
                                         "files on resume): " +
                                         taken.error().message());
            return taken;
        }
        if (!freeze_cgroup_of(sb))
            st.log(log_level::error,
                   "prism-e2b-local: paused sandbox " + sb.id + " could not be frozen again and runs on");
        st.log(log_level::warning,
               "prism-e2b-local: the memory of paused sandbox " + sb.id + " stays in RAM: " + taken.error().message());
        return taken;
    }

    /// Ends its container (runsc delete) and its image or not. Its freezer cgroup is thawed
    /// first: runsc waits forever on a frozen Sentry, and a frozen task does not die.
    void end_container(sandbox const& sb, std::string const& freezer, bool drop_image)
    {
        if (!freezer.empty()) thaw_cgroup(freezer);
        gvisor_destroy(runsc_, sb.id, sb.dir, drop_image);
    }

    /// RAM a sandbox frozen in RAM holds: its memory cgroup's usage.
    std::uint64_t held_bytes(std::string const& id) const
    {
        auto* st = server_.load();
        auto sb = st ? st->find(id) : nullptr;
        if (!sb) return 0;
        return sb->limit_cgroups.empty() ? 0 : memory_usage_bytes(sb->limit_cgroups.front());
    }

    runsc_config runsc_;
    std::string agent_;
    /// Set by the first pause or restore; outlives the writer (stop() ends it first).
    std::atomic<server_state*> server_{nullptr};
    image_writer writer_;
};

}  // namespace

result<std::unique_ptr<isolation_engine>> start_gvisor_engine(fs::path const& state_dir, std::string const& owner,
                                                              memory_tier_policy const& tiers)
{
    auto const unavailable = [](std::string const& problem) {
        return error(errc::invalid_argument, "the gvisor engine is not available: " + problem, {"start"});
    };
    if (::geteuid() != 0) return unavailable("it needs root");
    runsc_config runsc{find_runsc(), state_dir / "runsc"};
    if (runsc.program.empty())
        return unavailable("runsc was not found (install the runsc package, or set PRISM_E2B_RUNSC)");
    auto const agent = find_envd_agent();
    if (agent.empty())
        return unavailable("prism-e2b-envd was not found (next to the executable, or set PRISM_E2B_ENVD)");
    cgroup_roots roots;
    std::string problem;
    if (!roots.create(owner))
        problem = "the cgroup-v1 memory, pids and cpu controllers are not all available";
    else if (auto probed = probe_gvisor(runsc, state_dir / "probe-gv", agent); !probed)
        problem = probed.error().message();
    if (!problem.empty()) {
        for (auto const& d : roots.all()) ::rmdir(d.c_str());
        return unavailable(problem);
    }
    return std::unique_ptr<isolation_engine>(
        std::make_unique<gvisor_engine>(std::move(runsc), std::move(roots), agent, tiers));
}

}  // namespace prism_e2b::local::detail
