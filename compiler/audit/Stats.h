//===- Stats.h - Half-precision values against FP64 -------------*- C++ -*-===//
//
// The numbers `ampc audit` reports for one op result, summed over batches:
// how many values overflow or underflow in the result's type, how large the
// values get against the type's limit, and their relative error against the
// same value computed in FP64. Also the magnitude histogram the loss-scale
// range is read from.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_AUDIT_STATS_H
#define AMPC_COMPILER_AUDIT_STATS_H

#include "compiler/interp/Tensor.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace ampc::audit {

// The range and precision of a float element type.
struct TypeLimits {
  double max;          // largest finite value
  double overflowAt;   // |x| from which rounding gives inf (max + ulp/2)
  double minNormal;    // smallest positive normal value
  int minNormalExp;    // log2(minNormal)
  double unitRoundoff; // 2^-(mantissa bits + 1): half an ulp at 1
};
TypeLimits limitsOf(interp::ElemType type);

// Statistics of one op result, element by element against FP64.
// - overflow: finite in FP64, inf or NaN here;
// - underflow: nonzero in FP64, below the type's smallest normal here
//   (flushed to zero or subnormal);
// - relative error |x - ref| / |ref| over elements that are finite here and
//   at least the smallest normal in FP64 (the others are what overflow and
//   underflow count).
class ValueStats {
public:
  // Adds every element of |value| against |ref| (same shape; |type| is the
  // result's element type).
  void add(const interp::Tensor &value, const interp::Tensor &ref,
           interp::ElemType type);
  // The smallest significant magnitude of |ref| in |type| (see above).
  static double significanceFloor(const interp::Tensor &ref,
                                  interp::ElemType type);

  int64_t count = 0;   // elements seen
  int64_t nonzero = 0; // nonzero and finite in FP64
  int64_t overflow = 0;
  int64_t underflow = 0;
  // The values' own range: finite and nonzero in FP64 but beyond the type's
  // largest value (they round to inf), or below its smallest normal. This
  // is the op's doing whatever happened upstream. Underflow counts only
  // significant values: at least the unit roundoff times the largest |x| of
  // the same tensor (smaller ones are lost next to it in any sum anyway,
  // and are often FP64 rounding noise of exact zeros).
  int64_t rangeOverflow = 0;
  int64_t significant = 0;
  int64_t rangeUnderflow = 0;
  int64_t compared = 0; // elements in the relative error
  double maxAbsRef = 0; // max |x| in FP64 (finite values)
  double maxRelErr = 0;

  double overflowFraction() const;
  // Of the elements that are nonzero in FP64.
  double underflowFraction() const;
  double rangeOverflowFraction() const;
  double rangeUnderflowFraction() const;
  // Median of the relative errors; nullopt when nothing was compared.
  // Exact up to kMaxSamples samples, then over an evenly thinned subset.
  std::optional<double> medianRelErr() const;

  static constexpr size_t kMaxSamples = size_t(1) << 18;

private:
  void sample(float relErr);
  std::optional<double> computeMedian() const;
  std::vector<float> samples;
  mutable std::optional<std::optional<double>> median; // cached
  uint64_t stride = 1, seen = 0;
};

// Counts of nonzero magnitudes by binary exponent: bin e holds the values
// in [2^e, 2^(e+1)). Scaling by a power of two moves whole bins, so the
// values that underflow or overflow at any power-of-two loss scale are
// counted exactly.
class MagnitudeHistogram {
public:
  void add(double magnitude);
  int64_t total() const { return total_; }
  double maxMagnitude() const { return max_; }
  // Values below 2^|minNormalExp| once scaled by 2^|s|.
  int64_t belowAtScale(int s, int minNormalExp) const;

private:
  static constexpr int kMinExp = -1100, kMaxExp = 1030;
  std::array<int64_t, kMaxExp - kMinExp + 1> bins{};
  int64_t total_ = 0;
  double max_ = 0;
};

} // namespace ampc::audit

#endif
