//===- DeviceTable.cpp - The device peaks, with their sources -------------===//
#include "compiler/cost/DeviceTable.h"

using namespace ampc::cost;

namespace {
constexpr double T = 1e12, G = 1e9, us = 1e-6;

// NCCL's model of a ring all-reduce inside one NVLink node, the one its
// tuner picks a protocol with (src/graph/tuning.cc of recent releases, read
// in a 2.2x one with Blackwell tables; 2.28 the same):
// latency baseLat[Ring] + nsteps x hwLat[NVLINK][Ring] per protocol; bus
// bandwidth the link's (the datasheet's, where NCCL measures its topology)
// with the ring refinements: LL half of it up to llMaxBws (141 GB/s on
// Hopper, 87.7 on Ampere, one node), LL128 0.92 of it. Small messages go
// LL, mid-size ones LL128 (at 8 ranks), the largest Simple.
const LinkProtocol kNcclHopperRing[] = {
    {"LL", 6.6 * us, 0.6 * us, 141 * G},
    {"LL128", 14.0 * us, 1.9 * us, 0.92 * 450 * G},
    {"Simple", 8.4 * us, 3.4 * us, 450 * G},
};
const LinkProtocol kNcclAmpereRing[] = {
    {"LL", 6.6 * us, 0.6 * us, 87.7 * G},
    {"LL128", 14.0 * us, 1.9 * us, 0.92 * 300 * G},
    {"Simple", 8.4 * us, 3.4 * us, 300 * G},
};
// Open MPI's shared-memory all-reduce of 2 ranks here: `SIZES=4 bash
// bench/allreduce.sh` (2.0 us, the latency) and the row's bus bandwidth.
const LinkProtocol kMpiSharedMemory[] = {
    {"MPI", 2.0 * us, 0, 1.47 * G},
};

// Keep docs/cost.md's table in step with this one.
const DeviceSpec kDevices[] = {
    {"h100", "cuda", "NVIDIA H100 SXM5 80 GB (HBM3)", 3.35 * T, 67 * T,
     989.4 * T, 450 * G, kNcclHopperRing,
     "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 3.35 TB/s, FP32 67 "
     "TFLOPS, BF16/FP16 tensor 1979 TFLOPS with sparsity = 989.4 dense, "
     "NVLink 900 GB/s = 450 each way; collective latency and protocols: "
     "NCCL's ring tuning model (src/graph/tuning.cc, recent 2.2x)"},
    {"h200", "cuda", "NVIDIA H200 SXM 141 GB (HBM3e)", 4.8 * T, 67 * T,
     989.4 * T, 450 * G, kNcclHopperRing,
     "NVIDIA H200 Tensor Core GPU datasheet (SXM): 4.8 TB/s, FP32 67 "
     "TFLOPS, BF16/FP16 tensor 1979 TFLOPS with sparsity = 989.4 dense, "
     "NVLink 900 GB/s = 450 each way; collective latency and protocols: "
     "NCCL's ring tuning model (src/graph/tuning.cc, recent 2.2x)"},
    {"a100", "cuda", "NVIDIA A100 SXM4 80 GB (HBM2e)", 2.039 * T, 19.5 * T,
     312 * T, 300 * G, kNcclAmpereRing,
     "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB): 2039 GB/s, FP32 "
     "19.5 TFLOPS, BF16/FP16 tensor 312 TFLOPS dense (624 with sparsity), "
     "NVLink 600 GB/s = 300 each way; collective latency and protocols: "
     "NCCL's ring tuning model (src/graph/tuning.cc, recent 2.2x)"},
    // The CPU target computes half types in float (GEMMs take half inputs
    // and accumulate in FP32), so both rates are the FP32 one.
    {"cpu-2core", "cpu", "the 2-core x86-64 (AMD EPYC) development machine",
     4.3 * G, 17 * G, 17 * G, 1.47 * G, kMpiSharedMemory,
     "measured here, rough (a shared machine): numpy copyto of 256 MiB "
     "float32 (read + write) 4.3 GB/s; numpy float32 matmul 1024^3 "
     "(OpenBLAS) 17 GFLOPS; bench/allreduce.sh, 2 ranks, 25 MiB FP32 sum "
     "(Open MPI 4.1.4, shared memory): bus bandwidth 1.47 GB/s, and at 4 "
     "bytes 2.0 us, the collective latency "
     "(bench/results/allreduce-cpu-2core-20261203.txt)"},
};
} // namespace

llvm::ArrayRef<DeviceSpec> ampc::cost::deviceTable() { return kDevices; }

const DeviceSpec *ampc::cost::findDevice(llvm::StringRef name) {
  for (const DeviceSpec &d : kDevices)
    if (d.name == name)
      return &d;
  return nullptr;
}

std::string ampc::cost::knownDevices() {
  std::string s;
  for (const DeviceSpec &d : kDevices)
    s += (s.empty() ? "" : ", ") + d.name.str();
  return s;
}
