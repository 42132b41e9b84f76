//! Unit tests of the ceiling search: the ladder, the knee and every verdict.
