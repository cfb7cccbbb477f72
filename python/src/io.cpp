// Files and data: safetensors, .npy, and the Fashion-MNIST loader with its DataLoader.
#include <nanobind/stl/map.h>

#include "framework/train/io/npy.h"

#include "bindings.h"

namespace ember::py {
namespace {

nb::dict as_dict(const NamedTensors& ts) {
  nb::dict d;
  for (const auto& [name, t] : ts) d[name.c_str()] = t;
  return d;
}

}  // namespace

void bind_io(nb::module_& m) {
  // Named like the safetensors package: save_file(dict, path, metadata), load_file(path) -> dict.
  m.def("save_file", [](const nb::dict& d, const std::string& path, std::optional<io::Metadata> md) {
    NamedTensors ts;  // in the dict's order, which is the file's
    for (auto [k, v] : d) ts.emplace_back(nb::cast<std::string>(k), as_tensor(v, "save_file"));
    io::save_safetensors(path, ts, md ? *md : io::Metadata{});
  }, nb::arg("tensors"), nb::arg("path"), nb::arg("metadata") = nb::none());
  m.def("load_file", [](const std::string& path) { return as_dict(io::load_safetensors(path).tensors); },
        nb::arg("path"));
  m.def("load_file_metadata", [](const std::string& path) { return io::load_safetensors(path).metadata; },
        nb::arg("path"));
  m.def("save_npy", &save_npy, nb::arg("path"), nb::arg("tensor"));
  m.def("load_npy", &load_npy, nb::arg("path"));

  m.def("fashion_mnist_available", &data::fashion_mnist_available, nb::arg("dir") = data::kFashionMnistDir);
  m.def("fashion_mnist_classes", [] {
    return std::vector<std::string>(data::kFashionMnistClasses.begin(), data::kFashionMnistClasses.end());
  });
  nb::class_<data::Dataset>(m, "Dataset")
      .def("__len__", &data::Dataset::size)
      .def("get_batch", [](const data::Dataset& d, const std::vector<int64_t>& idx) {
        data::Batch b = d.get_batch(idx);
        return nb::make_tuple(b.inputs, b.targets);
      }, nb::arg("indices"));
  nb::class_<data::TensorDataset, data::Dataset>(m, "TensorDataset")
      .def(nb::init<Tensor, Tensor>(), nb::arg("inputs"), nb::arg("targets"))
      .def_prop_ro("inputs", &data::TensorDataset::inputs)
      .def_prop_ro("targets", &data::TensorDataset::targets);
  m.def("load_fashion_mnist", [](bool train, const std::string& dir, bool normalize, int64_t limit) {
    data::FashionMnistOptions o;
    o.dir = dir;
    o.normalize = normalize;
    o.limit = limit;
    return data::load_fashion_mnist(train, o);
  }, nb::arg("train") = true, nb::arg("dir") = data::kFashionMnistDir, nb::arg("normalize") = true,
        nb::arg("limit") = 0, release_gil());
  nb::class_<data::DataLoader>(m, "_DataLoader")
      .def("__init__", [](data::DataLoader* self, std::shared_ptr<data::Dataset> d, int64_t batch_size, bool shuffle,
                          bool drop_last, uint64_t seed) {
        data::DataLoaderOptions o;
        o.batch_size = batch_size;
        o.shuffle = shuffle;
        o.drop_last = drop_last;
        o.seed = seed;
        new (self) data::DataLoader(std::move(d), o);
      }, nb::arg("dataset"), nb::arg("batch_size") = 64, nb::arg("shuffle") = false, nb::arg("drop_last") = false,
           nb::arg("seed") = 0)
      .def("__len__", &data::DataLoader::num_batches)
      .def("order", &data::DataLoader::order, nb::arg("epoch"))
      .def("batch", [](const data::DataLoader& l, const std::vector<int64_t>& order, int64_t i) {
        data::Batch b = l.batch(order, i);
        return nb::make_tuple(b.inputs, b.targets);
      }, nb::arg("order"), nb::arg("index"));
}

}  // namespace ember::py
