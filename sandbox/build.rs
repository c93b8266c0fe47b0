//! Rebuilds the crate when a script under `runtime-js/` changes. The scripts are embedded with
//! deno_core's `ascii_str_include!`, which reads the file without telling cargo, so an edited
//! glue or vendored script would otherwise leave a stale copy in the binary until some Rust
//! source of the crate changed too.

fn main() {
    println!("cargo:rerun-if-changed=../runtime-js");
    println!("cargo:rerun-if-changed=build.rs");
}
