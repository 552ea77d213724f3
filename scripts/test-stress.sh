#!/usr/bin/env bash
# `npm run test:stress`: the README's test command three times in a row while two CPU-burning processes run
# beside it, to prove the tests wait for events and states rather than for durations. Stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
burners=()
for _ in 1 2; do
  node -e 'const end = Date.now() + 3 * 3600e3; while (Date.now() < end) {}' &
  burners+=($!)
done
trap 'kill "${burners[@]}" 2>/dev/null || true' EXIT
for run in 1 2 3; do
  echo "test:stress: run $run of 3 (2 CPU burners running)"
  npm test
done
echo "test:stress: 3 of 3 runs passed under CPU load"
