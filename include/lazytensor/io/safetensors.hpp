#pragma once
// Saving and loading tensors as safetensors files, the format of Hugging Face's `safetensors`
// (io/format.hpp): a file written here loads in Python's safetensors and in PyTorch, and one
// written there loads here. Declared here, defined once per program (io/safetensors_io.hpp).
#include <map>
#include <string>

#include "lazytensor/io/format.hpp"
#include "lazytensor/nn/module.hpp"

namespace lt {

/// Tensors by name, in name order: a state dict (nn::StateDict is the same type) or any map.
using TensorMap = std::map<std::string, Tensor>;
using io::Metadata;

/// Options of lt::save and Checkpoint::save.
struct SaveOptions {
  /// Sync the file and its directory entry to the disk before save() returns, so that the new
  /// file survives a power cut. Off, a crash of the process still leaves the old file or the
  /// new one, never a torn one: the file is replaced by a rename either way.
  bool durable = true;
  /// Among the replicas of a launch, only the master ordinal writes; the others wait at a
  /// rendezvous until the file is written (PyTorch/XLA's xm.save). Outside a launch: a save.
  bool master_only = false;
};

/// Options of lt::load.
struct LoadOptions {
  /// Tensors loaded onto lt::cpu view the mapped file instead of a copy of it: no copy, and
  /// pages are read from the disk as they are first touched. Writing to such a tensor changes
  /// the tensor only, never the file. A tensor whose bytes are not aligned for its dtype in the
  /// file (a header length that is not a multiple of 8) is copied all the same.
  bool mmap = false;
};

/// What a file holds: its tensors and its "__metadata__".
struct SafetensorsContents {
  /// The tensors by name.
  TensorMap tensors;
  /// The file's "__metadata__" strings.
  Metadata metadata;
};

/// Writes `tensors` to `path` as a safetensors file with string `metadata`, replacing the file
/// atomically (a temporary file beside it, then a rename): a reader sees the old file or the
/// new one, and a failure (an unwritable directory, a full disk) raises lt::Error and leaves
/// the old file as it was. Tensors of a lazy device are computed first, in one barrier per
/// device, then written one by one from device memory: saving needs no host copy of the
/// whole map, only one of the largest non-contiguous tensor. Data is laid out as the
/// reference writer lays it out (by dtype size, then by name).
void save(const TensorMap& tensors, const std::string& path, const Metadata& metadata = {},
          const SaveOptions& options = {});

/// The tensors of the safetensors file `path`, on `device`. Nothing in the file is trusted:
/// a bad header or a truncated file raises lt::Error naming the file and the fault.
TensorMap load(const std::string& path, Device device = cpu, const LoadOptions& options = {});

/// load() with the file's "__metadata__".
SafetensorsContents load_with_metadata(const std::string& path, Device device = cpu,
                                       const LoadOptions& options = {});

/// The "__metadata__" of `path` alone (its header is checked; no tensor is read).
Metadata load_metadata(const std::string& path);

/// Loads `path` into `module` through its load_state_dict (to each tensor's device and
/// dtype): a bad file, a missing or unexpected name or a wrong shape raises lt::Error, and
/// then nothing of the module has changed.
void load_into(nn::Module& module, const std::string& path);

}  // namespace lt
