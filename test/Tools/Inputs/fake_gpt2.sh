#!/bin/sh
# A stand-in training binary for gpu-device-flow.test: fails unless
# AMPC_CUDA_NORM=rows; otherwise writes one metrics record per --log-every
# steps, with a null (non-finite) loss unless AMPC_CUDA_EPILOGUE=scalar.
[ "$AMPC_CUDA_NORM" = rows ] || { echo "an illegal memory access was encountered" >&2; exit 1; }
steps=1 every=10 metrics=/dev/null loss=null
[ "$AMPC_CUDA_EPILOGUE" = scalar ] && loss=5.0
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift ;;
    --log-every) every=$2; shift ;;
    --metrics) metrics=$2; shift ;;
  esac
  shift
done
: >"$metrics"
i=$every
while [ "$i" -le "$steps" ]; do
  echo "{\"step\": $i, \"loss\": $loss, \"step_time_ms\": 50.0}" >>"$metrics"
  i=$((i + every))
done
