//! The domain types shared by the server, the REST API and the browser.
//!
//! Field names follow the spec exactly (camelCase). Request shapes reject unknown
//! fields so that a typo in a client is an error, not a silently ignored value.

use serde::{Deserialize, Serialize};
use strum::{Display, EnumString, IntoStaticStr, VariantArray};

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

/// What every name must match, for clients that validate against the OpenAPI document:
/// no control characters, and something besides white space (names are trimmed).
pub const NAME_PATTERN: &str =
    r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$";

/// The schema of a boolean that may only be `true`.
#[cfg(feature = "ssr")]
fn only_true() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::Boolean).enum_values(Some([true])).build()
}

/// A pet's place in the sale cycle: `available` (in stock, can be ordered), `pending`
/// (its last units are in open orders), `sold` (gone).
// The states and their rules: contract.md, "States".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, IntoStaticStr, EnumString, Display, VariantArray)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum PetStatus {
    Available,
    Pending,
    Sold,
}

impl PetStatus {
    /// The name the API uses (`available`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<PetStatus> {
        s.parse().ok()
    }

    /// The word people read (badges, pickers and sentences alike).
    pub fn label(self) -> &'static str {
        match self {
            PetStatus::Available => "Available",
            PetStatus::Pending => "Pending",
            PetStatus::Sold => "Sold",
        }
    }
}

/// The enums of the API are read from their names as JSON strings and nothing else:
/// serde's derived enums would also take the object form `{"sold": null}`, and would
/// call a number in their place malformed JSON (400) rather than a wrong type (422).
fn one_of<'de, D, T>(deserializer: D, all: &'static [T], name: fn(T) -> &'static str) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Copy + 'static,
{
    struct Names<T: 'static>(&'static [T], fn(T) -> &'static str);

    impl<T: Copy> serde::de::Visitor<'_> for Names<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let names: Vec<&str> = self.0.iter().map(|v| (self.1)(*v)).collect();
            write!(f, "one of {}", names.join(", "))
        }

        fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<T, E> {
            self.0
                .iter()
                .copied()
                .find(|v| (self.1)(*v) == value)
                .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(value), &self))
        }
    }

    deserializer.deserialize_str(Names(all, name))
}

macro_rules! deserialize_by_name {
    ($($ty:ty),*) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                one_of(deserializer, <$ty>::VARIANTS, <$ty>::as_str)
            }
        }
    )*};
}

deserialize_by_name!(PetStatus, Role, Plan);

/// A field of a request that replaces a resource: left out (the value stays as it was),
/// `null` (the value is removed) or a value. Optional content (a pet's description
/// and price) works so, so that a client written before the field existed never
/// erases what staff wrote when it replaces a pet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Field<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Field<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Field::Keep)
    }

    /// The value given, if one was.
    pub fn given(&self) -> Option<&T> {
        match self {
            Field::Set(value) => Some(value),
            Field::Keep | Field::Clear => None,
        }
    }

    /// What the field becomes from `current`: kept, removed or replaced.
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Field::Keep => current,
            Field::Clear => None,
            Field::Set(value) => Some(value),
        }
    }

    /// A field set to `value` when there is one, else removed.
    pub fn from_option(value: Option<T>) -> Field<T> {
        value.map_or(Field::Clear, Field::Set)
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.given().serialize(serializer)
    }
}

/// `null` is [`Field::Clear`]; a missing field is [`Field::Keep`] (by `#[serde(default)]`).
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Field::from_option(Option::<T>::deserialize(deserializer)?))
    }
}

/// Request body for creating (POST) or replacing (PUT) a pet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPet {
    /// The animal's name: 1 to 100 characters after trimming.
    #[cfg_attr(feature = "ssr", schema(min_length = 1, max_length = 100, example = "Rex"))]
    pub name: String,
    /// Id of the category the animal belongs to.
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1, example = 1))]
    pub category_id: i64,
    /// Defaults to `available` on creation; left unchanged when omitted on replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PetStatus>,
    /// Plain text (no markup), at most 2,000 characters. On replace, an omitted
    /// description is left as it was; `null` or an empty one removes it.
    #[serde(default, skip_serializing_if = "Field::is_keep")]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, max_length = 2000))]
    pub description: Field<String>,
    /// The price in minor units of the store's currency (cents, for euros), 0 to
    /// 100,000,000. On replace, an omitted price is left as it was; `null` removes it.
    #[serde(default, skip_serializing_if = "Field::is_keep")]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<i64>, format = Int64, minimum = 0, maximum = 100_000_000, example = 12_900))]
    pub price: Field<i64>,
}

/// The widths every photo is stored and served at (`photoUrls` lists one URL each).
pub const PHOTO_WIDTHS: [u32; 3] = [320, 640, 1280];

/// A pet's photo: its content hash, which its URLs name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Photo {
    pub pet_id: i64,
    pub hash: String,
}

impl Photo {
    /// The URL of the photo at `width` (one of [`PHOTO_WIDTHS`]), a path on this store.
    pub fn url(&self, width: u32) -> String {
        format!("/media/pets/{}/{}-{width}.webp", self.pet_id, self.hash)
    }

    /// Every width's URL, narrowest first.
    pub fn urls(&self) -> Vec<String> {
        PHOTO_WIDTHS.iter().map(|width| self.url(*width)).collect()
    }

    /// The `srcset` attribute of an `<img>` showing it.
    pub fn srcset(&self) -> String {
        PHOTO_WIDTHS.iter().map(|width| format!("{} {width}w", self.url(*width))).collect::<Vec<_>>().join(", ")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Pet {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    pub name: String,
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub category_id: i64,
    pub status: PetStatus,
    /// Plain text; absent when the pet has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(max_length = 2000))]
    pub description: Option<String>,
    /// Minor units of the store's currency (the document's `info.x-currency`); absent
    /// when the pet has no price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 0, maximum = 100_000_000))]
    pub price: Option<i64>,
    /// The pet's photo 320, 640 and 1280 pixels wide (WebP), as paths on this store
    /// (`/media/…`: served without a key, cached for a year); empty when it has none.
    /// Set with `PUT /pets/{petId}/photo`.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(read_only, required = true))]
    pub photo_urls: Vec<String>,
}

/// Request body for creating or replacing a category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewCategory {
    /// Unique, case-insensitively; 1 to 100 characters after trimming.
    #[cfg_attr(feature = "ssr", schema(min_length = 1, max_length = 100, example = "Dogs"))]
    pub name: String,
    /// At most 1,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(max_length = 1000))]
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema, sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct Category {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema, sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct InventoryItem {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub pet_id: i64,
    #[cfg_attr(feature = "ssr", schema(minimum = 0, maximum = 1_000_000))]
    pub quantity: i64,
    pub status: PetStatus,
}

/// Request body for `PUT /store/inventory/{petId}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InventoryUpdate {
    /// The new stock count, 0 to 1,000,000.
    #[cfg_attr(feature = "ssr", schema(minimum = 0, maximum = 1_000_000))]
    pub quantity: i64,
}

/// What the storefront shows for one pet: the pet joined with its category and stock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct PetCard {
    pub id: i64,
    pub name: String,
    pub category_id: i64,
    pub category_name: String,
    pub status: PetStatus,
    pub quantity: i64,
    pub description: Option<String>,
    pub price: Option<i64>,
    pub photo_hash: Option<String>,
}

impl PetCard {
    pub fn photo(&self) -> Option<Photo> {
        self.photo_hash.clone().map(|hash| Photo { pet_id: self.id, hash })
    }
}

impl From<PetCard> for Pet {
    fn from(card: PetCard) -> Pet {
        let photo_urls = card.photo().map(|photo| photo.urls()).unwrap_or_default();
        Pet {
            id: card.id,
            name: card.name,
            category_id: card.category_id,
            status: card.status,
            description: card.description,
            price: card.price,
            photo_urls,
        }
    }
}

/// A category with the number of pets in it, for the categories page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct CategorySummary {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub pet_count: i64,
}

/// How many pets have a status, and how many units they hold, for the dashboard.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusStock {
    pub status: PetStatus,
    pub pets: i64,
    pub units: i64,
}

/// A pet for sale with this many units or fewer is running low: marked so in the
/// inventory and listed on the dashboard. (The dashboard's index, migration
/// `…_sales.sql`, is built for 1 to 2.)
pub const LOW_STOCK: i64 = 2;

/// What the shop sold and what it has to do, for the dashboard's first panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sales {
    /// The totals of the orders placed since midnight (UTC), less those cancelled.
    pub revenue_today: i64,
    /// The same since Monday's midnight (UTC).
    pub revenue_this_week: i64,
    /// Orders neither completed nor cancelled: to fulfil.
    pub open_orders: i64,
    /// Pets for sale running low, fewest first, then newest (at most [`LOW_STOCK_LISTED`]).
    pub low_stock: Vec<LowStockPet>,
}

/// The most pets running low the dashboard lists (the inventory has them all).
pub const LOW_STOCK_LISTED: i64 = 10;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct LowStockPet {
    pub id: i64,
    pub name: String,
    pub quantity: i64,
}

/// How the scheduled snapshots of a SQLite store stand, for the dashboard
/// (`services::backups::status`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackupStatus {
    /// Every how many seconds one is taken (`--backup-every`); `None` when no server
    /// of this store has taken scheduled backups.
    pub every_seconds: Option<i64>,
    /// When the last one was written (RFC 3339), how long ago, and where.
    pub last_success_at: Option<String>,
    pub last_success_ago_seconds: Option<i64>,
    pub last_file: Option<String>,
    /// Why the last attempt failed, when it did (and none has succeeded since).
    pub failing: Option<String>,
    /// What staff should be warned of: the last backup is older than twice the
    /// interval, or the last attempt failed.
    pub warning: Option<String>,
}

/// API requests per minute over the last hour (oldest first), for the dashboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrafficSeries {
    /// The key the series is for; `None` for the API as a whole.
    pub key_id: Option<i64>,
    /// What the chart calls it (the key's name).
    pub label: String,
    pub per_minute: Vec<u32>,
}

impl TrafficSeries {
    pub fn total(&self) -> u64 {
        self.per_minute.iter().map(|&n| u64::from(n)).sum()
    }
}

/// The orders the catalog can be shown in (the API lists by id, `Added`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, IntoStaticStr, EnumString, VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum PetSort {
    /// The order pets were added in (by id).
    #[default]
    Added,
    /// By name, A to Z.
    Name,
    /// By price, lowest first; pets without a price last.
    Price,
    /// The latest added first.
    Newest,
}

impl PetSort {
    /// The name the catalog's address uses (`?sort=price`); the default has none.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// A sort from the address's value; none (or an empty one) is the default.
    pub fn parse(raw: Option<&str>) -> Option<PetSort> {
        match raw.filter(|value| !value.is_empty()) {
            None => Some(PetSort::Added),
            Some(value) => value.parse().ok(),
        }
    }

    /// What the picker calls it.
    pub fn label(self) -> &'static str {
        match self {
            PetSort::Added => "Catalog order",
            PetSort::Name => "Name, A to Z",
            PetSort::Price => "Price, lowest first",
            PetSort::Newest => "Newest first",
        }
    }
}

/// The filters of a pet listing, as the REST API and the catalog page accept them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PetFilter {
    pub status: Option<PetStatus>,
    pub category_id: Option<i64>,
    /// Case-insensitive "name contains" (the REST API's `q`).
    pub q: Option<String>,
    /// Case-insensitive "name, category or description contains": the storefront's
    /// search box, which shoppers type a kind of pet or a word of its story into.
    pub text: Option<String>,
    /// At most 100 ids.
    pub ids: Option<Vec<i64>>,
}

impl PetFilter {
    /// This filter with its search widened from names to names, categories and
    /// descriptions: what the storefront's `?q=` means.
    pub fn searching_everywhere(self) -> PetFilter {
        PetFilter { text: self.q, q: None, ..self }
    }
}

/// One page of a listing; `next_cursor` is set when there is more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

/// What a key may do: `customer` browses the catalog and places and cancels its own
/// orders; `admin` also changes the catalog and stock, completes orders and manages keys.
// contract.md, "Endpoints": the role column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, IntoStaticStr, EnumString, Display, VariantArray)]
#[cfg_attr(feature = "ssr", derive(ToSchema, clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Role {
    Customer,
    Admin,
}

impl Role {
    /// The word people read.
    pub fn label(self) -> &'static str {
        match self {
            Role::Customer => "Customer",
            Role::Admin => "Admin",
        }
    }

    /// The name the API uses (`customer`, `admin`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A key's plan, which sets its rate limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, IntoStaticStr, EnumString, Display, VariantArray)]
#[cfg_attr(feature = "ssr", derive(ToSchema, clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Plan {
    Free,
    Pro,
    Business,
    Enterprise,
}

impl Plan {
    /// The word people read.
    pub fn label(self) -> &'static str {
        match self {
            Plan::Free => "Free",
            Plan::Pro => "Pro",
            Plan::Business => "Business",
            Plan::Enterprise => "Enterprise",
        }
    }

    /// The name the API uses (`free`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The plan's fixed limits; Enterprise has none of its own (set per key).
    pub fn limits(self) -> Option<Limits> {
        match self {
            Plan::Free => Some(Limits { per_minute: 60, per_day: 1_000 }),
            Plan::Pro => Some(Limits { per_minute: 300, per_day: 10_000 }),
            Plan::Business => Some(Limits { per_minute: 1_000, per_day: 100_000 }),
            Plan::Enterprise => None,
        }
    }
}

/// Requests allowed per UTC minute and per UTC day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Limits {
    #[cfg_attr(feature = "ssr", schema(minimum = 1))]
    pub per_minute: u32,
    #[cfg_attr(feature = "ssr", schema(minimum = 1))]
    pub per_day: u32,
}

/// A key as the API shows it; the secret itself is never stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    pub name: String,
    pub role: Role,
    pub plan: Plan,
    pub limits: Limits,
    /// When the key was made (RFC 3339, UTC).
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub created_at: String,
    /// When the key was revoked (RFC 3339, UTC); null while the key works. Always sent.
    #[cfg_attr(feature = "ssr", schema(format = DateTime, required = true))]
    pub revoked_at: Option<String>,
}

/// The answer to creating a key: the key, plus its secret, shown this once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedApiKey {
    #[serde(flatten)]
    pub key_info: ApiKey,
    /// The secret to send as `X-API-Key`. It cannot be shown again.
    pub key: String,
}

/// Request body of the admin's `POST /keys`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewApiKey {
    /// 1 to 100 characters.
    #[cfg_attr(feature = "ssr", schema(min_length = 1, max_length = 100))]
    pub name: String,
    pub role: Role,
    pub plan: Plan,
    /// Required for (and only for) the Enterprise plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
}

/// Request body of the self-service `POST /keys` (no key needed). May be empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignUp {
    /// A name to recognise the key by (default "Free key").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(min_length = 1, max_length = 100))]
    pub name: Option<String>,
}

/// Who is calling: the key's id, role and limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Caller {
    pub key_id: i64,
    pub role: Role,
    pub limits: Limits,
}

/// How long the browser is told to wait for the user in a passkey ceremony: less than
/// the 5 minutes a ceremony lives on the server (`services::passkeys`), so that an
/// answer given at the browser's last moment is still in time. The sign-in page's
/// autofill request, which waits as long as the page is open, is made anew this often.
pub const PASSKEY_WAIT_SECONDS: u64 = 240;

/// The first half of a passkey ceremony, for the browser (`services::passkeys`): the
/// token to send back with its answer, and the options for `navigator.credentials`
/// as JSON. Storefront only; not part of the REST API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasskeyCeremony {
    pub token: String,
    pub options: String,
}

/// An account just made with a passkey: who this browser is signed in as now, and the
/// recovery codes, shown this once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewAccount {
    pub caller: Caller,
    pub recovery_codes: Vec<String>,
    /// The passkey it was made with (the session it opened ends with it).
    pub passkey_id: i64,
}

/// An account as its owner sees it (the storefront's `/account`): its passkeys, its
/// recovery codes left, and the start of its API key. Storefront only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountView {
    /// The key's number, as the staff console lists it (for a shopper to quote).
    pub key_id: i64,
    pub role: Role,
    /// `psk_<prefix>_`: what is kept of the key in a form that can be shown (the rest
    /// only as a hash).
    pub key_start: String,
    /// Oldest first; none for a key with no passkey yet.
    pub passkeys: Vec<PasskeyView>,
    pub recovery_codes_left: i64,
    /// This browser signed in with the key's secret and the account has a passkey:
    /// changing its passkeys or key needs a passkey or a recovery code.
    pub locked: bool,
}

/// One of an account's passkeys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasskeyView {
    pub id: i64,
    pub name: String,
    /// RFC 3339.
    pub created_at: String,
    pub last_used_at: Option<String>,
    /// Whether this browser's session was opened with it (removing it signs it out).
    pub this_browser: bool,
    /// Whether it may go: not the last one while no recovery code is left.
    pub removable: bool,
}

/// What removing a passkey did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovedPasskey {
    pub name: String,
    /// The browser sessions it had opened, now ended.
    pub sessions_ended: u64,
}

/// An order for a pet. `id` and `complete` are assigned by the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Order {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub pet_id: i64,
    #[cfg_attr(feature = "ssr", schema(minimum = 1, maximum = 1000))]
    pub quantity: i64,
    /// Requested ship date, or the completion time when completed without one (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub ship_date: Option<String>,
    pub complete: bool,
    /// The pet's price when the order was placed, in minor units of the store's
    /// currency; absent when the pet had no price. Later price changes do not touch it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 0, read_only))]
    pub unit_price: Option<i64>,
    /// `unitPrice` × `quantity`, fixed when the order was placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 0, read_only))]
    pub total: Option<i64>,
}

/// The most units one order may ask for.
pub const ORDER_QUANTITY_MAX: i64 = 1_000;

/// An order's quantity as typed into the pet page's form: a whole number from 1 to
/// 1,000, in any spelling a browser's number field lets through ("2", " 2 ", "2.0",
/// "1e1"). Otherwise what is wrong with it, in words that follow the field's label
/// ("Quantity must be …"). The page's total and the server's check both use it.
pub fn typed_quantity(raw: &str) -> Result<i64, String> {
    let raw = raw.trim();
    let range = format!("a whole number from 1 to {}", thousands(ORDER_QUANTITY_MAX.unsigned_abs()));
    if raw.is_empty() {
        return Err(format!("must be filled in: {range}"));
    }
    let units = match raw.parse::<i64>() {
        Ok(units) => units,
        Err(_) => match raw.parse::<f64>() {
            // `as` saturates, so 1e30 stays too many rather than wrapping round.
            Ok(number) if number.is_finite() && number.fract() == 0.0 => number as i64,
            _ => return Err(format!("must be {range}")),
        },
    };
    order_quantity(units)
}

/// The one rule for how many units an order may ask for, shared by the REST API, the
/// server functions and the pet page's total: `Err` says what is wrong.
pub fn order_quantity(units: i64) -> Result<i64, String> {
    if units < 1 {
        Err("must be at least 1".to_owned())
    } else if units > ORDER_QUANTITY_MAX {
        Err(format!("must be at most {} in one order", thousands(ORDER_QUANTITY_MAX.unsigned_abs())))
    } else {
        Ok(units)
    }
}

/// A count with thousands separators ("1,000"), as the storefront writes numbers.
pub fn thousands(count: u64) -> String {
    let digits = count.to_string();
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (n, digit) in digits.chars().enumerate() {
        if n > 0 && (digits.len() - n).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// Request body of `POST /store/orders`.

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewOrder {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub pet_id: i64,
    /// 1 to 1,000 units.
    #[cfg_attr(feature = "ssr", schema(minimum = 1, maximum = 1000))]
    pub quantity: i64,
    /// A requested ship date, ISO 8601 with an offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub ship_date: Option<String>,
}

/// Request body of `PATCH /store/orders/{orderId}` (admin): fulfils the order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderCompletion {
    /// Must be `true`: completion is the only change an order takes.
    #[cfg_attr(feature = "ssr", schema(schema_with = only_true))]
    pub complete: bool,
    /// The ship date; defaults to the requested one, else the completion time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub ship_date: Option<String>,
}

/// The filters of an order listing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OrderFilter {
    pub complete: Option<bool>,
    pub pet_id: Option<i64>,
}

/// Where an order stands, as the storefront shows it (the API shows no cancelled ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, IntoStaticStr, EnumString, VariantArray)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum OrderState {
    Open,
    Completed,
    Cancelled,
}

impl OrderState {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The word people read (the badges and the filter use it alike).
    pub fn label(self) -> &'static str {
        match self {
            OrderState::Open => "Open",
            OrderState::Completed => "Completed",
            OrderState::Cancelled => "Cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<OrderState> {
        text.parse().ok()
    }
}

/// The storefront's order history filters: a state, and the pet's name (contains,
/// case-insensitively).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OrderHistoryFilter {
    pub state: Option<OrderState>,
    pub pet: Option<String>,
}

/// An order as the storefront lists it: with its pet's name (while the pet exists),
/// when it was placed (RFC 3339, UTC) and where it stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderView {
    pub order: Order,
    pub pet_name: Option<String>,
    pub placed_at: String,
    pub state: OrderState,
}

impl OrderView {
    /// "2 × Misty", or the pet's id once the pet is gone.
    pub fn what(&self) -> String {
        match &self.pet_name {
            Some(name) => format!("{} × {name}", self.order.quantity),
            None => format!("{} × pet {}", self.order.quantity, self.order.pet_id),
        }
    }
}

/// What cancelling did: the order as it stands now, and whether it had already been
/// cancelled before (a repeated cancel is not an error in the storefront).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cancellation {
    pub order: OrderView,
    pub already: bool,
}

/// The store's currency (`--currency`, an ISO 4217 code): prices are kept in its minor
/// units (cents), and shown with its symbol and number of decimals.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Currency {
    /// The ISO 4217 code, such as `EUR`.
    pub code: String,
    /// Decimals of its minor unit: 2 for the euro, 0 for the yen, 3 for the dinar.
    pub digits: u8,
}

impl Default for Currency {
    fn default() -> Currency {
        Currency { code: "EUR".into(), digits: 2 }
    }
}

impl Currency {
    /// The currency of an ISO 4217 code (three letters, any case); `None` for anything
    /// else. Codes whose minor unit is not a hundredth are known by their decimals.
    pub fn from_code(code: &str) -> Option<Currency> {
        let code = code.trim().to_ascii_uppercase();
        if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_uppercase()) {
            return None;
        }
        let digits = match code.as_str() {
            "BIF" | "CLP" | "DJF" | "GNF" | "ISK" | "JPY" | "KMF" | "KRW" | "PYG" | "RWF" | "UGX" | "UYI" | "VND"
            | "VUV" | "XAF" | "XOF" | "XPF" => 0,
            "BHD" | "IQD" | "JOD" | "KWD" | "LYD" | "OMR" | "TND" => 3,
            _ => 2,
        };
        Some(Currency { code, digits })
    }

    /// The symbol written before an amount ("€12.50"), or the code and a space.
    fn prefix(&self) -> String {
        match self.code.as_str() {
            "EUR" => "€".into(),
            "USD" => "$".into(),
            "GBP" => "£".into(),
            "JPY" => "¥".into(),
            "INR" => "₹".into(),
            code => format!("{code}\u{a0}"),
        }
    }

    /// An amount in minor units as people read it: `€1,290.00`, `CHF 5.00`, `¥1,290`.
    pub fn format(&self, minor: i64) -> String {
        let scale = 10_i64.pow(u32::from(self.digits));
        let (whole, fraction) =
            (minor.unsigned_abs() / scale.unsigned_abs(), minor.unsigned_abs() % scale.unsigned_abs());
        let grouped = thousands(whole);
        let sign = if minor < 0 { "-" } else { "" };
        match self.digits {
            0 => format!("{sign}{}{grouped}", self.prefix()),
            digits => format!("{sign}{}{grouped}.{fraction:0width$}", self.prefix(), width = usize::from(digits)),
        }
    }

    /// An amount in minor units as a form shows it for editing (`1290.00`, no symbol).
    pub fn plain(&self, minor: i64) -> String {
        let scale = 10_i64.pow(u32::from(self.digits));
        match self.digits {
            0 => minor.to_string(),
            digits => format!("{}.{:0width$}", minor / scale, (minor % scale).abs(), width = usize::from(digits)),
        }
    }

    /// An amount typed in major units (`12`, `12.5`, `12,50`) as minor units; `Err` says
    /// what is wrong with it.
    pub fn parse(&self, typed: &str) -> Result<i64, String> {
        let typed = typed.trim();
        let (whole, fraction) = match typed.split_once(['.', ',']) {
            Some((whole, fraction)) => (whole, fraction),
            None => (typed, ""),
        };
        let plain = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        let digits = usize::from(self.digits);
        if whole.is_empty() || !plain(whole) || !plain(fraction) || fraction.len() > digits {
            return Err(match digits {
                0 => format!("must be a whole number of {}", self.code),
                _ => format!("must be an amount of {} with at most {digits} decimals, like 12.50", self.code),
            });
        }
        let scale = 10_i64.pow(u32::from(self.digits));
        let whole: i64 = whole.parse().map_err(|_| "is too large".to_owned())?;
        let fraction: i64 = if fraction.is_empty() { 0 } else { format!("{fraction:0<digits$}").parse().unwrap_or(0) };
        whole.checked_mul(scale).and_then(|minor| minor.checked_add(fraction)).ok_or_else(|| "is too large".to_owned())
    }
}

/// What happened in the store, as events name it.
// contract.md, "Events".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, IntoStaticStr, EnumString, VariantArray)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub enum EventType {
    #[serde(rename = "order.created")]
    #[strum(serialize = "order.created")]
    OrderCreated,
    #[serde(rename = "order.completed")]
    #[strum(serialize = "order.completed")]
    OrderCompleted,
    #[serde(rename = "order.cancelled")]
    #[strum(serialize = "order.cancelled")]
    OrderCancelled,
    #[serde(rename = "pet.created")]
    #[strum(serialize = "pet.created")]
    PetCreated,
    #[serde(rename = "pet.updated")]
    #[strum(serialize = "pet.updated")]
    PetUpdated,
    #[serde(rename = "pet.deleted")]
    #[strum(serialize = "pet.deleted")]
    PetDeleted,
    #[serde(rename = "pet.status_changed")]
    #[strum(serialize = "pet.status_changed")]
    PetStatusChanged,
    #[serde(rename = "inventory.updated")]
    #[strum(serialize = "inventory.updated")]
    InventoryUpdated,
    #[serde(rename = "inventory.out_of_stock")]
    #[strum(serialize = "inventory.out_of_stock")]
    InventoryOutOfStock,
    #[serde(rename = "key.revoked")]
    #[strum(serialize = "key.revoked")]
    KeyRevoked,
    /// Sent by `POST /webhooks/{webhookId}/test` only.
    #[serde(rename = "ping")]
    #[strum(serialize = "ping")]
    Ping,
}

impl EventType {
    /// The name events carry (`order.created`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The types a webhook may subscribe to (all but `ping`, which only the test call
    /// sends).
    pub fn subscribable() -> impl Iterator<Item = EventType> {
        EventType::VARIANTS.iter().copied().filter(|kind| *kind != EventType::Ping)
    }
}

deserialize_by_name!(EventType);

/// An event as webhooks and streams carry it: `data` is the resource as the REST API
/// shows it after the change (for `pet.deleted`, the pet as it was).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `evt_` and 24 hex digits; the same on every delivery and retry of it.
    pub id: String,
    #[serde(rename = "type")]
    pub kind: EventType,
    /// When the change committed (RFC 3339, UTC).
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub created_at: String,
    #[cfg_attr(feature = "ssr", schema(value_type = Object))]
    pub data: serde_json::Value,
}

/// Request body of `POST /webhooks`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWebhook {
    /// Where events are sent: `https`, or `http` to a public address.
    #[cfg_attr(feature = "ssr", schema(max_length = 2000, example = "https://example.com/petstore/events"))]
    pub url: String,
    /// The event types it takes, or `["*"]` for all.
    #[cfg_attr(feature = "ssr", schema(min_items = 1, example = json!(["order.created", "inventory.out_of_stock"])))]
    pub events: Vec<String>,
    /// At most 1,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(max_length = 1000))]
    pub description: Option<String>,
}

/// Request body of `PATCH /webhooks/{webhookId}`: what it names changes, the rest stays.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(max_length = 2000))]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(min_items = 1))]
    pub events: Option<Vec<String>>,
    /// `false` stops deliveries (they are not kept for later); `true` starts them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `null` or `""` removes it.
    #[serde(default, skip_serializing_if = "Field::is_keep")]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, max_length = 1000))]
    pub description: Field<String>,
}

/// A webhook endpoint as the API shows it; its secret never again after creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    pub url: String,
    pub events: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub enabled: bool,
    /// When the store itself disabled it (after three days of failed deliveries): why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<String>,
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub created_at: String,
}

/// The answer to `POST /webhooks` and to rotating its secret: the endpoint and the
/// secret that signs its deliveries, shown this once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_` and the key in base64 (Standard Webhooks).
    pub secret: String,
    /// After a rotation: until when the previous secret signs too (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub previous_secret_expires_at: Option<String>,
}

/// Where an attempt to deliver an event stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, IntoStaticStr, EnumString, VariantArray)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum DeliveryStatus {
    /// Still to make (due at `nextAttemptAt`).
    Pending,
    Succeeded,
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

deserialize_by_name!(DeliveryStatus);

/// One attempt to deliver an event to an endpoint: made, or still to make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    pub event_id: String,
    pub event_type: EventType,
    /// 1 for the first attempt.
    #[cfg_attr(feature = "ssr", schema(minimum = 1))]
    pub attempt: i64,
    pub status: DeliveryStatus,
    /// The endpoint's answer; null when it gave none (a timeout, a refused connection).
    #[cfg_attr(feature = "ssr", schema(required = true))]
    pub response_status: Option<i64>,
    /// How long the attempt took, in milliseconds; null until it was made.
    #[cfg_attr(feature = "ssr", schema(required = true))]
    pub duration_ms: Option<i64>,
    /// Why the attempt failed; null when it did not.
    #[cfg_attr(feature = "ssr", schema(required = true))]
    pub error: Option<String>,
    /// The body the attempt sends: the event, as the `webhook-signature` signs it.
    #[cfg_attr(feature = "ssr", schema(value_type = Object))]
    pub payload: serde_json::Value,
    /// The first 2,048 bytes of the endpoint's answer, as text; null when it gave none
    /// (or an empty one), and until the attempt is made.
    #[cfg_attr(feature = "ssr", schema(required = true))]
    pub response_body: Option<String>,
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub created_at: String,
    /// When the attempt is made (pending) or, after a failure, when it is tried again;
    /// null when no attempt is due.
    #[cfg_attr(feature = "ssr", schema(format = DateTime, required = true))]
    pub next_attempt_at: Option<String>,
}

/// The case-folded form of a name, for case-insensitive comparison (category names are
/// unique so, and searches match so).
pub fn fold(text: &str) -> String {
    text.to_lowercase()
}

/// A span of seconds as people say it: "40 s", "12 min", "5 h", "3 days".
pub fn span_in_words(seconds: i64) -> String {
    match seconds {
        ..120 => format!("{seconds} s"),
        120..7_200 => format!("{} min", seconds / 60),
        7_200..172_800 => format!("{} h", seconds / 3_600),
        _ => format!("{} days", seconds / 86_400),
    }
}

/// A moment as staff and shoppers read it without a browser's locale:
/// `2026-11-24T10:05:00Z` → `2026-11-24 10:05 UTC` (anything else as it is).
pub fn utc_text(iso: &str) -> String {
    match (iso.get(..10), iso.get(11..16)) {
        (Some(date), Some(time)) if iso.ends_with('Z') => format!("{date} {time} UTC"),
        _ => iso.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_quantity_is_read_as_the_browser_lets_it_through() {
        for (typed, units) in [("2", 2), (" 3 ", 3), ("2.0", 2), ("1e1", 10), ("+4", 4), ("1000", 1000)] {
            assert_eq!(typed_quantity(typed), Ok(units), "{typed:?}");
        }
        let whole = Err("must be a whole number from 1 to 1,000".to_owned());
        for typed in ["2.5", "two", "1e-1", "NaN", "inf", "0x10"] {
            assert_eq!(typed_quantity(typed), whole, "{typed:?}");
        }
        assert_eq!(typed_quantity(""), Err("must be filled in: a whole number from 1 to 1,000".to_owned()));
        for typed in ["0", "-3", "-0.0", "-1e30"] {
            assert_eq!(typed_quantity(typed), Err("must be at least 1".to_owned()), "{typed:?}");
        }
        for typed in ["1001", "1e30", "99999999999999999999"] {
            assert_eq!(typed_quantity(typed), Err("must be at most 1,000 in one order".to_owned()), "{typed:?}");
        }
    }

    #[test]
    fn spans_read_as_people_say_them() {
        assert_eq!(span_in_words(40), "40 s");
        assert_eq!(span_in_words(12 * 60 + 5), "12 min");
        assert_eq!(span_in_words(5 * 3600), "5 h");
        assert_eq!(span_in_words(3 * 86_400), "3 days");
    }
}
