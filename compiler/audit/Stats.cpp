//===- Stats.cpp - Half-precision values against an FP64 reference --------===//
#include "compiler/audit/Stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace ampc;
using namespace ampc::audit;
using interp::ElemType;

TypeLimits ampc::audit::limitsOf(ElemType type) {
  switch (type) {
  case ElemType::F16:
    return {65504.0, 65520.0, std::ldexp(1.0, -14), -14, std::ldexp(1.0, -11)};
  case ElemType::BF16:
    return {3.3895313892515355e38, 3.3895313892515355e38 + std::ldexp(1.0, 119),
            std::ldexp(1.0, -126), -126, std::ldexp(1.0, -8)};
  default:
    return {double(std::numeric_limits<float>::max()),
            double(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103),
            std::ldexp(1.0, -126), -126, std::ldexp(1.0, -24)};
  }
}

void ValueStats::add(const interp::Tensor &value, const interp::Tensor &ref,
                     ElemType type) {
  TypeLimits lim = limitsOf(type);
  double floor = significanceFloor(ref, type);
  median.reset();
  size_t n = std::min(value.f.size(), ref.f.size());
  for (size_t k = 0; k < n; ++k) {
    double x = value.f[k], r = ref.f[k];
    ++count;
    if (!std::isfinite(r))
      continue; // nothing to compare against
    double ar = std::fabs(r);
    maxAbsRef = std::max(maxAbsRef, ar);
    if (ar != 0) {
      ++nonzero;
      if (ar >= lim.overflowAt) // round to nearest even: the tie goes to inf
        ++rangeOverflow;
      if (ar >= floor) {
        ++significant;
        if (ar < lim.minNormal)
          ++rangeUnderflow;
      }
    }
    if (!std::isfinite(x)) {
      ++overflow;
      continue;
    }
    if (ar != 0 && std::fabs(x) < lim.minNormal)
      ++underflow;
    if (ar < lim.minNormal)
      continue;
    double rel = std::fabs(x - r) / ar;
    maxRelErr = std::max(maxRelErr, rel);
    ++compared;
    sample(float(rel));
  }
}

void ValueStats::sample(float relErr) {
  if (seen++ % stride != 0)
    return;
  samples.push_back(relErr);
  if (samples.size() < kMaxSamples)
    return;
  // Keep every other sample and take every other one from now on, so the
  // samples stay evenly spread over everything seen.
  size_t j = 0;
  for (size_t i = 0; i < samples.size(); i += 2)
    samples[j++] = samples[i];
  samples.resize(j);
  stride *= 2;
  seen = 0;
}

double ValueStats::overflowFraction() const {
  return count ? double(overflow) / double(count) : 0.0;
}

double ValueStats::underflowFraction() const {
  return nonzero ? double(underflow) / double(nonzero) : 0.0;
}

double ValueStats::rangeOverflowFraction() const {
  return count ? double(rangeOverflow) / double(count) : 0.0;
}

double ValueStats::rangeUnderflowFraction() const {
  return significant ? double(rangeUnderflow) / double(significant) : 0.0;
}

double ValueStats::significanceFloor(const interp::Tensor &ref, ElemType type) {
  double maxAbs = 0;
  for (double r : ref.f)
    if (std::isfinite(r))
      maxAbs = std::max(maxAbs, std::fabs(r));
  return maxAbs * limitsOf(type).unitRoundoff;
}

std::optional<double> ValueStats::medianRelErr() const {
  if (median)
    return *median;
  median = computeMedian();
  return *median;
}

std::optional<double> ValueStats::computeMedian() const {
  if (samples.empty())
    return std::nullopt;
  std::vector<float> s = samples;
  size_t mid = s.size() / 2;
  std::nth_element(s.begin(), s.begin() + mid, s.end());
  double hi = s[mid];
  if (s.size() % 2)
    return hi;
  double lo = *std::max_element(s.begin(), s.begin() + mid);
  return 0.5 * (lo + hi);
}

void MagnitudeHistogram::add(double magnitude) {
  if (magnitude == 0 || !std::isfinite(magnitude))
    return;
  int e = std::ilogb(magnitude);
  e = std::clamp(e, kMinExp, kMaxExp);
  ++bins[e - kMinExp];
  ++total_;
  max_ = std::max(max_, magnitude);
}

int64_t MagnitudeHistogram::belowAtScale(int s, int minNormalExp) const {
  // v in [2^e, 2^(e+1)) scaled by 2^s lies wholly below 2^m iff e + s < m.
  int64_t n = 0;
  for (int e = kMinExp; e <= kMaxExp && e + s < minNormalExp; ++e)
    n += bins[e - kMinExp];
  return n;
}
