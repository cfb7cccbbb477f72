// Hugging Face GPT-2 folders whose weights are stored as F16 or BF16 safetensors: they load (into
// float32) and give the logits of the float32 model within the storage format's rounding.
#include <filesystem>

#include "framework/train/io/safetensors.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/gpt2_fixtures.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;
using ember::gpt2::testing::tiny_config;

namespace {

TEST(Gpt2HalfCheckpoint, LoadsFoldersStoredInFloat16AndBFloat16) {
  Config c = tiny_config();
  GPT2 m(c, 31);
  Generator g(32);
  Tensor ids = randint({2, 7}, 0, c.vocab_size, &g);
  autograd::NoGradGuard ng;
  Tensor want = m.forward(ids);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(name(dt));
    std::string dir = ::testing::TempDir() + "/ember_gpt2_half_" + name(dt);
    std::filesystem::remove_all(dir);
    save_model(m, dir);
    NamedTensors half, rounded;  // the weights as stored, and the same values back in float32
    for (auto& [n, t] : m.state_dict()) {
      half.push_back({n, t.detach().to(dt)});
      rounded.push_back({n, t.detach().to(dt).to(DType::Float32)});
    }
    io::save_safetensors(dir + "/model.safetensors", half);
    const std::string file_dtype = dt == DType::Float16 ? "F16" : "BF16";
    for (const io::TensorInfo& e : io::read_safetensors_header(dir + "/model.safetensors")) EXPECT_EQ(e.dtype, file_dtype);
    auto back = load_model(dir);
    for (auto& [n, t] : back->state_dict()) EXPECT_EQ(t.dtype(), DType::Float32) << n;
    Tensor got = back->forward(ids);
    // Exactly the float32 model with the rounded weights: the conversion on load is exact.
    GPT2 r(c, 31);
    r.load_state_dict(rounded, true);
    EXPECT_TRUE(ember::testing::all_close(got, r.forward(ids), 0, 0));
    // And near the original: the weights moved by at most half a unit in the last place.
    const double tol = dt == DType::Float16 ? 5e-3 : 4e-2;
    EXPECT_TRUE(ember::testing::all_close(got, want, tol, tol));
    EXPECT_FALSE(ember::testing::all_close(got, want, 0, 0)) << "the rounding changed nothing: not a test of it";
  }
}

}  // namespace
