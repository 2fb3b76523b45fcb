#include "flow/export_jobs.h"

#include <chrono>
#include <set>

#include "decide/fleet/attribute.h"

namespace gpuenv::flow {
namespace {

std::vector<std::uint32_t> listed_pids(const Readings& r) {
  std::set<std::uint32_t> pids;
  for (const DeviceReading& d : r.devices)
    if (d.processes)
      for (const GpuProcess& p : *d.processes) pids.insert(p.pid);
  return {pids.begin(), pids.end()};
}

}  // namespace

double unix_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::vector<ProcessFacts> HostProcesses::facts(const std::vector<std::uint32_t>& pids) {
  return reader_.facts(pids);
}

JobCpuReading HostProcesses::cpu(const JobOwner& owner) { return reader_.job_cpu(owner); }

bool HostProcesses::hpc_jobs(HpcJobMap* out, std::string* err) {
  out->clear();
  return hpc_dir_.empty() || read_hpc_job_mapping(hpc_dir_, out, err);
}

JobRoundNotes track_jobs(const Readings& r, const PodDevices& pods, ProcessSource* source, double unix_now,
                         fleet::JobLedger* ledger) {
  JobRoundNotes notes;
  std::vector<std::uint32_t> pids = listed_pids(r);
  std::map<std::uint32_t, ProcessFacts> facts;
  for (ProcessFacts& f : source->facts(pids)) facts[f.pid] = std::move(f);
  notes.pids = pids.size();
  for (const auto& [pid, f] : facts) notes.pids_not_in_proc += f.found ? 0 : 1;
  HpcJobMap hpc;
  if (!source->hpc_jobs(&hpc, &notes.hpc_error)) hpc.clear();
  fleet::LedgerRound round{&r, {}, {}, unix_now};
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    if (!r.devices[i].processes) continue;
    for (const GpuProcess& p : *r.devices[i].processes) {
      ProcessFacts none;
      none.pid = p.pid;
      auto f = facts.find(p.pid);
      JobOwner o = fleet::attribute(f == facts.end() ? none : f->second, r.devices[i], mig_parent(r.devices, r.devices[i]), hpc, pods);
      if (o.scheduler != "unknown" && !round.cpu.count(job_key(o))) round.cpu[job_key(o)] = source->cpu(o);
      round.owners[{i, p.pid}] = std::move(o);
    }
  }
  ledger->add_round(round);
  return notes;
}

std::shared_ptr<const JobsSnapshot> JobTracker::update(const Readings& r, const PodDevices& pods) {
  if (r.sampled_at == last_sampled_at_) return latest_;
  last_sampled_at_ = r.sampled_at;
  say(track_jobs(r, pods, source_, unix_clock_(), &ledger_));
  auto snapshot = std::make_shared<JobsSnapshot>();
  snapshot->jobs = ledger_.jobs();
  snapshot->hpc_jobs = ledger_.hpc_jobs();
  latest_ = std::move(snapshot);
  return latest_;
}

// Said once each: NVML's PIDs missing from /proc (the exporter does not see
// the host's processes), and each new mapping-directory failure.
void JobTracker::say(const JobRoundNotes& notes) {
  if (notes.pids > 0 && notes.pids_not_in_proc == notes.pids && !said_no_proc_) {
    said_no_proc_ = true;
    log_(Severity::kWarning, "jobs",
         "export: none of the " + std::to_string(notes.pids) +
             " processes NVML lists on the GPUs is in this /proc, so their jobs are \"unknown\": give the exporter "
             "the host's /proc (--proc-root, mounted read-only) or the host's PID namespace (hostPID)",
         {{"pids", notes.pids}});
  }
  if (!notes.hpc_error.empty() && notes.hpc_error != said_hpc_error_)
    log_(Severity::kWarning, "jobs", "export: --hpc-job-mapping-dir: " + notes.hpc_error, {{"error", notes.hpc_error}});
  said_hpc_error_ = notes.hpc_error;
}

}  // namespace gpuenv::flow
