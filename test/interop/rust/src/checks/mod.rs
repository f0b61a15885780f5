//! The checks, one module per service.
pub mod account;
pub mod bundle;
pub mod collection;
pub mod fee;
pub mod feed;
pub mod ladder;
pub mod program;
pub mod transaction;
pub mod webhook;

/// Turns any error into the message a failed check prints.
pub fn why<E: std::fmt::Display>(error: E) -> String {
    error.to_string()
}
