// tensorplay._C._distributed, for tensorplay.distributed: the stores, Work, ReduceOp and the Gloo
// process group (present only in a build that found Gloo). Every call that waits on other
// processes releases the GIL.

#include <nanobind/stl/chrono.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "tensorplay/distributed/file_store.h"
#include "tensorplay/distributed/hash_store.h"
#include "tensorplay/distributed/prefix_store.h"
#include "tensorplay/distributed/tcp_store.h"
#include "tensorplay/distributed/work.h"
#ifdef TP_HAS_GLOO
#include "tensorplay/distributed/process_group_gloo.h"
#endif

namespace tp::python {

namespace dist = tp::distributed;

namespace {

// Keys are str; values may be str or bytes, as PyTorch's stores take them.
dist::Bytes value_bytes(nb::handle value) {
  if (nb::isinstance<nb::bytes>(value)) {
    auto b = nb::borrow<nb::bytes>(value);
    auto* data = static_cast<const uint8_t*>(b.data());
    return dist::Bytes(data, data + b.size());
  }
  if (nb::isinstance<nb::str>(value)) return dist::to_bytes(nb::cast<std::string>(value));
  throw nb::type_error("a store's values are str or bytes");
}

nb::bytes as_bytes(const dist::Bytes& b) { return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

using released = nb::call_guard<nb::gil_scoped_release>;

void init_stores(nb::module_& d) {
  nb::class_<dist::Store>(d, "Store")
      .def(
          "set",
          [](dist::Store& s, const std::string& key, nb::handle value) {
            dist::Bytes bytes = value_bytes(value);
            nb::gil_scoped_release released;
            s.set(key, bytes);
          },
          "key"_a, "value"_a)
      .def(
          "get",
          [](dist::Store& s, const std::string& key) {
            dist::Bytes value;
            {
              nb::gil_scoped_release released;
              value = s.get(key);
            }
            return as_bytes(value);
          },
          "key"_a)
      .def("add", &dist::Store::add, "key"_a, "value"_a, released())
      .def(
          "compare_set",
          [](dist::Store& s, const std::string& key, nb::handle expected, nb::handle desired) {
            dist::Bytes e = value_bytes(expected), v = value_bytes(desired), result;
            {
              nb::gil_scoped_release released;
              result = s.compare_set(key, e, v);
            }
            return as_bytes(result);
          },
          "key"_a, "expected_value"_a, "desired_value"_a)
      .def("check", &dist::Store::check, "keys"_a, released())
      .def("delete_key", &dist::Store::delete_key, "key"_a, released())
      .def("num_keys", &dist::Store::num_keys, released())
      .def(
          "wait", [](dist::Store& s, const std::vector<std::string>& keys) { s.wait(keys); }, "keys"_a, released())
      .def(
          "wait",
          [](dist::Store& s, const std::vector<std::string>& keys, dist::Duration timeout) { s.wait(keys, timeout); },
          "keys"_a, "timeout"_a, released())
      .def("set_timeout", &dist::Store::set_timeout, "timeout"_a)
      .def_prop_ro("timeout", &dist::Store::timeout);

  nb::class_<dist::HashStore, dist::Store>(d, "HashStore").def(nb::init<>());
  nb::class_<dist::PrefixStore, dist::Store>(d, "PrefixStore")
      .def(nb::init<std::string, dist::StorePtr>(), "prefix"_a, "store"_a)
      .def_prop_ro("underlying_store", &dist::PrefixStore::underlying_store);
  nb::class_<dist::FileStore, dist::Store>(d, "FileStore")
      .def(nb::init<std::string, int>(), "file_name"_a, "world_size"_a = -1, released())
      .def_prop_ro("path", &dist::FileStore::path);
  nb::class_<dist::TCPStore, dist::Store>(d, "TCPStore")
      .def(nb::init<std::string, uint16_t, std::optional<int>, bool, dist::Duration, bool>(), "host_name"_a, "port"_a,
           "world_size"_a = nb::none(), "is_master"_a = false, "timeout"_a = dist::Store::kDefaultTimeout,
           "wait_for_workers"_a = true, released())
      .def_prop_ro("host", &dist::TCPStore::host)
      .def_prop_ro("port", &dist::TCPStore::port);
}

void init_work(nb::module_& d) {
  nb::class_<dist::Work>(d, "Work")
      .def("wait", &dist::Work::wait, "timeout"_a = dist::Work::kNoTimeout, released())
      .def("is_completed", &dist::Work::is_completed)
      .def("is_success", &dist::Work::is_success)
      // The error as an exception object (None while running or after success).
      .def("exception",
           [](dist::Work& w) -> nb::object {
             std::exception_ptr error = w.exception();
             if (!error) return nb::none();
             try {
               std::rethrow_exception(error);
             } catch (const std::exception& e) {
               return nb::module_::import_("builtins").attr("RuntimeError")(e.what());
             }
           })
      .def("result", &dist::Work::result)
      .def("_source_rank", &dist::Work::source_rank);
}

#ifdef TP_HAS_GLOO
void init_process_group(nb::module_& d) {
  nb::enum_<dist::ReduceOp>(d, "RedOpType")
      .value("SUM", dist::ReduceOp::SUM)
      .value("AVG", dist::ReduceOp::AVG)
      .value("PRODUCT", dist::ReduceOp::PRODUCT)
      .value("MIN", dist::ReduceOp::MIN)
      .value("MAX", dist::ReduceOp::MAX)
      .value("BAND", dist::ReduceOp::BAND)
      .value("BOR", dist::ReduceOp::BOR)
      .value("BXOR", dist::ReduceOp::BXOR);

  using PG = dist::ProcessGroupGloo;
  nb::class_<PG>(d, "ProcessGroupGloo")
      .def(nb::init<dist::StorePtr, int, int, dist::Duration, std::string>(), "store"_a, "rank"_a, "size"_a,
           "timeout"_a, "hostname"_a = "", released())
      .def("rank", &PG::rank)
      .def("size", &PG::size)
      .def("name", &PG::backend_name)
      .def_prop_ro("timeout", &PG::timeout)
      .def("sequence_number", &PG::sequence_number)
      .def("all_reduce", &PG::all_reduce, "tensor"_a, "op"_a, "async_op"_a = true, released())
      .def("broadcast", &PG::broadcast, "tensor"_a, "root"_a, "async_op"_a = true, released())
      .def("reduce", &PG::reduce, "tensor"_a, "root"_a, "op"_a, "async_op"_a = true, released())
      .def("all_gather", &PG::all_gather, "outputs"_a, "input"_a, "async_op"_a = true, released())
      .def("all_gather_into_tensor", &PG::all_gather_into_tensor, "output"_a, "input"_a, "async_op"_a = true,
           released())
      .def("reduce_scatter_tensor", &PG::reduce_scatter_tensor, "output"_a, "input"_a, "op"_a, "async_op"_a = true,
           released())
      .def("gather", &PG::gather, "outputs"_a, "input"_a, "root"_a, "async_op"_a = true, released())
      .def("scatter", &PG::scatter, "output"_a, "inputs"_a, "root"_a, "async_op"_a = true, released())
      .def("all_to_all_single", &PG::all_to_all_single, "output"_a, "input"_a, "output_splits"_a, "input_splits"_a,
           "async_op"_a = true, released())
      .def("barrier", &PG::barrier, "async_op"_a = true, released())
      .def("monitored_barrier", &PG::monitored_barrier, "timeout"_a, "wait_all_ranks"_a, released())
      .def("send", &PG::send, "tensor"_a, "dst"_a, "tag"_a, released())
      .def("recv", &PG::recv, "tensor"_a, "src"_a.none(), "tag"_a, released());
}
#endif

}  // namespace

void init_distributed(nb::module_& m) {
  nb::module_ d = m.def_submodule("_distributed", "Stores and process groups (tensorplay.distributed).");
#ifdef TP_HAS_GLOO
  d.attr("has_gloo") = true;
  init_process_group(d);
#else
  d.attr("has_gloo") = false;
#endif
  init_stores(d);
  init_work(d);
}

}  // namespace tp::python
