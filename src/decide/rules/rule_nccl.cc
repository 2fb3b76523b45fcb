// nccl: the NCCL settings that detection justifies, nothing more. Never
// NCCL_ALGO / NCCL_PROTO (NCCL tunes those per message size) and never
// NCCL_NVLS_ENABLE. docs/rules/nccl.md
#include <algorithm>

#include "decide/launcher_env.h"
#include "decide/rules/rule_measured.h"
#include "decide/rules/rules.h"
#include "decide/visible.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// Interfaces of container and VM plumbing: bridges, veth pairs, overlays.
// They carry no route to the other hosts, yet NCCL may pick them (it skips
// only lo, docker* and virbr* by itself). Bonds, VLANs and plain bridges are
// not listed: the host's own address often lives on them.
constexpr const char* kPlumbing[] = {"docker",       "br-",   "veth",   "virbr", "vnet", "cni",
                                     "flannel",      "cali",  "cilium", "vxlan", "tunl", "kube-",
                                     "nodelocaldns", "lxcbr", "podman", "weave"};

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The prefix that excludes `i`, or "" when NCCL may use it.
std::string exclusion(const NetInterface& i) {
  if (i.loopback) return i.name;
  if (!i.virtual_device) return "";
  for (const char* p : kPlumbing)
    if (starts_with(i.name, p)) return p;
  return "";
}

bool usable_by_name(const NetInterface& i) {
  return !i.name.empty() && i.name.find_first_of(",:^=") == std::string::npos;
}

// Prefixes to exclude, keeping none that would also hide a usable interface.
std::vector<std::string> exclusions(const Host& h) {
  std::vector<std::string> out;
  for (const auto& i : h.interfaces) {
    std::string p = exclusion(i);
    if (p.empty() || !usable_by_name(i) || std::count(out.begin(), out.end(), p)) continue;
    bool hides_kept = std::any_of(h.interfaces.begin(), h.interfaces.end(), [&](const auto& k) {
      return exclusion(k).empty() && starts_with(k.name, p);
    });
    if (!hides_kept) out.push_back(p);
  }
  return out;
}

bool any_up(const Host& h, bool (*pred)(const NetInterface&)) {
  return std::any_of(h.interfaces.begin(), h.interfaces.end(),
                     [&](const auto& i) { return i.up.value_or(false) && pred(i); });
}

void socket_ifname(const Host& h, Decision* d) {
  // In a container eth0 is itself a veth: no physical interface, and NCCL's
  // own choice (anything but lo and docker*) is already right.
  if (!any_up(h, [](const NetInterface& i) { return !i.loopback && !i.virtual_device; })) return;
  // With IPoIB up, NCCL uses only ib* interfaces by itself.
  if (any_up(h, [](const NetInterface& i) { return starts_with(i.name, "ib"); })) return;
  std::vector<std::string> ex = exclusions(h), extra;
  for (const auto& p : ex)
    if (p != "lo" && p != "docker") extra.push_back(p + "*");
  if (extra.empty()) return;  // NCCL skips lo and docker* by itself
  d->settings.push_back(make_setting("NCCL_SOCKET_IFNAME", "^" + join(ex, ","),
                                "NCCL would also try " + join(extra, ", ") +
                                    " (container/VM plumbing with no route to other hosts); "
                                    "excluded by prefix along with loopback"));
}

void ib(const Host& h, Decision* d) {
  if (!h.ib_devices.empty()) return;
  d->settings.push_back(make_setting("NCCL_IB_DISABLE", "1",
                                "no InfiniBand or RoCE device was sensed: NCCL goes straight to TCP "
                                "sockets instead of probing for verbs devices"));
}

bool p2p_broken(const GpuPair& p) { return p.p2p_read && *p.p2p_read != "ok" && *p.p2p_read != "unknown"; }

bool visible(const std::vector<const Gpu*>& gpus, int index) {
  return std::any_of(gpus.begin(), gpus.end(), [&](const Gpu* g) { return g->index == index; });
}

// "A, B, C, ... N pairs in all"
std::string first_three(std::vector<std::string> items, const std::string& sep) {
  size_t n = items.size();
  if (n > 3) {
    items.resize(3);
    items.push_back("... " + std::to_string(n) + " pairs in all");
  }
  return join(items, sep);
}

// NCCL_P2P_DISABLE, this rule's alone: from the driver's P2P status and
// from what gpuenv bench measured (decide/rules/rule_measured.h), both cited.
void p2p(const Machine& m, const Visibility& v, Decision* d) {
  std::vector<const Gpu*> gpus = visible_gpus(v);
  std::vector<std::string> bad;
  for (const auto& p : m.pairs)
    if (p.a != p.b && visible(gpus, p.a) && visible(gpus, p.b) && p2p_broken(p))
      bad.push_back("GPU " + std::to_string(p.a) + "-" + std::to_string(p.b) + " (" + *p.p2p_read + ")");
  std::vector<std::string> measured = measured_p2p_problems(m, gpus);
  if (bad.empty() && measured.empty()) return;
  std::vector<std::string> why;
  if (!bad.empty()) why.push_back("the driver reports no P2P reads between " + first_three(bad, ", "));
  if (!measured.empty()) why.push_back("measured by gpuenv bench: " + first_three(measured, "; "));
  std::string reason = join(why, "; ") + "; NCCL goes through host memory instead";
  if (!bad.empty())
    reason += " (if P2P should work, check PCIe ACS and the IOMMU: `nvidia-smi topo -p2p r`)";
  d->settings.push_back(make_setting("NCCL_P2P_DISABLE", "1", reason));
}

}  // namespace

Decision rule_nccl(const Machine& m, const Options& o) {
  Decision d;
  Visibility v = visible_devices(m, o);
  LaunchEnv launch = launch_env(o);
  if (launch.malformed.count(launch.world_size_var))
    d.notes.push_back({Severity::kWarning, "", launch.malformed.at(launch.world_size_var) + ": ignored"});
  int devices = enumerated_devices(v);
  if (devices == 0) return d;
  if (any_mig(v) && (devices > 1 || launch.world_size.value_or(1) > 1)) {
    d.notes.push_back({Severity::kInfo, "",
                       "no NCCL settings: NCCL does not run across MIG devices (the mig rule says what to do)"});
    return d;
  }
  if (devices == 1 && launch.world_size.value_or(1) <= 1) {
    d.notes.push_back(
        {Severity::kInfo, "", "no NCCL settings: one GPU and no " + launch.world_size_var + " > 1, so NCCL is not in play"});
    return d;
  }
  ib(m.host, &d);
  socket_ifname(m.host, &d);
  p2p(m, v, &d);
  d.settings.push_back(make_setting("NCCL_DEBUG", "WARN",
                               "NCCL then prints why a communicator failed, without the INFO flood; "
                               "by default it prints nothing"));
  return d;
}

}  // namespace gpuenv
