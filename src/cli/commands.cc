#include "cli/commands.h"

namespace gpuenv {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"detect", "Show what was sensed: GPUs, driver, host", setup_detect},
      {"env", "Print the environment to use (eval \"$(gpuenv env)\")", setup_env},
      {"explain", "Show each setting with the reason for it, and the last verdict of a command: gpuenv explain [--] [CMD ...]", setup_explain, true},
      {"run", "Run a command under the environment: gpuenv run [--] CMD ...", setup_run, true},
      {"init", "Container entrypoint: sense, decide, write the plan, run CMD: gpuenv init [--] CMD ...", setup_init, true},
      {"serve", "Run a service as a non-root user: gpuenv serve jupyter|ssh", setup_serve},
      {"doctor", "Find what keeps CUDA from working or fast here, and the fix", setup_doctor},
      {"labels", "Write Node Feature Discovery's feature file of GPU labels (Kubernetes)", setup_labels},
      {"export", "Serve Prometheus metrics of the GPUs: gpuenv export [--listen 127.0.0.1:9400]", setup_export},
      {"inspect", "List the CUDA kernels in binaries and whether each GPU can run them", setup_inspect},
      {"bench", "Measure the GPUs (GEMM, memory, host links, P2P, NCCL) against their spec peaks", setup_bench},
      {"plan-memory", "Will this model train here: peak memory per GPU, largest batch, what to change",
       setup_plan_memory, true},
      {"check", "Health check: gpuenv check [--quick | --long]; exit status pass/fail", setup_check},
      {"report", "Watched jobs: a table, or one job's timeline and verdict: gpuenv report [JOB] [--json] [--svg FILE]; any "
       "job on the fleet from Prometheus: gpuenv report --job ID --prometheus URL", setup_report},
      {"help", "Show the overview, or one command's flags: gpuenv help [COMMAND]", setup_help},
      {"completion", "Print the shell's completion script: source <(gpuenv completion bash|zsh), or fish", setup_completion},
      {"man", "Print the manual page (roff): gpuenv man | man -l -", setup_man},
  };
  return kCommands;
}

std::vector<std::string> command_names() {
  std::vector<std::string> out;
  for (const Command& c : commands()) out.push_back(c.name);
  return out;
}

}  // namespace gpuenv
