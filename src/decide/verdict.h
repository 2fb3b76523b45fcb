// What held a watched job back: pure rules over its timeline (model/job.h).
// docs/feedback.md lists what each rule needs and when it fires.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/job.h"

namespace gpuenv {

struct Verdict {
  std::string name;      // idle|idle-held|copy-bound|input-bound|throttled|fp32-on-cuda-cores|low-sm-activity|memory-full|busy|memory-headroom|unclear|too-short|unwatched
  std::string evidence;  // the numbers it rests on, one sentence
  std::string fix;       // what to change, one or two sentences
  std::map<std::string, double> figures;  // the evidence's numbers, for JSON
  // DataLoader arguments `gpuenv run --tune` may set (Python literals):
  // num_workers, pin_memory, persistent_workers.
  std::map<std::string, std::string> tune;
};

/// Every rule that fires, the one that matters most first; never empty
/// (unclear, too-short or unwatched when nothing else can be said).
/// `speed`, the job's own (Job::speed): where the hook saw the steps and the
/// DataLoader, input-bound asks it whether the loop waited for batches.
std::vector<Verdict> judge(const JobContext& context, const Timeline& timeline,
                           const std::optional<JobSpeed>& speed = std::nullopt);
/// judge(job.context, job.timeline, job.speed).
std::vector<Verdict> judge(const Job& job);

/// What the store keeps of a verdict with its job (Job::verdict).
JobVerdict to_job_verdict(const Verdict& v);

/// The verdicts of a job read back: judge(job), led by the verdict stored
/// with it when it has one (its figures and DataLoader settings those of the
/// rule of that name where it fires still); a row from before the verdict
/// was stored is judged as it is.
std::vector<Verdict> verdicts_of(const Job& job);

/// The verdict stored with the job, else judge(job)'s first.
JobVerdict main_verdict(const Job& job);

/// PCIe bandwidth of one direction of a link, MB/s (gen 1-6, any width);
/// 0 when unknown.
double pcie_link_mbs(int gen, int width);

/// The DataLoader workers to suggest for `cpus_per_gpu` CPUs (one stays
/// with the training loop): 1 to 32; 4 when unknown.
int suggested_workers(std::optional<int> cpus_per_gpu);

}  // namespace gpuenv
