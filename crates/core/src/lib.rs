//! xsort-core: the sorter (being written).
pub mod size;
pub mod spec;
