// WorldComm over c10d (train/distributed.h). Without the Gloo headers (NMT_WITH_GLOO unset) this
// compiles to a WorldComm whose multi-process constructor says what to install.
#include "train/distributed.h"

#include <chrono>
#include <thread>

#include <c10/util/Exception.h>
#include <torch/version.h>

#include "core/error.h"

#ifdef NMT_WITH_GLOO
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(USE_C10D_NCCL) && TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define NMT_WITH_NCCL 1
#endif
#endif

namespace nmt {

#ifdef NMT_WITH_GLOO
namespace {

using Seconds = std::chrono::duration<double>;
using std::chrono::milliseconds;

/// The first line of a c10d exception's message (1.13's c10::Error carries a backtrace).
std::string first_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  const auto newline = text.find('\n');
  return newline == std::string::npos ? text : text.substr(0, newline);
}

milliseconds to_ms(double seconds) { return milliseconds(int64_t(seconds * 1000.0)); }

}  // namespace
#endif

bool distributed_support() {
#ifdef NMT_WITH_GLOO
  return true;
#else
  return false;
#endif
}

#ifdef NMT_WITH_GLOO

#if TORCH_VERSION_MAJOR >= 2
using ProcessGroupBase = c10d::Backend;  // 2.x: the backends derive from Backend
#else
using ProcessGroupBase = c10d::ProcessGroup;
#endif

struct WorldComm::Impl {
  DistEnv env;
  at::Device device{at::kCPU};  ///< where collectives' tensors must live (CUDA for NCCL)
  double timeout_s = 300.0;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<ProcessGroupBase> group;

  /// Runs `work`, turning any exception into the one nmt::Error naming rank, phase, address.
  template <class F>
  void guarded(const std::string& phase, F&& work) const {
    try {
      work();
    } catch (const std::exception& e) {
      throw Error("rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                  ": " + phase + " failed (rendezvous " + env.address() + "): " + first_line(e) +
                  ". Another rank has probably stopped or stalled (see its own error); a stall "
                  "ends after train.dist_timeout = " +
                  std::to_string(int64_t(timeout_s)) + " s");
    }
  }
  void connect_store(double rendezvous_s);
  void wait_for_ranks(double rendezvous_s);
  void create_group();
};

void WorldComm::Impl::connect_store(double rendezvous_s) {
  c10d::TCPStoreOptions options;
  options.port = uint16_t(env.master_port);
  options.isServer = env.rank == 0 && !env.agent_store;
  options.waitWorkers = false;  // wait_for_ranks says which ranks are missing
  options.timeout = to_ms(rendezvous_s);
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    const std::string who =
        "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) + ": ";
    if (options.isServer) {
      throw Error(who + "cannot host the rendezvous store at " + env.address() + ": " +
                  first_line(e) + " (is the port in use? choose another MASTER_PORT)");
    }
    throw Error(who + "no rendezvous store answered at " + env.address() + " within " +
                std::to_string(int64_t(rendezvous_s)) + " s: " + first_line(e) +
                " (is rank 0 running, with the same MASTER_ADDR and MASTER_PORT?)");
  }
  const std::string prefix =
      env.agent_store ? "/worker/attempt_" + std::to_string(env.restart_count) + "/nmt" : "nmt";
  store = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
}

void WorldComm::Impl::wait_for_ranks(double rendezvous_s) {
  const auto deadline = std::chrono::steady_clock::now() + Seconds(rendezvous_s);
  int64_t joined = 0;
  guarded("start-up: joining the rendezvous", [&] {
    store->set("rank/" + std::to_string(env.rank), std::vector<uint8_t>{1});
    joined = store->add("joined", 1);
    while (joined < env.world_size && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
      joined = store->add("joined", 0);
    }
  });
  if (joined >= env.world_size) return;
  std::string missing;
  for (int64_t r = 0; r < env.world_size; ++r) {
    if (!store->check({"rank/" + std::to_string(r)})) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
  }
  throw Error("rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
              ": only " + std::to_string(joined) + " of " + std::to_string(env.world_size) +
              " ranks joined the rendezvous at " + env.address() + " within " +
              std::to_string(int64_t(rendezvous_s)) + " s (missing: rank " + missing +
              "); start every rank with the same WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
}

void WorldComm::Impl::create_group() {
  guarded("start-up: creating the process group", [&] {
#ifdef NMT_WITH_NCCL
    if (device.is_cuda()) {
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = to_ms(timeout_s);
      group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, int(env.rank), int(env.world_size),
                                                          options);
      return;
    }
#endif
    auto options = c10d::ProcessGroupGloo::Options::create(to_ms(timeout_s));
    const bool loopback = env.master_addr == "127.0.0.1" || env.master_addr == "localhost" ||
                          env.master_addr == "::1";
    if (!env.socket_ifname.empty()) {
      options->devices.push_back(
          c10d::ProcessGroupGloo::createDeviceForInterface(env.socket_ifname));
    } else if (loopback) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, int(env.rank), int(env.world_size),
                                                        options);
  });
}

WorldComm::WorldComm(const DistEnv& env, const at::Device& device, double timeout_s)
    : impl_(std::make_unique<Impl>()), rank_(env.rank), size_(env.world_size) {
  impl_->env = env;
  impl_->timeout_s = timeout_s;
#ifdef NMT_WITH_NCCL
  if (device.is_cuda()) impl_->device = device;  // NCCL's tensors live there
#else
  (void)device;  // Gloo: collectives on CPU tensors
#endif
  const double rendezvous_s = std::min(timeout_s, 60.0);
  impl_->connect_store(rendezvous_s);
  impl_->wait_for_ranks(rendezvous_s);
  impl_->create_group();
}

/// Runs `collective` on `tensor` as the group's device holds it, and copies the result back when
/// that took a copy (a CPU tensor under NCCL).
template <class Collective>
void on_group_device(at::Tensor& tensor, const at::Device& device, Collective&& collective) {
  std::vector<at::Tensor> tensors{tensor.to(device)};
  collective(tensors);
  if (!tensors[0].is_same(tensor)) tensor.copy_(tensors[0]);
}

void WorldComm::allreduce_sum(at::Tensor& tensor, const std::string& phase) {
  if (!impl_) return;
  impl_->guarded(phase, [&] {
    on_group_device(tensor, impl_->device, [&](auto& t) { impl_->group->allreduce(t)->wait(); });
  });
}

void WorldComm::broadcast(at::Tensor& tensor, const std::string& phase) {
  if (!impl_) return;
  impl_->guarded(phase, [&] {
    on_group_device(tensor, impl_->device, [&](auto& t) { impl_->group->broadcast(t)->wait(); });
  });
}

void WorldComm::barrier(const std::string& phase) {
  if (!impl_) return;
  impl_->guarded(phase, [&] { impl_->group->barrier()->wait(); });
}

void WorldComm::publish(const std::string& key, const std::string& value) {
  if (!impl_) return;
  impl_->guarded("publishing " + key,
                 [&] { impl_->store->set(key, std::vector<uint8_t>(value.begin(), value.end())); });
}

std::string WorldComm::fetch(const std::string& key, const std::string& phase) {
  if (!impl_) return {};
  std::vector<uint8_t> value;
  impl_->guarded(phase, [&] {
    impl_->store->wait({key}, to_ms(impl_->timeout_s));
    value = impl_->store->get(key);
  });
  return std::string(value.begin(), value.end());
}

#else  // no Gloo headers: one process only

struct WorldComm::Impl {};

WorldComm::WorldComm(const DistEnv& env, const at::Device&, double) {
  throw Error("WORLD_SIZE = " + std::to_string(env.world_size) +
              ": this nmt was built without multi-process training (c10d's Gloo headers were "
              "missing): install libgloo-dev (scripts/setup.sh does) and rebuild, or run one "
              "process (WORLD_SIZE unset or 1)");
}

void WorldComm::allreduce_sum(at::Tensor&, const std::string&) {}
void WorldComm::broadcast(at::Tensor&, const std::string&) {}
void WorldComm::barrier(const std::string&) {}
void WorldComm::publish(const std::string&, const std::string&) {}
std::string WorldComm::fetch(const std::string&, const std::string&) { return {}; }

#endif

WorldComm::WorldComm() = default;

WorldComm::~WorldComm() = default;

std::string WorldComm::who() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(size_);
}

}  // namespace nmt
