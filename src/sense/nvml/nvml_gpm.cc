#include "sense/nvml/nvml_gpm.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <utility>

namespace gpuenv {
namespace {

// The metrics gpuenv reads, in the order of GpmRatios' fields.
constexpr std::array<unsigned, 9> kMetrics = {nvml::kGpmGraphicsUtil, nvml::kGpmSmUtil,   nvml::kGpmSmOccupancy,
                                              nvml::kGpmAnyTensorUtil, nvml::kGpmFp32Util, nvml::kGpmFp16Util,
                                              nvml::kGpmDramBwUtil,    nvml::kGpmPcieTxPerSec,
                                              nvml::kGpmPcieRxPerSec};
constexpr std::size_t kFirstRate = 7;  // kMetrics from here are MiB/s, the rest percent

std::array<std::optional<double>*, 9> fields(GpmRatios* r) {
  return {&r->gr_engine_active, &r->sm_active,   &r->sm_occupancy,
          &r->tensor_active,    &r->fp32_active, &r->fp16_active,
          &r->dram_active,      &r->pcie_tx_bytes_per_second, &r->pcie_rx_bytes_per_second};
}

bool has_functions(const NvmlFunctions& f) {
  return f.gpm_query_support.call && f.gpm_sample_alloc.call && f.gpm_sample_free.call && f.gpm_metrics_get.call &&
         f.gpm_sample_get.call;
}

}  // namespace

std::optional<double> gpm_ratio(double percent) {
  if (!std::isfinite(percent)) return std::nullopt;
  return std::clamp(percent / 100.0, 0.0, 1.0);
}

std::optional<double> gpm_bytes_per_second(double mib_per_second) {
  if (!std::isfinite(mib_per_second) || mib_per_second < 0) return std::nullopt;
  return mib_per_second * 1048576.0;
}

GpmDevice::GpmDevice(const Nvml& nvml, nvml::Device gpu, std::optional<unsigned> gpu_instance)
    : nvml_(&nvml), gpu_(gpu), instance_(gpu_instance) {}

GpmDevice::~GpmDevice() { release(); }

GpmDevice::GpmDevice(GpmDevice&& o) noexcept { *this = std::move(o); }

GpmDevice& GpmDevice::operator=(GpmDevice&& o) noexcept {
  if (this == &o) return *this;
  release();
  nvml_ = o.nvml_, gpu_ = o.gpu_, instance_ = o.instance_, supported_ = o.supported_;
  previous_ = std::exchange(o.previous_, nullptr);
  current_ = std::exchange(o.current_, nullptr);
  have_previous_ = std::exchange(o.have_previous_, false);
  return *this;
}

void GpmDevice::release() {
  if (nvml_ == nullptr || nvml_->fn.gpm_sample_free.call == nullptr) return;
  for (nvml::GpmSample* s : {&previous_, &current_})
    if (*s != nullptr) nvml_->fn.gpm_sample_free.call(std::exchange(*s, nullptr));
  have_previous_ = false;
}

// Asked of the GPU (a MIG instance's parent), once. A failure other than
// "not supported" is reported and asked again next time.
bool GpmDevice::query_support(NvmlCaller& call) {
  const NvmlFunctions& f = nvml_->fn;
  if (!has_functions(f) || (instance_ && !f.gpm_mig_sample_get.call)) return *(supported_ = false);
  nvml::GpmSupport s{};
  s.version = nvml::kGpmSupportVersion;
  if (!call(f.gpm_query_support, gpu_, &s)) {
    if (call.last() == nvml::kErrorNotSupported || call.last() == nvml::kErrorFunctionNotFound) supported_ = false;
    return false;
  }
  supported_ = s.is_supported_device != 0;
  if (*supported_ && (!call(f.gpm_sample_alloc, &previous_) || !call(f.gpm_sample_alloc, &current_))) {
    release();
    supported_.reset();
    return false;
  }
  return *supported_;
}

bool GpmDevice::take(NvmlCaller& call, nvml::GpmSample s) {
  const NvmlFunctions& f = nvml_->fn;
  bool ok = instance_ ? call(f.gpm_mig_sample_get, gpu_, *instance_, s) : call(f.gpm_sample_get, gpu_, s);
  if (!ok && call.last() == nvml::kErrorNotSupported) supported_ = false;
  return ok;
}

std::optional<GpmRatios> GpmDevice::metrics(NvmlCaller& call) const {
  auto get = std::make_unique<nvml::GpmMetricsGet>();  // zeroed; 13 kB, so not on the stack
  get->version = nvml::kGpmMetricsGetVersion;
  get->num_metrics = kMetrics.size();
  get->sample1 = previous_, get->sample2 = current_;
  for (std::size_t i = 0; i < kMetrics.size(); ++i) get->metrics[i].metric_id = kMetrics[i];
  if (!call(nvml_->fn.gpm_metrics_get, get.get())) return std::nullopt;
  GpmRatios r;
  auto out = fields(&r);
  for (std::size_t i = 0; i < kMetrics.size(); ++i)
    if (get->metrics[i].metric_id == kMetrics[i] && get->metrics[i].nvml_return == nvml::kSuccess)
      *out[i] = i < kFirstRate ? gpm_ratio(get->metrics[i].value) : gpm_bytes_per_second(get->metrics[i].value);
  return r;
}

std::optional<GpmRatios> GpmDevice::next(NvmlCaller& call) {
  if (nvml_ == nullptr || supported_ == false) return std::nullopt;
  if (!supported_ && !query_support(call)) return std::nullopt;
  if (!take(call, current_)) {
    have_previous_ = false;
    return std::nullopt;
  }
  std::optional<GpmRatios> r = have_previous_ ? metrics(call) : std::nullopt;
  std::swap(previous_, current_);
  have_previous_ = true;
  return r;
}

}  // namespace gpuenv
