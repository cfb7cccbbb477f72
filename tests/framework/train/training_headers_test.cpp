// The training headers together with ember.h in one translation unit, as a user includes them
// (the umbrella headers are meant to be added to ember.h): no name clashes, and one training step.
#include "ember.h"
#include "framework/train/data/data.h"
#include "framework/train/io/io.h"
#include "framework/train/nn/nn.h"
#include "framework/train/optim/optim.h"
#include "ops/linear/linear.h"
#include "test_util.h"

using namespace ember;

TEST(TrainingHeaders, OneStepThroughTheUmbrellaHeaders) {
  auto data = std::make_shared<data::TensorDataset>(randn({8, 3}), from_vector(std::vector<int64_t>{0, 1, 0, 1, 1, 0, 1, 0}));
  data::DataLoader loader(data, {4, true, true, 1});
  auto model = nn::make_mlp({3, 4, 2});
  optim::AdamW opt(model->parameters(), optim::adamw_defaults());
  Tensor before = model->parameters()[0].detach().clone();
  for (const data::Batch& b : loader.epoch(0)) {
    Tensor loss = cross_entropy((*model)(b.inputs), b.targets);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  EXPECT_EQ(opt.steps(), 2);
  EXPECT_FALSE(ember::testing::all_close(model->parameters()[0].detach(), before, 0, 0));
}
