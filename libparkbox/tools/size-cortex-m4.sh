#!/bin/sh
# The core's flash and static RAM on a Cortex-M4 (Thumb-2, -Os), crypto port
# excluded: compiled with arm-none-eabi-gcc when it is installed, else with
# clang --target=thumbv7em-none-eabi (no libc: a two-line string.h stands in
# for the board's; memcpy, memset and memcmp themselves are not counted).
# Prints the size of each object and the sum.
#   libparkbox/tools/size-cortex-m4.sh [OUT_DIR]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$here/build/cortex-m4"}
mkdir -p "$out/include"
cat > "$out/include/string.h" <<'H'
#include <stddef.h>
void *memcpy(void *, const void *, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
H
flags="-std=c99 -Wall -Wextra -Werror -pedantic -Os -mcpu=cortex-m4 -mthumb -mfloat-abi=soft -ffreestanding -ffunction-sections -fdata-sections"
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  cc="arm-none-eabi-gcc"
  size="arm-none-eabi-size"
elif command -v clang >/dev/null 2>&1 && command -v llvm-size >/dev/null 2>&1; then
  cc="clang --target=thumbv7em-none-eabi"
  size="llvm-size"
  # clang's own freestanding headers (stdint.h, stdbool.h, stddef.h) and the stand-in string.h.
  flags="$flags -nostdinc -isystem $(clang -print-resource-dir)/include"
else
  echo "size-cortex-m4: needs arm-none-eabi-gcc, or clang and llvm-size" >&2
  exit 2
fi
objects=""
for c in "$here"/src/*.c; do
  o="$out/$(basename "$c" .c).o"
  $cc $flags -I "$out/include" -I "$here/include" -c "$c" -o "$o"
  objects="$objects $o"
done
echo "compiler: $cc"
# shellcheck disable=SC2086
$size -t $objects
