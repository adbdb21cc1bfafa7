#pragma once
// safetensors files from C++: the same bytes python/tensorplay/serialization.py's save_file writes
// for a flat dict of name -> tensor, and the same checks its load_file applies when reading one.
// A file saved here loads in Python (tensorplay.load_file / tensorplay.load, and torch's
// safetensors) as a dict in the same order; any safetensors file loads here.
//
// Layout: 8 bytes of header length N (little-endian uint64), N bytes of JSON header padded with
// spaces to a multiple of 8, then each tensor's raw little-endian bytes, back to back.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensorplay/core/tensor.h"

namespace tp::serialize {

// Module state is ordered, so tensors travel as an ordered list; the file keeps that order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes tensors to path, through a temporary file in the same directory renamed into place, so
// path holds either its previous contents or the whole new file. metadata joins the header's
// "__metadata__" next to the entries Python writes ("format": "pt" and "tensorplay.structure",
// which are reserved). Tensors are written contiguous and whole, even when they share storage.
// Raises ValueError for duplicate, reserved or non-UTF-8 names, TypeError for a complex dtype,
// RuntimeError when the file can't be written.
void save_safetensors(const NamedTensors& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});

// The tensors of a safetensors file, in header order, as new CPU tensors. The file is untrusted:
// every size and offset is checked against it before anything is allocated, and a malformed,
// truncated or inconsistent file raises ValueError naming the file and what is wrong (an
// unreadable one RuntimeError). A Python-saved nested object loads as its tensors, named by their
// dotted paths; its non-tensor values are not returned.
NamedTensors load_safetensors(const std::string& path);

// The header's "__metadata__" (empty if there is none), with the same checks of the header and
// file size as load_safetensors; the tensor data is not read.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

}  // namespace tp::serialize

namespace tp {
using serialize::load_safetensors;
using serialize::load_safetensors_metadata;
using serialize::save_safetensors;
}  // namespace tp
