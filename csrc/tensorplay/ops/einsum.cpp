// einsum, a composite: the equation is parsed into labels, each operand's repeated labels become
// diagonals and the labels no one else needs are summed out, then the operands are contracted
// pairwise, each pair as one batched product (bmm) or, with nothing to contract, a product of
// elements. Autocast and autograd see the ops einsum is made of.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

// An operand's dims, each named by a label: a letter's index (A-Z then a-z) or, for the dims an
// ellipsis covers, kEllipsisLabel + its position counted from the right.
constexpr int kLetters = 52, kEllipsisLabel = 100;
using Labels = std::vector<int>;

int letter_label(char c, std::string_view equation) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  TP_FAIL("[einsum] invalid subscript '", c, "' in the equation '", equation,
          "': subscripts must be letters in [a-zA-Z]");
}

// The labels of one term ("ij", "...k", "b...") for a tensor of `ndim` dims (-1: the output).
Labels parse_term(std::string_view term, std::string_view equation, int64_t ndim, int64_t ellipsis_dims,
                  const char* what) {
  Labels letters_before, letters_after;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      TP_CHECK(!ellipsis && term.substr(i, 3) == "...", "[einsum] found '.' for ", what,
               " that is not part of any ellipsis in the equation '", equation, "'");
      ellipsis = true;
      i += 2;
      continue;
    }
    (ellipsis ? letters_after : letters_before).push_back(letter_label(term[i], equation));
  }
  const int64_t named = static_cast<int64_t>(letters_before.size() + letters_after.size());
  if (ndim >= 0) {
    TP_CHECK(ellipsis ? named <= ndim : named == ndim, "[einsum] the number of subscripts in the equation (", named,
             ") does not match the number of dimensions (", ndim, ") for ", what,
             ellipsis ? "" : " and no ellipsis was given");
    ellipsis_dims = ellipsis ? ndim - named : 0;
  }
  Labels labels = letters_before;
  for (int64_t e = ellipsis ? ellipsis_dims : 0; e > 0; --e) labels.push_back(kEllipsisLabel + static_cast<int>(e) - 1);
  labels.insert(labels.end(), letters_after.begin(), letters_after.end());
  return labels;
}

std::string label_name(int label) {
  if (label >= kEllipsisLabel) return "...";
  return std::string(1, static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26)));
}

bool contains(const Labels& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// Sums out the dims whose label is not in `keep`.
Tensor sum_out(const Tensor& t, Labels& labels, const Labels& keep) {
  Shape dims;
  Labels kept;
  for (size_t d = 0; d < labels.size(); ++d)
    if (contains(keep, labels[d]))
      kept.push_back(labels[d]);
    else
      dims.push_back(static_cast<int64_t>(d));
  labels = kept;
  return dims.empty() ? t : sum(t, dims);
}

// Takes the diagonal over each label repeated within one operand ("ii->i"), so labels are unique.
Tensor diagonals(Tensor t, Labels& labels, size_t operand) {
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t j = i + 1; j < labels.size(); ++j) {
      if (labels[i] != labels[j]) continue;
      TP_CHECK(t.size(i) == t.size(j), "[einsum] subscript ", label_name(labels[i]), " is repeated for operand ",
               operand, " but the sizes don't match, ", t.size(i), " != ", t.size(j));
      t = diagonal(t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
      int label = labels[i];
      labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(j));
      labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(i));
      labels.push_back(label);
      return diagonals(t, labels, operand);
    }
  }
  return t;
}

// Contracts a and b over their shared labels that `keep` lacks, as one batched product:
// a -> [batch, a-only, shared] and b -> [batch, shared, b-only]; dims of size 1 broadcast.
Tensor contract(const Tensor& a_in, Labels& la, const Tensor& b_in, const Labels& lb, const Labels& keep) {
  Tensor a = a_in, b = b_in;
  Labels batch, left, right, inner;
  for (int l : la) (contains(lb, l) ? (contains(keep, l) ? batch : inner) : left).push_back(l);
  for (int l : lb)
    if (!contains(la, l)) right.push_back(l);
  // As PyTorch: a summed label of size 1 on one side is summed out of the other side first, and
  // only labels of size > 1 on both sides are contracted by bmm; with none, the pair multiplies
  // (which promotes mixed dtypes, bool included).
  bool contracts = false;
  for (int l : inner) {
    const int64_t da = std::find(la.begin(), la.end(), l) - la.begin(),
                  db = std::find(lb.begin(), lb.end(), l) - lb.begin();
    if (a.size(da) != 1 && b.size(db) != 1)
      contracts = true;
    else if (a.size(da) != 1)
      a = sum(a, {da}, true);
    else if (b.size(db) != 1)
      b = sum(b, {db}, true);
  }
  auto size_of = [&](int l) {
    auto find = [l](const Tensor& t, const Labels& ls) -> int64_t {
      auto at = std::find(ls.begin(), ls.end(), l);
      return at == ls.end() ? 1 : t.size(at - ls.begin());
    };
    int64_t sa = find(a, la), sb = find(b, lb);
    TP_CHECK(sa == sb || sa == 1 || sb == 1, "[einsum] operands do not broadcast: subscript ", label_name(l),
             " has sizes ", sa, " and ", sb);
    return std::max(sa, sb);
  };
  // Permutes t (labelled ls) into the groups' order, expands it to the common sizes and
  // flattens each group into one dim.
  auto arrange = [&](const Tensor& t, const Labels& ls, std::initializer_list<const Labels*> groups) {
    Shape perm, sizes, flat;
    for (const Labels* group : groups) {
      int64_t n = 1;
      for (int l : *group) {
        perm.push_back(std::find(ls.begin(), ls.end(), l) - ls.begin());
        sizes.push_back(size_of(l));
        n *= sizes.back();
      }
      flat.push_back(n);
    }
    return reshape(expand(permute(t, perm), sizes), flat);
  };
  Tensor x = arrange(a, la, {&batch, &left, &inner}), y = arrange(b, lb, {&batch, &inner, &right});
  Tensor product = contracts ? bmm(x, y) : mul(x, y);
  Shape out_shape;
  Labels out_labels;
  for (const Labels* group : {&batch, &left, &right})
    for (int l : *group) out_shape.push_back(size_of(l)), out_labels.push_back(l);
  la = out_labels;
  return reshape(product, out_shape);
}

Tensor contract_all(const TensorList& operands, const std::vector<Labels>& labels, const Labels& output);

}  // namespace

Tensor einsum(std::string_view equation, const TensorList& operands) {
  TP_OP_ENTRY(einsum, equation, operands);
  TP_CHECK(!operands.empty(), "[einsum] must provide at least one operand");
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  std::string_view lhs = std::string_view(eq).substr(0, arrow);
  std::vector<std::string_view> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  TP_CHECK(terms.size() <= operands.size(), "[einsum] fewer operands were provided than specified in the equation");
  TP_CHECK(terms.size() >= operands.size(), "[einsum] more operands were provided than specified in the equation");

  std::vector<Labels> labels;
  int64_t ellipsis_dims = 0;
  Labels seen;  // every input label, counted with repeats
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string what = "operand " + std::to_string(i);
    labels.push_back(parse_term(terms[i], equation, operands[i].dim(), 0, what.c_str()));
    for (int l : labels.back()) {
      if (l >= kEllipsisLabel) ellipsis_dims = std::max<int64_t>(ellipsis_dims, l - kEllipsisLabel + 1);
      seen.push_back(l);
    }
  }
  Labels output;
  if (arrow != std::string::npos) {
    output = parse_term(std::string_view(eq).substr(arrow + 2), equation, -1, ellipsis_dims, "the output");
    for (size_t i = 0; i < output.size(); ++i) {
      TP_CHECK(output[i] >= kEllipsisLabel || contains(seen, output[i]), "[einsum] output subscript ",
               eq.substr(arrow + 2), " has a label that does not appear in the equation for any input operand");
      TP_CHECK(std::count(output.begin(), output.end(), output[i]) == 1, "[einsum] output subscript ",
               eq.substr(arrow + 2), " has a label that appears more than once in the output");
    }
  } else {  // implicit output: the ellipsis dims, then the labels used once, alphabetically (A-Z, a-z)
    for (int64_t e = ellipsis_dims; e > 0; --e) output.push_back(kEllipsisLabel + static_cast<int>(e) - 1);
    for (int l = 0; l < kLetters; ++l)
      if (std::count(seen.begin(), seen.end(), l) == 1) output.push_back(l);
  }

  // The contractions run on the public ops (bmm, sum, mul); their errors (mixed dtypes, bool) are
  // einsum's and say so.
  return with_op_name("einsum", [&] { return contract_all(operands, labels, output); });
}

namespace {

Tensor contract_all(const TensorList& operands, const std::vector<Labels>& labels, const Labels& output) {
  // Contract left to right, keeping the labels that the output or a later operand needs.
  auto needed_after = [&](size_t i) {
    Labels keep = output;
    for (size_t j = i + 1; j < labels.size(); ++j) keep.insert(keep.end(), labels[j].begin(), labels[j].end());
    return keep;
  };
  Labels result_labels = labels[0];
  Tensor result = diagonals(operands[0], result_labels, 0);
  for (size_t i = 1; i < operands.size(); ++i) {
    Labels li = labels[i];
    Tensor t = diagonals(operands[i], li, i);
    Labels keep = needed_after(i);
    // Dims only one side has and nobody needs are summed before the product.
    Labels keep_a = keep, keep_b = keep;
    keep_a.insert(keep_a.end(), li.begin(), li.end());
    keep_b.insert(keep_b.end(), result_labels.begin(), result_labels.end());
    result = sum_out(result, result_labels, keep_a);
    t = sum_out(t, li, keep_b);
    result = contract(result, result_labels, t, li, keep);
  }
  result = sum_out(result, result_labels, output);
  Shape perm;
  for (int l : output) perm.push_back(std::find(result_labels.begin(), result_labels.end(), l) - result_labels.begin());
  return permute(result, perm);
}

}  // namespace

}  // namespace tp
