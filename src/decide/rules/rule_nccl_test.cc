#include <gtest/gtest.h>

#include "builders.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace testing;
using Env = std::map<std::string, std::string>;

const Env kDebug = {{"NCCL_DEBUG", "WARN"}};
const Env kNoIb = {{"NCCL_IB_DISABLE", "1"}, {"NCCL_DEBUG", "WARN"}};

Env plus(Env a, const Env& b) {
  a.insert(b.begin(), b.end());
  return a;
}

Machine with_p2p(Machine m, int a, int b, std::optional<std::string> status) {
  for (auto& p : m.pairs)
    if (p.a == a && p.b == b) p.p2p_read = status;
  return m;
}

Machine eth0_down(Machine m) {
  for (auto& i : m.host.interfaces)
    if (i.name == "eth0") i.up = false;
  return m;
}

MachineBuilder virt(MachineBuilder b, std::initializer_list<const char*> names) {
  for (const char* n : names) b.interface(n, true, false, true);
  return b;
}

std::vector<RuleCase> scope_rows() {
  return {
      {"no GPU: NCCL is not in play", machine::none(), {}, {}},
      {"one GPU: nothing, and says why",
       machine::h100(),
       {},
       {},
       {{Severity::kInfo, "no NCCL settings: one GPU and no WORLD_SIZE > 1"}}},
      {"one GPU of a multi-node job", machine::h100(), {{"WORLD_SIZE", "2"}}, kNoIb},
      {"WORLD_SIZE=1 is one process",
       machine::h100(),
       {{"WORLD_SIZE", "1"}},
       {},
       {{Severity::kInfo, "no NCCL settings"}}},
      {"malformed WORLD_SIZE is ignored",
       machine::h100(),
       {{"WORLD_SIZE", "two"}},
       {},
       {{Severity::kWarning, "WORLD_SIZE=two is not a positive integer: ignored"},
        {Severity::kInfo, "no NCCL settings"}}},
      {"CUDA_VISIBLE_DEVICES leaves one GPU",
       machine::h100(2),
       {{"CUDA_VISIBLE_DEVICES", "1"}},
       {},
       {{Severity::kInfo, "no NCCL settings"}}},
      {"MIG devices count once: a process sees one",
       machine::a100_mig(),
       {},
       {},
       {{Severity::kInfo, "no NCCL settings"}}},
      {"torchrun ranks on MIG devices: NCCL cannot run there, so nothing is set",
       machine::a100_mig(),
       {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "3"}, {"WORLD_SIZE", "3"}},
       {},
       {{Severity::kInfo, "no NCCL settings: NCCL does not run across MIG devices"}}},
      {"two GPUs, no InfiniBand",
       machine::h100(2),
       {},
       kNoIb,
       {},
       {},
       {{"NCCL_IB_DISABLE", "no InfiniBand or RoCE device was sensed"}}},
      {"NVLink and InfiniBand: only the debug level", machine::a100_nvlink_8(), {}, kDebug},
      {"RoCE counts as an RDMA device", machine::h100(2).infiniband("mlx5_0", "Ethernet"), {}, kDebug},
  };
}

std::vector<RuleCase> nccl_p2p_rows() {
  Env p2p_off = plus(kNoIb, {{"NCCL_P2P_DISABLE", "1"}});
  Machine broken12 = with_p2p(machine::h100(3), 1, 2, "chipset_not_supported");
  return {
      {"mixed consumer GPUs without P2P",
       machine::rtx3090_4090(),
       {},
       p2p_off,
       {},
       {},
       {{"NCCL_P2P_DISABLE", "no P2P reads between GPU 0-1 (not_supported)"},
        {"NCCL_P2P_DISABLE", "check PCIe ACS and the IOMMU"}}},
      {"one broken pair among three",
       broken12,
       {},
       p2p_off,
       {},
       {},
       {{"NCCL_P2P_DISABLE", "between GPU 1-2 (chipset_not_supported);"}}},
      {"the broken pair is not visible", broken12, {{"CUDA_VISIBLE_DEVICES", "0,1"}}, kNoIb},
      {"unknown status is no report", with_p2p(machine::h100(2), 0, 1, "unknown"), {}, kNoIb},
      {"status not sensed is no report", with_p2p(machine::h100(2), 0, 1, std::nullopt), {}, kNoIb},
      {"many pairs are summed up",
       machine::h100(8).with_pcie_p2p("disabled_by_regkey"),
       {},
       p2p_off,
       {},
       {},
       {{"NCCL_P2P_DISABLE", "GPU 0-3 (disabled_by_regkey), ... 28 pairs in all;"}}},
  };
}

std::vector<RuleCase> interface_rows() {
  Env docker_host = plus(kNoIb, {{"NCCL_SOCKET_IFNAME", "^lo,docker,br-,veth"}});
  return {
      {"lo and eth0: NCCL's own choice is right", machine::h100(2), {}, kNoIb},
      {"docker0 alone: NCCL skips docker* by itself", virt(machine::h100(2), {"docker0"}), {}, kNoIb},
      {"a Docker host with networks and containers",
       virt(machine::h100(2), {"docker0", "br-3f2a", "veth12ab", "veth9"}),
       {},
       docker_host,
       {},
       {},
       {{"NCCL_SOCKET_IFNAME", "NCCL would also try br-*, veth* (container/VM plumbing"}}},
      {"inside a container eth0 is virtual: leave it to NCCL",
       virt(machine::h100(2).container("docker"), {"veth1"}),
       {},
       kNoIb},
      {"no physical interface up", eth0_down(virt(machine::h100(2), {"br-1"})), {}, kNoIb},
      {"bonds and VLANs may carry the host's address: kept",
       virt(machine::h100(2), {"bond0", "eth0.100", "virbr0", "cali1f"}),
       {},
       plus(kNoIb, {{"NCCL_SOCKET_IFNAME", "^lo,virbr,cali"}})},
      {"IPoIB up: NCCL picks ib* by itself", virt(machine::h100(2).interface("ib0"), {"br-1"}), {}, kNoIb},
      {"a prefix that would hide a real interface is dropped",
       virt(machine::h100(2).interface("cni-uplink"), {"cni0", "veth1"}),
       {},
       plus(kNoIb, {{"NCCL_SOCKET_IFNAME", "^lo,veth"}})},
  };
}

TEST(Nccl, OnlyWhenNcclIsInPlay) { run_table(rule_nccl, scope_rows()); }
TEST(Nccl, P2pOffOnlyWhereTheDriverSaysSo) { run_table(rule_nccl, nccl_p2p_rows()); }
TEST(Nccl, SocketInterfacesFromWhatWasSensed) { run_table(rule_nccl, interface_rows()); }

TEST(Nccl, NeverPinsAlgorithmsOrTouchesNvls) {
  for (const auto& f : fixtures()) {
    Decision d = rule_nccl(f.make(), options_with({{"WORLD_SIZE", "16"}}));
    for (const auto& s : d.settings)
      for (const char* banned : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE"})
        EXPECT_NE(s.name, banned) << f.name;
  }
}

}  // namespace
}  // namespace gpuenv
