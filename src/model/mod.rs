//! The dm-crypt world.

pub mod observe;
