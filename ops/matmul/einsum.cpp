// einsum: parse, take diagonals of repeated letters, sum out letters nothing else needs, then fold
// the operands left to right, each step one batched matmul.
#include "ops/matmul/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/rearrange.h"
#include "ops/shape/shape_ops.h"

namespace ember {
namespace {

struct Term {
  std::string letters;  // one per dim of t
  Tensor t;
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

int64_t product(const Term& x, const std::string& letters) {
  int64_t p = 1;
  for (char c : letters) p *= x.t.size(int64_t(x.letters.find(c)));
  return p;
}

Shape sizes(const Term& x, const std::string& letters) {
  Shape s;
  for (char c : letters) s.push_back(x.t.size(int64_t(x.letters.find(c))));
  return s;
}

// x's dims reordered to `order` (a permutation of x.letters).
Tensor arranged(const Term& x, const std::string& order) {
  if (order == x.letters) return x.t;
  Shape perm;
  for (char c : order) perm.push_back(int64_t(x.letters.find(c)));
  return permute(x.t, perm);
}

// A letter twice in one operand: multiply by the identity over those two dims and sum one away.
void take_diagonals(Term& x) {
  for (size_t i = 0; i < x.letters.size(); ++i) {
    size_t j;
    while ((j = x.letters.find(x.letters[i], i + 1)) != std::string::npos) {
      Shape s(x.letters.size(), 1);
      int64_t n = x.t.size(int64_t(i));
      s[i] = s[j] = n;
      x.t = sum(x.t * eye(n, n, x.t.dtype()).reshape(s), {int64_t(j)});
      x.letters.erase(j, 1);
    }
  }
}

// Sums over the letters of x that `keep` does not hold.
void sum_unneeded(Term& x, const std::string& keep) {
  Shape dims;
  std::string left;
  for (size_t i = 0; i < x.letters.size(); ++i) {
    if (has(keep, x.letters[i])) left += x.letters[i];
    else dims.push_back(int64_t(i));
  }
  if (dims.empty()) return;
  x.t = sum(x.t, dims);
  x.letters = left;
}

// a * b summed over their shared letters that `keep` does not hold, as one batched matmul.
Term contract(Term a, Term b, const std::string& keep) {
  std::string ab = a.letters + b.letters;
  sum_unneeded(a, keep + b.letters);
  sum_unneeded(b, keep + a.letters);
  std::string batch, contracted, a_only, b_only;
  for (char c : a.letters) {
    if (!has(b.letters, c)) a_only += c;
    else if (has(keep, c)) batch += c;
    else contracted += c;
  }
  for (char c : b.letters)
    if (!has(a.letters, c)) b_only += c;
  int64_t nb = product(a, batch), m = product(a, a_only), k = product(a, contracted), n = product(b, b_only);
  Tensor a3 = reshape(arranged(a, batch + a_only + contracted), {nb, m, k});
  Tensor b3 = reshape(arranged(b, batch + contracted + b_only), {nb, k, n});
  Shape out = sizes(a, batch + a_only), bs = sizes(b, b_only);
  out.insert(out.end(), bs.begin(), bs.end());
  return Term{batch + a_only + b_only, reshape(matmul(a3, b3), out)};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), output;
  std::vector<std::string> inputs(1);
  for (char c : lhs) {
    if (c == ',') inputs.emplace_back();
    else {
      EMBER_CHECK(std::isalpha(static_cast<unsigned char>(c)), "einsum: '", equation, "' has '", c,
                  "' where a letter or ',' belongs (no '...' broadcasting)");
      inputs.back() += c;
    }
  }
  EMBER_CHECK(inputs.size() == operands.size(), "einsum: '", equation, "' names ", inputs.size(), " operands but ",
              operands.size(), " were given");
  std::map<char, int64_t> size_of;
  std::map<char, int> count;
  std::vector<Term> terms;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = operands[i];
    EMBER_CHECK(t.defined(), "einsum: operand ", i, " is undefined");
    EMBER_CHECK(int64_t(inputs[i].size()) == t.dim(), "einsum: operand ", i, " has shape ", to_string(t.shape()), " but '",
                inputs[i], "' names ", inputs[i].size(), " dims");
    EMBER_CHECK(t.dtype() == operands[0].dtype(), "einsum: operand ", i, " is ", t.dtype(), ", operand 0 is ",
                operands[0].dtype());
    for (size_t d = 0; d < inputs[i].size(); ++d) {
      char c = inputs[i][d];
      auto [it, fresh] = size_of.emplace(c, t.size(int64_t(d)));
      EMBER_CHECK(fresh || it->second == t.size(int64_t(d)), "einsum: '", c, "' is ", it->second, " in one place and ",
                  t.size(int64_t(d)), " in operand ", i, " of shape ", to_string(t.shape()));
      ++count[c];
    }
    terms.push_back(Term{inputs[i], t});
  }
  if (arrow == std::string::npos) {
    for (auto& [c, n] : count)
      if (n == 1) output += c;
  } else {
    output = eq.substr(arrow + 2);
    for (size_t i = 0; i < output.size(); ++i) {
      char c = output[i];
      EMBER_CHECK(size_of.count(c), "einsum: output letter '", c, "' of '", equation, "' is in no operand");
      EMBER_CHECK(output.find(c, i + 1) == std::string::npos, "einsum: output letter '", c, "' of '", equation,
                  "' appears twice");
    }
  }
  for (Term& t : terms) take_diagonals(t);
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string keep = output;
    for (size_t j = i + 1; j < terms.size(); ++j) keep += terms[j].letters;
    acc = contract(acc, terms[i], keep);
  }
  sum_unneeded(acc, output);
  return arranged(acc, output);
}

}  // namespace ember
