//! The pet store's shared crate: domain types, the service layer (server only), the
//! server functions and the Leptos components of the storefront.

pub mod error;
pub mod model;
pub mod paths;
pub mod reference;
pub mod server_fns;
pub mod ui;

#[cfg(feature = "ssr")]
pub mod db;
#[cfg(feature = "ssr")]
pub mod request_id;
#[cfg(feature = "ssr")]
pub mod services;

pub use ui::{App, shell};
