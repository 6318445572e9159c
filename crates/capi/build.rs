//! Build script of xsort-capi: compiles the C trampoline behind `nsort_raise_error` (see
//! `src/raise.c`).

fn main() {
    println!("cargo:rerun-if-changed=src/raise.c");
    cc::Build::new().file("src/raise.c").warnings(true).compile("xsort_raise");
}
