// The per-job series `gpuenv export` serves next to the per-GPU ones
// (issue 38; docs/metrics.md "Jobs"): gpuenv_job_* from the ledger's views
// (decide/fleet/job_ledger.h). Pure.
#pragma once

#include <string>
#include <vector>

#include "act/render/gpu_metrics.h"
#include "act/render/prometheus_text.h"
#include "decide/fleet/job_ledger.h"

namespace gpuenv {

/// The families of every job in `jobs`, in docs/metrics.md's order; each
/// series carries the job's job, user, scheduler and host labels (and
/// namespace, pod and container for Kubernetes, command for scheduler none);
/// the per-GPU ones add gpu, UUID and, on MIG devices, GPU_I_ID. The host is
/// info.hostname under info.hostname_label, the name the DCGM_FI_* series
/// use (export --hostname-label); none when the hostname is "".
std::vector<prometheus::MetricFamily> job_metric_families(const std::vector<fleet::JobView>& jobs,
                                                          const ExporterInfo& info);

/// The labels that name a job on its series.
prometheus::Labels job_labels(const JobOwner& owner, const ExporterInfo& info);

}  // namespace gpuenv
