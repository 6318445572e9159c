//! xsort-bench: runs Sort Benchmark categories end to end (being written).
fn main() {}
