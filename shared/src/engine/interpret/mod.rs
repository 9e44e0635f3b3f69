//! Reading a student's message: the routing category it falls in, the
//! units of the course it is about (and the lesson text retrieved for
//! them), and the maths in it, which code works out where the student asks
//! it in their own numbers. Reads text and the course; changes no state.

pub mod classify;
pub mod comparison;
pub mod follow_up;
pub mod mapping;
pub mod outside_math;
pub mod place_value;
pub mod ratio_meaning;
pub mod retrieve;
pub mod student_math;
