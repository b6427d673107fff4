//! End-to-end tests (being written).
