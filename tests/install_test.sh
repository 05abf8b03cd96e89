#!/usr/bin/env bash
# Installs the build into a temporary directory (meson install --destdir,
# without rebuilding), then builds a small program outside the tree against
# the installed copy, found through pkg-config, and runs it: linked with the
# shared library, then with the static one (pkg-config --static).
#   install_test.sh BUILD_DIR [CC...]   (CC: the compiler command, default cc)
# Leaves the build directory as it was, apart from meson's install log.
set -euo pipefail

build_dir=$(cd "${1:?usage: install_test.sh BUILD_DIR [CC...]}" && pwd)
shift
cc=("${@:-cc}")
work=$(mktemp -d "${TMPDIR:-/tmp}/tjit-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "install test: $*" >&2
    exit 1
}

meson install -C "$build_dir" --no-rebuild --destdir "$work/root" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "meson install failed"; }

# The .pc file names the configured prefix; point it at the staged copy.
pc=$(find "$work/root" -name tjit.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no tjit.pc was installed"
prefix=$(sed -n 's/^prefix=//p' "$pc")
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
pkgc() { pkg-config --define-variable=prefix="$work/root$prefix" "$@" tjit; }
libdir=$(pkgc --variable=libdir)
[ -f "$libdir/libtjit.so" ] || fail "libtjit.so is not in the .pc file's libdir $libdir"
[ -f "$(pkgc --variable=includedir)/tjit/tjit.h" ] || fail "tjit/tjit.h is not installed"

cat >"$work/add.c" <<'EOF'
/* Adds two tensors through the installed library. */
#include <stdio.h>
#include <string.h>
#include <tjit/tjit.h>

int main(void)
{
    const int64_t shape[2] = {2, 3};
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
    tj_scope *scope = tj_scope_begin();
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, shape, a);
    tj_tensor *y = tj_tensor_from_data(TJ_FLOAT32, 2, shape, b);
    tj_tensor *z = tj_add(x, y);
    if (!z) {
        fprintf(stderr, "tj_add failed: %s\n", tj_last_error());
        return 1;
    }
    for (int i = 0; i < 6; i++) {
        if (tj_tensor_item_at(z, i) != 11.0 * (i + 1)) {
            fprintf(stderr, "element %d is %g, want %g\n", i, tj_tensor_item_at(z, i), 11.0 * (i + 1));
            return 1;
        }
    }
    /* errors come back with a message, not a crash */
    const int64_t four[1] = {4};
    if (tj_add(x, tj_tensor_empty(TJ_FLOAT32, 1, four)) != NULL || tj_last_status() != TJ_ERR_SHAPE ||
        strstr(tj_last_error(), "aten::add.Tensor") == NULL) {
        fprintf(stderr, "a shape error was not reported: %s\n", tj_last_error());
        return 1;
    }
    tj_scope_end(scope);
    puts("ok");
    return 0;
}
EOF

# Shared: the program must load the staged libtjit.so, not another copy.
# shellcheck disable=SC2046
"${cc[@]}" -std=c11 -Wall -Werror "$work/add.c" -o "$work/add_shared" $(pkgc --cflags --libs) -Wl,-rpath,"$libdir" ||
    fail "cannot build against the installed shared library"
# (grep without -q: an early exit would kill ldd with SIGPIPE, which pipefail
# turns into a failure)
ldd "$work/add_shared" | grep "$libdir/libtjit.so" >/dev/null || fail "add_shared does not load $libdir/libtjit.so"
[ "$("$work/add_shared")" = ok ] || fail "the program linked with the shared library failed"

# Static: libtjit.a and the private dependencies pkg-config lists
# (OpenBLAS, SLEEF, ... may stay shared: Debian ships no static SLEEF).
static_libs=()
for flag in $(pkgc --static --libs); do
    [ "$flag" = -ltjit ] || static_libs+=("$flag")
done
[ -f "$libdir/libtjit.a" ] || fail "libtjit.a is not installed"
# shellcheck disable=SC2046
"${cc[@]}" -std=c11 -Wall -Werror "$work/add.c" -o "$work/add_static" $(pkgc --cflags) "$libdir/libtjit.a" \
    "${static_libs[@]}" || fail "cannot link statically: pkg-config --static --libs tjit gives ${static_libs[*]}"
if readelf -d "$work/add_static" | grep 'NEEDED.*libtjit' >/dev/null; then fail "add_static still needs libtjit.so"; fi
[ "$("$work/add_static")" = ok ] || fail "the statically linked program failed"

echo "install test: shared and static programs built against $work/root$prefix ran ok"
