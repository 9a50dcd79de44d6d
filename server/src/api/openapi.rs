//! The OpenAPI 3.1 document, generated from the handlers' `#[utoipa::path]`
//! annotations by the same `OpenApiRouter` calls that build the router, so a route
//! cannot exist without its documentation (a test checks both ways).

use app::error::AppError;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use utoipa::OpenApi;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Deprecated, PathItem};
use utoipa_axum::router::UtoipaMethodRouter;
use utoipa_axum::routes;

use super::{BASE, categories, events, inventory, keys, orders, pets, webhooks};
use crate::{AppState, Config};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Pet Store API",
        version = "1.0.0",
        description = "The pet store's public REST API: its pets and their categories, stock, \
            orders, keys, events and webhooks. Every error is an `Error` object `{code, message, \
            status}`. List endpoints page with `limit` and `cursor`; the next page is in the \
            `Link: <…>; rel=\"next\"` header.\n\n\
            Rate limits are the key's, wherever it is used: its plan's requests a minute and a day, \
            the store's own pages signed in with the key included; a banned key is refused \
            everywhere. Requests without a key count against the client's address at the Free \
            plan's numbers; requests with a key that does not work count apart, so that guessing \
            is throttled and banned without banning the address.\n\n\
            A browser signed in to the store holds a session cookie, never the key; this API \
            takes it only from the store's own pages (`Sec-Fetch-Site: same-origin`), as the docs \
            page's try-it panels send it. Other sites' pages send a key.",
    ),
    servers((url = "/api/v1", description = "This server, API version 1")),
    tags(
        (name = "Pets", description = "Pets and their categories"),
        (name = "Store", description = "Stock, orders, API keys, and the store's events (a stream, and webhooks)"),
        (name = "Meta", description = "This document"),
    ),
    components(schemas(AppError, app::model::SignUp)),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

struct SecuritySchemes;

impl utoipa::Modify for SecuritySchemes {
    fn modify(&self, document: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-API-Key",
                "Get a Free key with POST /keys; the plan sets its rate limits",
            ))),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The same key as a bearer token"))
                    .build(),
            ),
        );
    }
}

/// Every operation's stability (`x-stability`); anything not listed is `stable`.
/// Beta and experimental operations also answer with `X-API-Stability`.
/// Keyed by method and path, so that the `X-API-Stability` layer can use the same table.
pub const STABILITY: &[(&str, &str, &str)] = &[("post", "/keys", "beta")];

/// Operations that need no key (all others need one, sent as `X-API-Key` or
/// `Authorization: Bearer`). Sign-up takes one optionally (an admin's creates any key).
const KEY_OPTIONAL: &[&str] = &["createKey"];
const PUBLIC: &[&str] = &["getOpenApiDocument"];

/// The documented routes of the API, at their full paths (`/api/v1/pets/{petId}`),
/// and the document describing them, whose paths are relative to its `servers` URL.
pub fn routes(config: &Config) -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let documented = [
        routes!(pets::list_pets, pets::create_pet),
        routes!(pets::get_pet, pets::replace_pet, pets::delete_pet),
        routes!(pets::set_photo, pets::delete_photo),
        routes!(categories::list_categories, categories::create_category),
        routes!(categories::get_category, categories::replace_category, categories::delete_category),
        routes!(inventory::list_inventory),
        routes!(inventory::get_inventory, inventory::set_inventory),
        routes!(orders::place_order, orders::list_orders),
        routes!(orders::get_order, orders::complete_order, orders::cancel_order),
        routes!(keys::create_key, keys::list_keys),
        routes!(keys::revoke_key),
        routes!(events::stream_events),
        routes!(webhooks::create_webhook, webhooks::list_webhooks),
        routes!(webhooks::get_webhook, webhooks::update_webhook, webhooks::delete_webhook),
        routes!(webhooks::test_webhook),
        routes!(webhooks::rotate_webhook_secret),
        routes!(webhooks::list_webhook_deliveries),
        routes!(webhooks::retry_webhook_delivery),
        routes!(openapi_json),
    ];
    let (router, mut document) = documented.into_iter().fold((Router::new(), ApiDoc::openapi()), add);
    annotate(&mut document, config);
    (router, document)
}

/// What `utoipa_axum`'s `OpenApiRouter::routes` does, with the router's path under
/// [`BASE`]: the API is routed at its full paths, so that it needs no nesting (which
/// rewrites every request's URI and routes it twice), while the document keeps its
/// paths relative to its `servers` URL.
fn add(
    (mut router, mut document): (Router<AppState>, utoipa::openapi::OpenApi),
    (schemas, paths, method_router): UtoipaMethodRouter<AppState>,
) -> (Router<AppState>, utoipa::openapi::OpenApi) {
    for (path, item) in paths.paths {
        router = router.route(&format!("{BASE}{path}"), method_router.clone());
        match document.paths.paths.get_mut(&path) {
            Some(existing) => existing.merge_operations(item),
            None => {
                document.paths.paths.insert(path, item);
            }
        }
    }
    document.components.get_or_insert_with(Default::default).schemas.extend(schemas);
    (router, document)
}

/// The document `GET /openapi.json` serves (the docs page is drawn from it).
pub fn document(config: &Config) -> serde_json::Value {
    let mut document = serde_json::to_value(routes(config).1).expect("the OpenAPI document serializes");
    for_generators::complete(&mut document);
    document
}

/// The document as `GET /openapi.json` sends it, written once (`AppState`).
pub fn document_json(config: &Config) -> Bytes {
    Bytes::from(serde_json::to_string(&document(config)).expect("the OpenAPI document serializes"))
}

/// This document
///
/// The OpenAPI 3.1 description of this API, as JSON. Needs no key (requests count
/// against the client's address).
#[utoipa::path(get, path = "/openapi.json", tag = "Meta", operation_id = "getOpenApiDocument",
    responses(
        (status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object),
        (status = 429, description = "Over the address's rate limit (`rate_limited`), or banned (`temporarily_banned`); see `Retry-After`", body = AppError),
    ))]
async fn openapi_json(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], state.openapi_json.clone())
}

/// Adds what the annotations cannot say: `x-stability` everywhere, and the deprecation
/// of `GET /pets/{petId}` with its configured sunset date.
fn annotate(document: &mut utoipa::openapi::OpenApi, config: &Config) {
    let sunset = config.sunset.date().to_string();
    if let Some(public_url) = &config.public_url {
        document.servers = Some(vec![utoipa::openapi::server::Server::new(format!("{public_url}{BASE}"))]);
    }
    // Prices are numbers in minor units: the currency they count is the store's.
    let currency = &config.currency;
    document.info.extensions.get_or_insert_with(Default::default).merge(
        ExtensionsBuilder::new()
            .add("x-currency", currency.code.clone())
            .add("x-currency-digits", currency.digits)
            .build(),
    );
    if let Some(description) = document.info.description.as_mut() {
        description.push_str(&format!(
            "\n\nPrices (`price`, `unitPrice`, `total`) are integers in minor units of the store's currency, \
             `info.x-currency` ({}, with {} decimals: {} is written `{}`). Photos are served outside the API, \
             at the paths of a pet's `photoUrls`, without a key.",
            currency.code,
            currency.digits,
            12_900,
            currency.format(12_900),
        ));
    }
    document.info.contact = Some(
        utoipa::openapi::ContactBuilder::new()
            .name(Some("Pet Store API"))
            .url(Some(format!("{}/docs", config.origin())))
            .build(),
    );
    for (path, item) in document.paths.paths.iter_mut() {
        for (method, operation) in operations(item) {
            let id = operation.operation_id.clone().unwrap_or_default();
            let stability = stability(method, path).unwrap_or("stable");
            let mut extensions = ExtensionsBuilder::new().add("x-stability", stability);
            if method == "get" && path == "/store/orders" {
                // The docs page shows no try-it panel for it (spec, "Endpoints").
                extensions = extensions.add("x-hideTryItPanel", true);
            }
            if id == "setPetPhoto" {
                // Its body is an image file; the panel sends JSON (curl is in the guide).
                extensions = extensions.add("x-hideTryItPanel", true);
            }
            if method == "get" && path == "/pets/{petId}" {
                operation.deprecated = Some(Deprecated::True);
                extensions = extensions.add("x-sunset", sunset.clone()).add("x-successor", "GET /pets?ids={petId}");
            }
            operation.extensions.get_or_insert_with(Default::default).merge(extensions.build());
            operation.security = Some(if PUBLIC.contains(&id.as_str()) {
                // Said outright, so that linters and generators need not guess.
                Vec::new()
            } else {
                let mut security = vec![
                    SecurityRequirement::new("apiKey", Vec::<String>::new()),
                    SecurityRequirement::new("bearer", Vec::<String>::new()),
                ];
                if KEY_OPTIONAL.contains(&id.as_str()) {
                    // Anonymous first: a generated client then calls it without a key.
                    security.insert(0, SecurityRequirement::default());
                }
                security
            });
        }
    }
    name_patterns(document);
}

/// Every `name` a client sends must match `NAME_PATTERN` (the service's own rule, said
/// once here rather than in each schema's attributes).
fn name_patterns(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = document.components.as_mut() else { return };
    for schema in ["NewPet", "NewCategory", "NewApiKey", "SignUp"] {
        if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(schema)
            && let Some(RefOr::T(Schema::Object(name))) = object.properties.get_mut("name")
        {
            name.pattern = Some(app::model::NAME_PATTERN.to_owned());
        }
    }
}

/// The stability of a non-stable operation (`method` lowercase, `path` under the base).
pub fn stability(method: &str, path: &str) -> Option<&'static str> {
    STABILITY.iter().find(|(m, p, _)| m.eq_ignore_ascii_case(method) && *p == path).map(|(_, _, s)| *s)
}

/// The operations of a path item with their lowercase method names.
pub fn operations(item: &mut PathItem) -> impl Iterator<Item = (&'static str, &mut utoipa::openapi::path::Operation)> {
    [
        ("get", &mut item.get),
        ("put", &mut item.put),
        ("post", &mut item.post),
        ("delete", &mut item.delete),
        ("patch", &mut item.patch),
        ("head", &mut item.head),
        ("options", &mut item.options),
        ("trace", &mut item.trace),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.as_mut().map(|op| (method, op)))
}

/// What the handlers' annotations cannot say once for all, added to the document as
/// JSON: the headers every response may carry, the errors any operation may answer,
/// and the two bodies of `POST /keys`.
mod for_generators {
    use serde_json::{Map, Value, json};

    /// The error statuses every operation may answer, whatever its own are.
    const EVERY_OPERATION: [(&str, &str); 3] =
        [("405", "MethodNotAllowed"), ("500", "InternalError"), ("503", "Unavailable")];

    pub fn complete(document: &mut Value) {
        add_components(document);
        add_webhooks(document);
        open_error_codes(document);
        absent_is_not_null(document);
        let Some(paths) = document["paths"].as_object_mut() else { return };
        for item in paths.values_mut() {
            let Some(item) = item.as_object_mut() else { continue };
            for (method, operation) in item.iter_mut() {
                let Some(operation) = operation.as_object_mut() else { continue };
                if let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) {
                    complete_responses(responses);
                    if method != "get" {
                        responses
                            .entry("507")
                            .or_insert_with(|| json!({"$ref": "#/components/responses/InsufficientStorage"}));
                    }
                }
                for parameter in operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
                    never_null(parameter);
                }
                if operation.get("operationId") == Some(&json!("createKey")) {
                    operation.insert("requestBody".into(), sign_up_or_new_key());
                }
                if operation.get("operationId") == Some(&json!("setPetPhoto")) {
                    operation.insert("requestBody".into(), photo_body());
                }
                if operation.get("operationId") == Some(&json!("streamEvents")) {
                    // An answer that does not end: a generated call that reads the whole
                    // body would wait for ever. Read it with an SSE client (docs/api.md).
                    operation.insert("x-streaming".into(), json!(true));
                }
            }
        }
    }

    fn complete_responses(responses: &mut Map<String, Value>) {
        for (status, name) in EVERY_OPERATION {
            responses.entry(status).or_insert_with(|| json!({"$ref": format!("#/components/responses/{name}")}));
        }
        for (status, response) in responses.iter_mut() {
            let Some(response) = response.as_object_mut().filter(|r| !r.contains_key("$ref")) else { continue };
            let headers = response.entry("headers").or_insert_with(|| json!({}));
            let Some(headers) = headers.as_object_mut() else { continue };
            rate_limit_headers(headers);
            match status.as_str() {
                "429" => {
                    headers.insert("Retry-After".into(), header_ref("Retry-After"));
                }
                "401" => {
                    headers.insert("WWW-Authenticate".into(), header_ref("WWW-Authenticate"));
                }
                _ => {}
            }
        }
    }

    /// A parameter is sent or not; it is never `null` (utoipa types an optional one as
    /// `["string", "null"]`).
    fn never_null(parameter: &mut Value) {
        let Some(schema_type) = parameter.get_mut("schema").and_then(|schema| schema.get_mut("type")) else { return };
        if let Some(types) = schema_type.as_array() {
            let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            *schema_type = if types.len() == 1 { types[0].clone() } else { Value::Array(types) };
        }
    }

    fn rate_limit_headers(headers: &mut Map<String, Value>) {
        for name in ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] {
            headers.insert(name.into(), header_ref(name));
        }
    }

    fn header_ref(name: &str) -> Value {
        json!({"$ref": format!("#/components/headers/{name}")})
    }

    fn error_response(description: &str) -> Value {
        let mut headers = Map::new();
        rate_limit_headers(&mut headers);
        json!({
            "description": description,
            "headers": headers,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        })
    }

    /// One example per resource a client reads or sends most.
    fn examples() -> [(&'static str, Value); 7] {
        [
            (
                "Pet",
                json!({"id": 10, "name": "Rex", "categoryId": 1, "status": "available",
                       "description": "A calm beagle who loves long walks.", "price": 12_900,
                       "photoUrls": ["/media/pets/10/3f2a9c41d07e5b68-320.webp", "/media/pets/10/3f2a9c41d07e5b68-640.webp",
                                     "/media/pets/10/3f2a9c41d07e5b68-1280.webp"]}),
            ),
            ("NewPet", json!({"name": "Rex", "categoryId": 1, "price": 12_900})),
            ("Category", json!({"id": 1, "name": "Dogs", "description": "Loyal friends"})),
            ("InventoryItem", json!({"petId": 10, "quantity": 3, "status": "available"})),
            ("NewOrder", json!({"petId": 10, "quantity": 1})),
            (
                "Order",
                json!({"id": 7, "petId": 10, "quantity": 2, "complete": false, "unitPrice": 12_900, "total": 25_800}),
            ),
            ("Error", json!({"code": "insufficient_stock", "message": "only 2 of pet 10 in stock", "status": 409})),
        ]
    }

    fn add_components(document: &mut Value) {
        for (schema, example) in examples() {
            if let Some(schema) = document["components"]["schemas"][schema].as_object_mut() {
                schema.insert("examples".into(), json!([example]));
            }
        }
        let integer = |description: &str| json!({"description": description, "schema": {"type": "integer"}});
        let headers = json!({
            "X-RateLimit-Limit": integer("Requests the caller may make in the current window (the key's plan, or the address's Free limits without a key)"),
            "X-RateLimit-Remaining": integer("Requests left in the current window"),
            "X-RateLimit-Reset": integer("When the window ends (or the ban, while banned), in Unix seconds"),
            "Retry-After": integer("Seconds to wait before the request can succeed"),
            "WWW-Authenticate": {"description": "`ApiKey`: how to authenticate", "schema": {"type": "string"}},
        });
        let responses = json!({
            "MethodNotAllowed": error_response("The path exists, but not with this method (`method_not_allowed`)"),
            "InternalError": error_response("The server failed; nothing was changed (`internal_error`)"),
            "Unavailable": error_response("The store is busy or unavailable; retry after a moment (`unavailable`)"),
            "InsufficientStorage": error_response("The store's disk is full: nothing was changed; writes work again once there is space (`insufficient_storage`)"),
        });
        // Added to what utoipa wrote, never in its place.
        for (section, added) in [("headers", headers), ("responses", responses)] {
            let section = document["components"]
                .as_object_mut()
                .and_then(|components| components.entry(section).or_insert_with(|| json!({})).as_object_mut());
            if let (Some(section), Value::Object(added)) = (section, added) {
                section.extend(added);
            }
        }
    }

    /// `Error.code` is one of the known `ErrorCode`s or any other string: a later release
    /// may add a code, and a client built on this document must still read the error
    /// (by its `status`) rather than fail on it.
    fn open_error_codes(document: &mut Value) {
        let Some(code) = document["components"]["schemas"]["Error"]["properties"].get_mut("code") else { return };
        *code = json!({
            "description": "What went wrong, for programs: one of `ErrorCode`, or a code a later release added (read such an error by its `status`)",
            "anyOf": [{"$ref": "#/components/schemas/ErrorCode"}, {"type": "string"}],
        });
    }

    /// A property the server leaves out of what it sends is absent, never `null`: in
    /// the schemas of responses (and of webhook events), an optional property loses the
    /// `null` that utoipa gives an `Option`. A property that may be `null` is always sent,
    /// and so listed in `required`. Request schemas keep their `null`s, which mean
    /// "remove" (`NewPet.price`).
    fn absent_is_not_null(document: &mut Value) {
        let sent = sent_schemas(document);
        let Some(schemas) = document["components"]["schemas"].as_object_mut() else { return };
        for (name, schema) in schemas.iter_mut() {
            if !sent.contains(name) {
                continue;
            }
            let required: Vec<Value> = schema["required"].as_array().cloned().unwrap_or_default();
            let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else { continue };
            for (property, definition) in properties.iter_mut() {
                if !required.contains(&json!(property)) {
                    drop_null(definition);
                }
            }
        }
    }

    /// `["string", "null"]` → `"string"`; `oneOf: [{"type": "null"}, X]` → `X`.
    fn drop_null(definition: &mut Value) {
        if let Some(types) = definition.get("type").and_then(Value::as_array) {
            let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            definition["type"] = if types.len() == 1 { types[0].clone() } else { Value::Array(types) };
        }
        for key in ["oneOf", "anyOf"] {
            let Some(choices) = definition.get(key).and_then(Value::as_array) else { continue };
            let choices: Vec<Value> =
                choices.iter().filter(|c| c.get("type") != Some(&json!("null"))).cloned().collect();
            let Some(object) = definition.as_object_mut() else { return };
            object.remove(key);
            match <[Value; 1]>::try_from(choices) {
                Ok([only]) => object.extend(only.as_object().cloned().unwrap_or_default()),
                Err(choices) => {
                    object.insert(key.into(), Value::Array(choices));
                }
            }
        }
    }

    /// The schemas the server sends: those its responses and webhook events name, and
    /// those they name in turn.
    fn sent_schemas(document: &Value) -> std::collections::BTreeSet<String> {
        fn refs(value: &Value, found: &mut Vec<String>) {
            match value {
                Value::Object(object) => {
                    if let Some(name) =
                        object.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
                    {
                        found.push(name.to_owned());
                    }
                    object.values().for_each(|v| refs(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
                _ => {}
            }
        }
        let mut pending = Vec::new();
        for item in document["paths"].as_object().into_iter().flat_map(|paths| paths.values()) {
            for operation in item.as_object().into_iter().flat_map(|item| item.values()) {
                refs(&operation["responses"], &mut pending);
            }
        }
        refs(&document["components"]["responses"], &mut pending);
        refs(&document["webhooks"], &mut pending);
        let mut sent = std::collections::BTreeSet::new();
        while let Some(name) = pending.pop() {
            if sent.insert(name.clone()) {
                refs(&document["components"]["schemas"][&name], &mut pending);
            }
        }
        sent
    }

    /// The events webhooks receive (OpenAPI 3.1 `webhooks`): one entry per type, the
    /// envelope with `data` the resource the REST API shows.
    fn add_webhooks(document: &mut Value) {
        use app::model::EventType;
        let mut webhooks = Map::new();
        for kind in EventType::subscribable().chain(std::iter::once(EventType::Ping)) {
            let (data, what) = match kind {
                EventType::OrderCreated => ("Order", "An order was placed"),
                EventType::OrderCompleted => ("Order", "An order was completed (fulfilled)"),
                EventType::OrderCancelled => ("Order", "An order was cancelled (`data`: the order as it was)"),
                EventType::PetCreated => ("Pet", "A pet was added to the catalog"),
                EventType::PetUpdated => ("Pet", "A pet was changed (its content, category, photo)"),
                EventType::PetDeleted => ("Pet", "A pet was deleted (`data`: the pet as it was)"),
                EventType::PetStatusChanged => ("Pet", "A pet's status changed (an order, its stock, staff)"),
                EventType::InventoryUpdated => ("InventoryItem", "A pet's stock or status changed"),
                EventType::InventoryOutOfStock => ("InventoryItem", "A pet's last unit went"),
                EventType::KeyRevoked => ("ApiKey", "An API key was revoked"),
                EventType::Ping => ("Object", "The test call of `POST /webhooks/{webhookId}/test`"),
            };
            let data_schema = match data {
                "Object" => json!({"type": "object"}),
                name => json!({"$ref": format!("#/components/schemas/{name}")}),
            };
            let name = kind.as_str();
            let operation_id = format!(
                "on{}",
                name.split(['.', '_'])
                    .map(|part| {
                        let mut chars = part.chars();
                        chars
                            .next()
                            .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                            .unwrap_or_default()
                    })
                    .collect::<String>()
            );
            webhooks.insert(
                name.to_owned(),
                json!({"post": {
                    "tags": ["Store"],
                    "operationId": operation_id,
                    "summary": format!("{name}: {}", what.split(" (").next().unwrap_or(what)),
                    "description": format!(
                        "{what}. Sent to the endpoints that take `{name}` as a POST of the event's envelope, \
                         signed per the Standard Webhooks specification: `webhook-id` (the event's id, the same on \
                         every retry), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` and the \
                         base64 HMAC-SHA256, by the endpoint's secret, of `<id>.<timestamp>.<body>`; two, \
                         space-separated, during a secret's rotation). Any 2xx answer within 10 s acknowledges it; \
                         anything else is retried for a day."
                    ),
                    "parameters": [
                        {"name": "webhook-id", "in": "header", "required": true, "schema": {"type": "string"}},
                        {"name": "webhook-timestamp", "in": "header", "required": true, "schema": {"type": "integer"}},
                        {"name": "webhook-signature", "in": "header", "required": true, "schema": {"type": "string"}},
                    ],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {
                        "type": "object",
                        "required": ["id", "type", "createdAt", "data"],
                        "properties": {
                            "id": {"type": "string", "pattern": "^evt_[0-9a-f]{24}$"},
                            "type": {"type": "string", "const": name},
                            "createdAt": {"type": "string", "format": "date-time"},
                            "data": data_schema,
                        },
                    }}}},
                    "responses": {"200": {"description": "Received (any 2xx will do)"}},
                    "security": [],
                }}),
            );
        }
        document["webhooks"] = Value::Object(webhooks);
    }

    /// A photo upload's body: the image's bytes, as one of three types, or as bytes
    /// (`application/octet-stream`, what generated clients send a file as), known by
    /// their signature.
    fn photo_body() -> Value {
        let image = |media_type: &str| json!({"schema": {"type": "string", "format": "binary", "contentMediaType": media_type}});
        json!({
            "description": "The image itself (not a form), at most 5 MiB: JPEG, PNG or WebP",
            "required": true,
            "content": {
                "image/jpeg": image("image/jpeg"),
                "image/png": image("image/png"),
                "image/webp": image("image/webp"),
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            },
        })
    }

    /// An admin sends `NewApiKey`; anyone else `SignUp`. Described as required, so that
    /// generated clients send `{}` for an anonymous sign-up (the server also takes no
    /// body at all, as `curl -X POST` sends).
    fn sign_up_or_new_key() -> Value {
        json!({
            "description": "Without a key, `SignUp` (`{}` will do; so does no body at all); with an admin key, `NewApiKey`",
            "required": true,
            "content": {"application/json": {"schema": {"oneOf": [
                {"$ref": "#/components/schemas/SignUp"},
                {"$ref": "#/components/schemas/NewApiKey"},
            ]}}},
        })
    }
}
