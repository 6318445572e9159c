//! Build script of xsort-core: compiles the small C shim that parses `sort -g` keys with the C
//! library's `strtold` (GNU sort compares them as `long double`, which Rust lacks).

fn main() {
    println!("cargo:rerun-if-changed=src/order/strtold.c");
    cc::Build::new().file("src/order/strtold.c").warnings(true).compile("xsort_order_strtold");
}
