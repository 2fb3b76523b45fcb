// Node labels for Kubernetes: what a scheduler should know about this
// machine's GPUs, as Node Feature Discovery's local source reads them from a
// feature file (docs/cluster.md, "Node labels"). GPU Feature Discovery's
// meanings under gpuenv's own prefix, plus what only gpuenv knows: tensor
// formats, the torch wheel that fits, measured speeds, doctor's verdict; or,
// with LabelNamespace::kNvidia, GFD's own labels under nvidia.com/. The
// labelers themselves are tables in decide/labels/labelers.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "decide/labels/device_plugin_config.h"
#include "model/machine.h"

namespace gpuenv {

/// gpuenv's label namespace; nvidia.com/ belongs to GPU Feature Discovery.
inline constexpr const char* kLabelPrefix = "gpuenv.dev/";

/// GPU Feature Discovery's label namespace (--namespace nvidia.com).
inline constexpr const char* kGfdLabelPrefix = "nvidia.com/";

/// NFD's local source ignores a feature file larger than this (65536 bytes).
inline constexpr std::size_t kFeatureFileLimit = 65536;

/// Label name (without the prefix) -> value. Every value obeys Kubernetes'
/// label-value syntax.
using NodeLabels = std::map<std::string, std::string>;

/// The labels of `m`. `doctor` is doctor's verdict (ok|warning|error), left
/// out when nullopt. A machine without a GPU still gets gpu.count=0; one
/// whose driver failed before any GPU was read (decide/health.h
/// gpus_unreadable: a driver/library mismatch, a module not loaded) gets no
/// GPU or driver label at all, only doctor's, rather than a false 0. Every
/// value is checked against valid_label_value() last: one that fails (a
/// stored bench figure of -5, or one that is not finite) is left out, and
/// "NAME=VALUE: why" appended to *dropped when given.
NodeLabels node_labels(const Machine& m, const std::optional<std::string>& doctor,
                   std::vector<std::string>* dropped = nullptr);

/// `s` as a label value: characters outside [-A-Za-z0-9_.] become '-' (a
/// space too, as GFD writes products: "NVIDIA-H200"), at most 63, starting
/// and ending with a letter or digit; "" when nothing is left.
std::string label_value(const std::string& s);

/// Whether `s` is a valid Kubernetes label value.
bool valid_label_value(const std::string& s);

/// The feature file: a header comment, `# +expiry-time=EXPIRY` (RFC 3339),
/// then one `gpuenv.dev/NAME=VALUE` line per label.
std::string feature_file(const NodeLabels& labels, const std::string& expiry);

/// Where `gpuenv labels` writes GFD's names.
enum class LabelNamespace {
  kGpuenv,  // gpuenv.dev/: gpuenv's labels, GFD's meanings under gpuenv's names (the default)
  kNvidia,  // nvidia.com/: GFD's labels as GFD writes them; gpuenv's own stay under gpuenv.dev/
};

struct LabelOptions {
  LabelNamespace ns = LabelNamespace::kGpuenv;
  /// The device plugin's config (MIG strategy, sharing) for GFD's labels.
  std::optional<DevicePluginConfig> device_plugin;
};

/// The labels of each namespace, names without the prefix.
struct LabelSet {
  NodeLabels gpuenv;  // gpuenv.dev/
  NodeLabels nvidia;  // nvidia.com/
  friend bool operator==(const LabelSet&, const LabelSet&) = default;
};

/// The labels for `o`. kGpuenv: node_labels(m, doctor) under gpuenv.dev/.
/// kNvidia: GFD's labels under nvidia.com/ (none when no GPU can serve, as
/// GFD writes none), and gpuenv's labels that have no GFD name under
/// gpuenv.dev/. Dropped values as node_labels', nvidia.com/'s named in full.
LabelSet node_label_set(const Machine& m, const std::optional<std::string>& doctor, const LabelOptions& o,
                        std::vector<std::string>* dropped = nullptr);

/// The feature file of both namespaces: gpuenv.dev/ lines, then nvidia.com/ lines.
std::string namespaced_feature_file(const LabelSet& labels, const std::string& expiry);

/// Every label with its prefix: "gpuenv.dev/gpu.count" -> "1", ...
std::map<std::string, std::string> qualified_labels(const LabelSet& labels);

}  // namespace gpuenv
