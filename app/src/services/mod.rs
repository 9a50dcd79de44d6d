//! The service layer: every rule of contract.md lives here once. REST handlers and
//! server functions both call these functions and nothing else touches SQL.

pub mod categories;
pub mod demo;
pub mod inventory;
pub mod paging;
pub mod pets;
pub mod rules;
pub mod validate;
