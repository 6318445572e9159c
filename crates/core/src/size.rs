//! Size parsing (being written).
