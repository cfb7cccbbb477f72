#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "examples/common/bench.h"
#include "framework/core/dtype.h"

namespace ember {
// Every built-in primitive: devices, dtypes, VJP, JVP, fused backward, kernel variants.
void print_op_table(std::ostream& os);
// Times one primitive on its spec's benchmark sample (about n along the main dims): forward, and
// forward plus VJP. Prints a row and returns it as JSON.
nlohmann::json bench_table_op(const std::string& op, int64_t n, DType dtype, const bench::Options& timing);
}  // namespace ember
