// Node: what a trace records about one primitive application.
// Reverse-mode traces keep a VJP closure per node; forward-mode traces keep the tangent.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::autograd {

struct Node;
// Given the output's cotangent, returns one cotangent per input (undefined where the input is not
// traced here, or where none flows); `node` is the node itself, whose parents say which are wanted.
using VjpFn = std::function<std::vector<Tensor>(const Tensor& g, const Node& node)>;

struct Node {
  const char* op = "";                          // primitive name, e.g. "mul"
  std::vector<std::shared_ptr<Node>> parents;  // one per input; null where that input is not traced here
  VjpFn vjp;                                    // reverse mode
  // What the VJP reads, as its primitive declared (Primitive::saves): inputs (undefined where not
  // saved), the output, and the kernel's extras. Kept here rather than in the closure, so that the
  // closure stays small enough for std::function to hold without allocating.
  std::vector<Tensor> saved;
  Tensor saved_out;
  std::vector<Tensor> extras;
  Tensor tangent;                               // forward mode: the tangent of this node's value
  bool forward_mode = false;
  // The write clock when this node was recorded: a saved tensor whose storage was written in place
  // later (Storage::version() above it) no longer holds what the VJP needs.
  uint64_t recorded_at = 0;
  Shape shape;  // of the value, to check cotangents
  DType dtype = DType::Float32;
  Device device = Device::CPU;

  // Leaves: make_vjp inputs have an index; requires_grad_ leaves point at the tensor whose .grad they fill.
  bool is_leaf = false;
  int leaf_index = -1;
  std::weak_ptr<TensorImpl> leaf_tensor;

  // After a backward() that does not keep the graph: drops the rule and the tensors it read.
  void free_saved() {
    vjp = nullptr;
    saved = {};
    saved_out = Tensor();
    extras = {};
  }

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Releases the parents iteratively: a graph of a million recorded ops is a chain of a million
  // shared_ptrs, whose recursive release would overflow the stack.
  ~Node();
};

}  // namespace ember::autograd
