#include "sense/host/proc_tree.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "sys/fs.h"

namespace gpuenv {
namespace {

std::optional<ProcStat> read_stat(const std::string& proc, int pid) {
  std::string text, err;
  ProcStat s;
  if (!fs::read_file(proc + "/" + std::to_string(pid) + "/stat", &text, &err) || !parse_proc_stat(text, &s, &err))
    return std::nullopt;
  return s;
}

// The direct children of pid, from each of its threads' children file;
// nullopt when the kernel has no such file.
std::optional<std::vector<int>> children(const std::string& proc, int pid) {
  std::string task = proc + "/" + std::to_string(pid) + "/task", err;
  std::vector<std::string> tids;
  if (!fs::list_dir(task, &tids, &err)) return std::vector<int>{};  // it exited
  std::vector<int> out;
  bool any = false;
  for (const auto& tid : tids) {
    std::string text;
    if (!fs::read_file(task + "/" + tid + "/children", &text, &err)) continue;
    any = true;
    for (int c : parse_pid_list(text)) out.push_back(c);
  }
  if (!any && !tids.empty() && !fs::exists(task + "/" + tids[0] + "/children")) return std::nullopt;
  return out;
}

std::vector<ProcStat> scan_tree(const std::string& proc, int root) {
  std::vector<std::string> names;
  std::string err;
  std::multimap<int, ProcStat> by_parent;
  if (fs::list_dir(proc, &names, &err))
    for (const auto& n : names) {
      std::vector<int> pid = parse_pid_list(n);
      if (pid.size() != 1 || std::to_string(pid[0]) != n) continue;
      if (auto s = read_stat(proc, pid[0])) by_parent.emplace(s->ppid, *s);
    }
  std::vector<ProcStat> out;
  std::vector<int> todo = {root};
  std::set<int> seen = {root};
  while (!todo.empty()) {
    int p = todo.back();
    todo.pop_back();
    auto [begin, end] = by_parent.equal_range(p);
    for (auto it = begin; it != end; ++it)
      if (seen.insert(it->second.pid).second) out.push_back(it->second), todo.push_back(it->second.pid);
  }
  return out;
}

}  // namespace

std::vector<ProcStat> process_tree(int root, const std::string& proc) {
  std::vector<ProcStat> out;
  std::vector<int> todo = {root};
  std::set<int> seen = {root};
  while (!todo.empty()) {
    int p = todo.front();
    todo.erase(todo.begin());
    std::optional<std::vector<int>> kids = children(proc, p);
    if (!kids) return scan_tree(proc, root);
    for (int c : *kids) {
      if (!seen.insert(c).second) continue;
      std::optional<ProcStat> s = read_stat(proc, c);
      if (!s || s->state == 'Z' || s->state == 'X') continue;
      out.push_back(*s);
      todo.push_back(c);
    }
  }
  return out;
}

TreeCpu CpuMeter::read(const std::vector<ProcStat>& tree, double seconds) {
  if (hz_ == 0) hz_ = std::max(1L, sysconf(_SC_CLK_TCK));
  TreeCpu out;
  std::map<int, std::uint64_t> now;
  for (const auto& p : tree) {
    std::uint64_t ticks = p.utime + p.stime;
    auto it = ticks_.find(p.pid);
    std::uint64_t before = it == ticks_.end() || it->second > ticks ? 0 : it->second;
    double cores = seconds > 0 ? double(ticks - before) / double(hz_) / seconds : 0;
    out.cores += cores;
    out.top_cores = std::max(out.top_cores, cores);
    ++out.processes;
    now[p.pid] = ticks;
  }
  ticks_ = std::move(now);
  return out;
}

}  // namespace gpuenv
