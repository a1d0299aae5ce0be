//! xcomm-sys found libxcomm; when it came from XCOMM_LIB_DIR, give this
//! crate's tests and examples the same rpath (a `rustc-link-arg` reaches only
//! the targets of the package that printed it).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_XCOMM_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_XCOMM_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
