// The parts of distributed training that need no c10d: the launcher's environment, thread
// shares, and the flat-buffer collectives built on WorldComm (train/distributed.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "core/error.h"
#include "train/distributed.h"

namespace nmt {
namespace {

/// The integer in environment variable `name`, or `fallback` when unset or empty.
int64_t env_int(const std::function<const char*(const char*)>& lookup, const char* name,
                int64_t fallback, int64_t min, int64_t max) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max) {
    throw Error("environment variable " + std::string(name) + " = '" + text +
                "' is not valid: use an integer in [" + std::to_string(min) + ", " +
                std::to_string(max) + "]");
  }
  return value;
}

std::string env_text(const std::function<const char*(const char*)>& lookup, const char* name,
                     const std::string& fallback) {
  const char* text = lookup(name);
  return text == nullptr || *text == '\0' ? fallback : std::string(text);
}

void require(const std::function<const char*(const char*)>& lookup, const char* name,
             int64_t world) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') {
    throw Error("WORLD_SIZE = " + std::to_string(world) + " but " + name +
                " is not set: start the ranks with torchrun, or set RANK, WORLD_SIZE, "
                "MASTER_ADDR and MASTER_PORT for each (docs/distributed.md)");
  }
}

}  // namespace

DistEnv parse_dist_env(const std::function<const char*(const char*)>& lookup) {
  DistEnv env;
  env.world_size = env_int(lookup, "WORLD_SIZE", 1, 1, 65536);
  env.omp_threads = env_int(lookup, "OMP_NUM_THREADS", 0, 1, 1024);
  if (!env.distributed()) return env;
  require(lookup, "RANK", env.world_size);
  require(lookup, "MASTER_PORT", env.world_size);
  env.rank = env_int(lookup, "RANK", 0, 0, env.world_size - 1);
  env.master_port = env_int(lookup, "MASTER_PORT", 0, 1, 65535);
  env.master_addr = env_text(lookup, "MASTER_ADDR", "127.0.0.1");
  env.local_world_size = env_int(lookup, "LOCAL_WORLD_SIZE", 1, 1, env.world_size);
  env.local_rank = env_int(lookup, "LOCAL_RANK", 0, 0, env.local_world_size - 1);
  const std::string agent = env_text(lookup, "TORCHELASTIC_USE_AGENT_STORE", "");
  env.agent_store = agent == "True" || agent == "true" || agent == "1";
  env.restart_count = env_int(lookup, "TORCHELASTIC_RESTART_COUNT", 0, 0, 1 << 30);
  env.socket_ifname = env_text(lookup, "GLOO_SOCKET_IFNAME", "");
  return env;
}

int64_t rank_threads(const DistEnv& env, int64_t configured, int64_t cores) {
  if (configured > 0) return configured;
  if (env.omp_threads > 0) return env.omp_threads;
  return std::max<int64_t>(1, cores / std::max<int64_t>(env.local_world_size, 1));
}

at::Device rank_device(const at::Device& device, const DistEnv& env) {
  if (!device.is_cuda() || !env.distributed()) return device;
  return at::Device(at::kCUDA, at::DeviceIndex(env.local_rank));
}

void allreduce_gradients(WorldComm& comm, const std::vector<at::Tensor>& parameters,
                         const std::string& phase) {
  if (comm.size() == 1 || parameters.empty()) return;
  int64_t total = 0;
  for (const auto& p : parameters) total += p.numel();
  auto flat = at::empty({total}, parameters.front().options().dtype(at::kFloat));
  int64_t offset = 0;
  for (const auto& p : parameters) {
    auto part = flat.narrow(0, offset, p.numel());
    if (p.grad().defined()) {
      part.copy_(p.grad().reshape(-1));
    } else {
      part.zero_();  // this rank had no batch in the step (an epoch's short last step)
    }
    offset += p.numel();
  }
  comm.allreduce_sum(flat, phase);
  offset = 0;
  for (auto p : parameters) {
    auto part = flat.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined()) {
      p.mutable_grad().copy_(part);
    } else {
      p.mutable_grad() = part.to(p.dtype()).clone();
    }
    offset += p.numel();
  }
}

void broadcast_parameters(WorldComm& comm, const std::vector<at::Tensor>& parameters) {
  if (comm.size() == 1 || parameters.empty()) return;
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> flat_parts;
  for (const auto& p : parameters) flat_parts.push_back(p.detach().reshape(-1).to(at::kFloat));
  auto flat = at::cat(flat_parts);
  comm.broadcast(flat, "start-up: broadcast of rank 0's parameters");
  int64_t offset = 0;
  for (auto p : parameters) {
    p.detach().copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

void check_same_on_all_ranks(WorldComm& comm,
                             const std::vector<std::pair<std::string, int64_t>>& values,
                             const std::string& hint) {
  if (comm.size() == 1) return;
  const auto n = int64_t(values.size());
  auto table = at::zeros({comm.size(), n}, at::kLong);  // row r: rank r's values
  for (int64_t i = 0; i < n; ++i) table[comm.rank()][i] = values[size_t(i)].second;
  comm.allreduce_sum(table, "start-up: comparing the ranks' " + hint);
  const auto rows = table.accessor<int64_t, 2>();
  for (int64_t r = 1; r < comm.size(); ++r) {
    for (int64_t i = 0; i < n; ++i) {
      if (rows[r][i] == rows[0][i]) continue;
      std::ostringstream message;
      message << comm.who() << ": rank " << r << "'s " << values[size_t(i)].first << " ("
              << rows[r][i] << ") differs from rank 0's (" << rows[0][i] << "): every rank "
              << "must start with the same " << hint;
      throw Error(message.str());
    }
  }
}

}  // namespace nmt
