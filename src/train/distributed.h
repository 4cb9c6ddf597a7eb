#pragma once

// Training on several processes (docs/distributed.md): c10d process groups, Gloo on the CPU and
// NCCL on CUDA when LibTorch has it, started by torchrun or any launcher that sets RANK,
// WORLD_SIZE, MASTER_ADDR and MASTER_PORT. With WORLD_SIZE unset or 1, WorldComm is a no-op and
// c10d is never touched.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "core/files.h"

namespace nmt {

/// A process's place in a multi-process run, as the launcher's environment describes it.
struct DistEnv {
  int64_t rank = 0;              ///< RANK: 0 .. world_size - 1
  int64_t world_size = 1;        ///< WORLD_SIZE: processes in the run
  int64_t local_rank = 0;        ///< LOCAL_RANK: index on this machine (picks cuda:LOCAL_RANK)
  int64_t local_world_size = 1;  ///< LOCAL_WORLD_SIZE: processes on this machine
  std::string master_addr = "127.0.0.1";  ///< MASTER_ADDR: where rank 0's store listens
  int64_t master_port = 29500;            ///< MASTER_PORT
  /// TORCHELASTIC_USE_AGENT_STORE=True: torchrun's agent hosts the store at MASTER_ADDR:PORT;
  /// every rank connects as a client under the prefix /worker/attempt_<restart_count>.
  bool agent_store = false;
  int64_t restart_count = 0;  ///< TORCHELASTIC_RESTART_COUNT
  std::string socket_ifname;  ///< GLOO_SOCKET_IFNAME: the interface Gloo binds to (multi-node)
  int64_t omp_threads = 0;    ///< OMP_NUM_THREADS; 0 = unset

  bool distributed() const { return world_size > 1; }
  std::string address() const { return master_addr + ":" + std::to_string(master_port); }
};

/// Reads DistEnv from environment variables through `lookup` (std::getenv, or a map in tests;
/// null = unset). Pure. WORLD_SIZE unset or 1 gives a one-process DistEnv whatever else is set.
/// A malformed or inconsistent value (RANK outside [0, WORLD_SIZE), a port outside 1..65535,
/// a missing MASTER_PORT or RANK with WORLD_SIZE > 1) is an nmt::Error naming the variable.
DistEnv parse_dist_env(const std::function<const char*(const char*)>& lookup);

/// LibTorch CPU threads for one rank: `configured` (train.threads) when not 0; else
/// OMP_NUM_THREADS when set; else the machine's `cores` shared by its local ranks (at least 1).
int64_t rank_threads(const DistEnv& env, int64_t configured, int64_t cores);

/// The device of one rank: cuda:LOCAL_RANK when `device` is CUDA and the run has several
/// processes, else `device`.
at::Device rank_device(const at::Device& device, const DistEnv& env);

/// True when this nmt was built with c10d's Gloo headers (NMT_WITH_GLOO).
bool distributed_support();

/// The collectives the trainer needs, across the ranks of one run. Every call either completes
/// on all ranks or throws an nmt::Error naming this rank, `phase` (what the run was doing, e.g.
/// "step 12: gradient allreduce") and the rendezvous address, within the timeout; a no-op with
/// one process.
class WorldComm {
 public:
  /// One process: no c10d.
  WorldComm();
  /// Joins the run `env` describes (env.world_size > 1): the store at MASTER_ADDR:MASTER_PORT
  /// (hosted by rank 0 unless torchrun's agent does), a check that all ranks joined within
  /// min(timeout_s, 60 s), then the process group (NCCL when `device` is CUDA and LibTorch has
  /// it, else Gloo) whose collectives time out after `timeout_s`.
  WorldComm(const DistEnv& env, const at::Device& device, double timeout_s);
  ~WorldComm();
  WorldComm(const WorldComm&) = delete;
  WorldComm& operator=(const WorldComm&) = delete;

  int64_t rank() const { return rank_; }
  int64_t size() const { return size_; }
  bool is_main() const { return rank_ == 0; }
  /// "rank R of W" for messages.
  std::string who() const;

  /// Sums `tensor` (any device, dtype Gloo/NCCL reduce) over the ranks, in place.
  void allreduce_sum(at::Tensor& tensor, const std::string& phase);
  /// Copies rank 0's `tensor` into every rank's, in place.
  void broadcast(at::Tensor& tensor, const std::string& phase);
  /// Returns when every rank has called it.
  void barrier(const std::string& phase);
  /// Rank 0 publishes `value` under `key`; the others' fetch waits for it (at most the
  /// collective timeout) and returns it.
  void publish(const std::string& key, const std::string& value);
  std::string fetch(const std::string& key, const std::string& phase);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t rank_ = 0;
  int64_t size_ = 1;
};

/// Sums the gradients of `parameters` over the ranks through one flat fp32 buffer (one
/// collective per step: per-tensor allreduces took twice as long). Undefined gradients count as
/// zeros and come back defined.
void allreduce_gradients(WorldComm& comm, const std::vector<at::Tensor>& parameters,
                         const std::string& phase);

/// Copies rank 0's parameter values to every rank (one flat buffer).
void broadcast_parameters(WorldComm& comm, const std::vector<at::Tensor>& parameters);

/// Checks that every rank has the same `values` (named, e.g. {"parameters", 1234}); otherwise
/// an nmt::Error on every rank naming the first rank that differs, the values, and `hint`.
void check_same_on_all_ranks(WorldComm& comm,
                             const std::vector<std::pair<std::string, int64_t>>& values,
                             const std::string& hint);

}  // namespace nmt
