//! Finds libxcomm, in this order:
//!  1. `XCOMM_LIB_DIR`: the directory holding libxcomm.so (a meson build's
//!     `src/` works). An rpath to it is added too, so tests and examples run
//!     without LD_LIBRARY_PATH.
//!  2. `pkg-config --libs xcomm` (an installed xcomm), when pkg-config exists.
//!  3. A plain `-lxcomm` (the library is on the linker's default path).
//!
//! The directory is also handed to dependent crates' build scripts as
//! `DEP_XCOMM_LIB_DIR` (this crate declares `links = "xcomm"`), so `xcomm`
//! can add the same rpath to its own tests and examples: a `rustc-link-arg`
//! only reaches the targets of the package whose build script printed it.
use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=XCOMM_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");

    if let Some(dir) = env::var_os("XCOMM_LIB_DIR").filter(|d| !d.is_empty()) {
        let dir = Path::new(&dir);
        if !dir.join("libxcomm.so").exists() {
            println!(
                "cargo:warning=XCOMM_LIB_DIR={} holds no libxcomm.so; linking may fail",
                dir.display()
            );
        }
        let dir = dir.display().to_string();
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=xcomm");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        println!("cargo:lib_dir={dir}");
        return;
    }

    if let Some(flags) = pkg_config_libs() {
        let mut linked = false;
        for flag in flags.split_whitespace() {
            if let Some(dir) = flag.strip_prefix("-L") {
                println!("cargo:rustc-link-search=native={dir}");
            } else if let Some(lib) = flag.strip_prefix("-l") {
                println!("cargo:rustc-link-lib=dylib={lib}");
                linked |= lib == "xcomm";
            }
        }
        if !linked {
            println!("cargo:rustc-link-lib=dylib=xcomm");
        }
        return;
    }

    println!(
        "cargo:warning=libxcomm: no XCOMM_LIB_DIR and no pkg-config entry for xcomm; \
         trying the linker's default path (set XCOMM_LIB_DIR to a directory holding libxcomm.so)"
    );
    println!("cargo:rustc-link-lib=dylib=xcomm");
}

/// `pkg-config --libs xcomm`, or None when pkg-config is missing or does not
/// know xcomm.
fn pkg_config_libs() -> Option<String> {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = Command::new(pkg_config)
        .args(["--libs", "xcomm"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}
