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

/// Request body for creating (POST) or replacing (PUT) a pet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema, sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct Pet {
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub id: i64,
    pub name: String,
    #[cfg_attr(feature = "ssr", schema(format = Int64, minimum = 1))]
    pub category_id: i64,
    pub status: PetStatus,
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
}

impl From<PetCard> for Pet {
    fn from(card: PetCard) -> Pet {
        Pet { id: card.id, name: card.name, category_id: card.category_id, status: card.status }
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

/// The filters of a pet listing, as the REST API and the catalog page accept them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PetFilter {
    pub status: Option<PetStatus>,
    pub category_id: Option<i64>,
    /// Case-insensitive "name contains".
    pub q: Option<String>,
    /// At most 100 ids.
    pub ids: Option<Vec<i64>>,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caller {
    pub key_id: i64,
    pub role: Role,
    pub limits: Limits,
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
