//! The service layer: every rule of contract.md lives here once. REST handlers and
//! server functions both call these functions and nothing else touches SQL.

pub mod auth;
pub mod cache;
pub mod categories;
pub mod clock;
pub mod dashboard;
pub mod demo;
pub mod inventory;
pub mod keys;
pub mod limits;
pub mod orders;
pub mod paging;
pub mod pets;
pub mod rules;
pub mod sessions;
pub mod traffic;
pub mod validate;
