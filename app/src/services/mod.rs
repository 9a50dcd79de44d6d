//! The service layer: every rule of contract.md lives here once. REST handlers and
//! server functions both call these functions; these in turn read and write through
//! the store's handle (`db::Db`) and its queries (`db::sql`), never SQL of their own.

pub mod access;
pub mod auth;
pub mod backups;
pub mod categories;
pub mod clock;
pub mod dashboard;
pub mod demo;
pub mod events;
pub mod inventory;
pub mod keys;
pub mod limits;
pub mod orders;
pub mod passkeys;
pub use crate::db::paging;
pub mod pets;
pub mod photos;
pub mod retention;
pub mod rules;
pub mod sessions;
pub mod traffic;
pub mod validate;
pub mod webhooks;

use std::sync::Arc;

/// What the server hands the storefront (one Leptos context, read by the server
/// functions and pages): the same handles its REST handlers use.
#[derive(Clone)]
pub struct Services {
    pub db: crate::db::Db,
    pub clock: clock::Clock,
    pub access: access::Access,
    /// The last hour's API requests, for the staff dashboard.
    pub traffic: Arc<traffic::Traffic>,
    pub session_cookie: sessions::SessionCookie,
    /// The store's own address for examples and links (`--public-url`, else the
    /// address it listens on), never a request's `Host` (pages are kept and sent to
    /// others).
    pub origin: Arc<str>,
    /// The `/docs` page's model of the OpenAPI document.
    pub reference: Arc<crate::reference::ApiReference>,
    /// The currency prices are in (`--currency`).
    pub currency: crate::model::Currency,
    /// Where webhooks may go (`--webhooks-allow-private`).
    pub webhook_targets: webhooks::Targets,
    /// The store as a WebAuthn relying party (from `origin`), for shoppers' passkeys.
    pub passkeys: Arc<passkeys::RelyingParty>,
}
