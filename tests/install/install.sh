#!/usr/bin/env bash
# Installs the build into a temporary DESTDIR, builds a C program (and a
# Fortran one when gfortran is there) with `pkg-config --cflags --libs` and
# runs them as a user would. Under a prefix of its own (-Dprefix=/opt/xcomm)
# the .pc files must carry an rpath and the programs run without
# LD_LIBRARY_PATH; under /usr or /usr/local they must not, as ldconfig's
# cache finds the library there (the install script does nothing under
# DESTDIR, which is checked too).
set -euo pipefail
build=$1 prefix=$2 libdir=$3 fortran=$4
command -v pkg-config >/dev/null || { echo "no pkg-config: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
meson install -C "$build" --no-rebuild --destdir "$root" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
export PKG_CONFIG_PATH=$root$libdir/pkgconfig
unset PKG_CONFIG_LIBDIR
# The .pc files name the real prefix; the files lie under DESTDIR.
pc() { pkg-config --define-variable=prefix="$root$prefix" "$@"; }

case $prefix in
  /usr | /usr/local) system=1 ;;
  *) system=0 ;;
esac
for p in xcomm $([ "$fortran" = fortran ] && echo xcomm-fortran); do
  libs=$(pc --libs "$p")
  if [ $system = 1 ] && [[ $libs == *rpath* ]]; then
    echo "FAIL: $p.pc under the system prefix $prefix has an rpath: $libs"; exit 1
  elif [ $system = 0 ] && [[ $libs != *"-Wl,-rpath,$root$libdir"* ]]; then
    echo "FAIL: $p.pc under $prefix has no rpath to its libdir: $libs"; exit 1
  fi
done

cat >"$tmp/prog.c" <<'C'
#include <stdio.h>
#include <xcomm.h>
int main(void) {
  int major, minor, patch;
  xc_comm_t world;
  if (xc_get_version(&major, &minor, &patch) != XC_SUCCESS) return 1;
  if (xc_init(NULL, &world) != XC_SUCCESS) { fprintf(stderr, "%s\n", xc_last_error()); return 1; }
  printf("xcomm %d.%d.%d\n", major, minor, patch);
  return xc_comm_free(world) == XC_SUCCESS ? 0 : 1;
}
C
cc "$tmp/prog.c" $(pc --cflags --libs xcomm) -o "$tmp/prog_c"
progs=("$tmp/prog_c")
if [ "$fortran" = fortran ]; then
  cat >"$tmp/prog.f90" <<'F'
program prog
  use xcomm
  implicit none
  type(xc_comm) :: world
  integer :: major, minor, patch
  call xc_get_version(major, minor, patch)
  call xc_init(world)
  print '(a,i0,a,i0,a,i0)', 'xcomm ', major, '.', minor, '.', patch
  call xc_comm_free(world)
end program prog
F
  (cd "$tmp" && gfortran prog.f90 $(pc --cflags --libs xcomm-fortran) -o prog_f)
  progs+=("$tmp/prog_f")
fi

# Out of any launcher's reach: a world of one rank.
clean_env=(env -u LD_LIBRARY_PATH -u XC_RANK -u XC_SIZE -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID -u RANK)
for prog in "${progs[@]}"; do
  if [ $system = 1 ]; then
    out=$(LD_LIBRARY_PATH=$root$libdir "$prog")
  else
    out=$("${clean_env[@]}" "$prog") || { echo "FAIL: $prog did not run without LD_LIBRARY_PATH"; exit 1; }
  fi
  [[ $out == "xcomm "* ]] || { echo "FAIL: $prog printed '$out'"; exit 1; }
  echo "$(basename "$prog"): $out"
done
echo "OK (prefix $prefix)"
