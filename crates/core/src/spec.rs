//! Nsort statement parsing (being written).
