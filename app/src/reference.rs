//! The API reference the `/docs` page shows, drawn from the live OpenAPI document
//! (the one `GET /api/v1/openapi.json` serves) and from the API guide (`docs/api.md`).
//!
//! The server reads the document once at start-up into these plain types, so the
//! browser receives only what the page shows and needs no OpenAPI code of its own.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ApiReference {
    pub title: String,
    pub version: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    /// The API guide (authentication, limits, errors, versioning: `docs/api.md`) as HTML.
    pub guide_html: String,
    /// The guide's sections, as (anchor id, title), for the page's contents.
    pub guide_sections: Vec<(String, String)>,
    pub groups: Vec<OperationGroup>,
    pub schemas: Vec<SchemaDoc>,
}

/// The operations of one tag, by resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperationGroup {
    pub tag: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    pub resources: Vec<Resource>,
}

impl OperationGroup {
    pub fn operations(&self) -> impl Iterator<Item = &OperationDoc> {
        self.resources.iter().flat_map(|resource| &resource.operations)
    }
}

/// The operations on one resource (`/pets` and `/pets/{petId}/…`: "Pets").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    pub name: String,
    pub operations: Vec<OperationDoc>,
}

/// The error statuses any operation may answer (a bad body, a missing or refused key,
/// the rate limits, a busy or full store): the guide's "Errors" describes them once,
/// and each operation only links there.
pub const GENERAL_STATUSES: [&str; 11] = ["400", "401", "403", "405", "408", "413", "415", "429", "500", "503", "507"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperationDoc {
    pub id: String,
    /// Upper case: `GET`, `POST`, …
    pub method: String,
    /// Under the server URL (`/api/v1`), e.g. `/pets/{petId}`.
    pub path: String,
    pub summary: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    /// `x-stability`: `stable`, `beta`, …
    pub stability: String,
    /// Set when the operation is deprecated: its sunset date and successor.
    pub deprecation: Option<Deprecation>,
    /// False where the document says `x-hideTryItPanel: true`.
    pub try_it: bool,
    /// Whether a key is required (`optional` for sign-up, `none` for the document).
    pub key: KeyNeed,
    pub params: Vec<ParamDoc>,
    pub body: Option<BodyDoc>,
    /// Its own answers: success and the errors of its rules, not [`GENERAL_STATUSES`].
    pub responses: Vec<ResponseDoc>,
    /// Which of [`GENERAL_STATUSES`] it may answer.
    pub general_errors: Vec<String>,
}

impl OperationDoc {
    /// What its try-it panel needs, and nothing else: an island's props travel in the
    /// page, once per operation.
    pub fn request(&self) -> TryRequest {
        TryRequest {
            id: self.id.clone(),
            method: self.method.clone(),
            path: self.path.clone(),
            key: self.key,
            params: self
                .params
                .iter()
                .filter(|p| p.location == "path" || p.location == "query")
                .map(|p| TryParam {
                    name: p.name.clone(),
                    location: p.location.clone(),
                    required: p.required,
                    values: p.values.clone(),
                })
                .collect(),
            body_example: self.body.as_ref().map(|body| body.example.clone()),
        }
    }
}

/// An operation as its try-it panel sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TryRequest {
    pub id: String,
    pub method: String,
    pub path: String,
    pub key: KeyNeed,
    /// The path and query parameters.
    pub params: Vec<TryParam>,
    /// A JSON body to start from, when the operation takes one.
    pub body_example: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TryParam {
    pub name: String,
    /// `path` or `query`.
    pub location: String,
    pub required: bool,
    /// A few values to pick from (an enum, a boolean), else empty.
    pub values: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum KeyNeed {
    Required,
    Optional,
    None,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deprecation {
    /// `x-sunset`: the date it stops answering (410 from then on).
    pub sunset: Option<String>,
    /// `x-successor`: what to call instead.
    pub successor: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamDoc {
    pub name: String,
    /// `path` or `query` (or `header`).
    pub location: String,
    pub required: bool,
    pub type_label: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    /// The values it takes, when they are few (an enum, a boolean): the try-it panel
    /// offers them in a picker.
    pub values: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BodyDoc {
    /// The schema's name (a link to it below), or its type.
    pub type_label: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    /// A JSON body the schema accepts, pretty-printed, to start the try-it panel from.
    pub example: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseDoc {
    pub status: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    pub type_label: Option<String>,
    /// The Error `code`s this status comes with (named in the description).
    pub codes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaDoc {
    pub name: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    /// For a string enum: its values.
    pub values: Vec<String>,
    pub fields: Vec<FieldDoc>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldDoc {
    pub name: String,
    pub type_label: String,
    pub required: bool,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    /// `minimum 1`, `max length 100`, … joined with commas.
    pub constraints: String,
}

/// The part of `docs/api.md` between these markers is the API guide.
#[cfg(feature = "ssr")]
const GUIDE_BEGIN: &str = "<!-- api-guide:begin";
#[cfg(feature = "ssr")]
const GUIDE_END: &str = "<!-- api-guide:end -->";

#[cfg(feature = "ssr")]
mod build {
    use serde_json::Value;

    use super::*;

    const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

    fn text(value: &Value, key: &str) -> String {
        value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
    }

    /// A description, which OpenAPI says is Markdown, as HTML for the page (shown with
    /// `inner_html`). Raw HTML in it is shown as text; a lone paragraph loses its `<p>`,
    /// so that the result also fits in a table cell or a sentence.
    fn markdown(value: &Value, key: &str) -> String {
        use pulldown_cmark::{Event, Tag};
        let safe_url = |url: &str| {
            ["https://", "http://", "mailto:", "/", "#"].iter().any(|start| url.starts_with(start))
                && !url.starts_with("//")
        };
        let source = text(value, key);
        let events = pulldown_cmark::Parser::new(&source).map(|event| match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            // Only web, mail and in-page links (never `javascript:` and the like).
            Event::Start(Tag::Link { link_type, dest_url, title, id }) if !safe_url(&dest_url) => {
                Event::Start(Tag::Link { link_type, dest_url: "#".into(), title, id })
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) if !safe_url(&dest_url) => {
                Event::Start(Tag::Image { link_type, dest_url: "#".into(), title, id })
            }
            other => other,
        });
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, events);
        let html = html.trim();
        match html.strip_prefix("<p>").and_then(|rest| rest.strip_suffix("</p>")) {
            Some(inner) if !inner.contains("<p>") => inner.to_owned(),
            _ => html.to_owned(),
        }
    }

    impl ApiReference {
        /// Reads an OpenAPI 3.1 document (as this server writes it).
        pub fn build(document: &Value) -> ApiReference {
            let schemas = document.pointer("/components/schemas").cloned().unwrap_or_default();
            let mut groups: Vec<OperationGroup> = document
                .get("tags")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|tag| OperationGroup {
                    tag: text(tag, "name"),
                    description: markdown(tag, "description"),
                    resources: Vec::new(),
                })
                .collect();
            let paths = document.get("paths").and_then(Value::as_object).into_iter().flatten();
            for (path, item) in paths {
                for method in METHODS {
                    let Some(operation) = item.get(method) else { continue };
                    let tag = operation.pointer("/tags/0").and_then(Value::as_str).unwrap_or("Other");
                    let group = match groups.iter().position(|g| g.tag == tag) {
                        Some(i) => &mut groups[i],
                        None => {
                            groups.push(OperationGroup {
                                tag: tag.to_owned(),
                                description: String::new(),
                                resources: Vec::new(),
                            });
                            groups.last_mut().expect("just pushed")
                        }
                    };
                    let name = resource_name(path);
                    let resource = match group.resources.iter().position(|r| r.name == name) {
                        Some(i) => &mut group.resources[i],
                        None => {
                            group.resources.push(Resource { name, operations: Vec::new() });
                            group.resources.last_mut().expect("just pushed")
                        }
                    };
                    resource.operations.push(operation_doc(method, path, operation, &schemas, document));
                }
            }
            groups.retain(|g| !g.resources.is_empty());
            for group in &mut groups {
                group.resources.sort_by_key(|r| RESOURCE_ORDER.iter().position(|n| *n == r.name).unwrap_or(usize::MAX));
            }
            let info = document.get("info").cloned().unwrap_or_default();
            let (guide_html, guide_sections) = guide_html(include_str!("../../docs/api.md"));
            ApiReference {
                title: text(&info, "title"),
                version: text(&info, "version"),
                description: markdown(&info, "description"),
                guide_html,
                guide_sections,
                groups,
                schemas: schemas
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, schema)| schema_doc(name, schema))
                    .collect(),
            }
        }
    }

    /// The resources in the order a reader meets them (others after, as found).
    const RESOURCE_ORDER: [&str; 7] = ["Pets", "Categories", "Orders", "Inventory", "Keys", "Events", "Webhooks"];

    /// The resource a path is about: its first segment (past `/store`), capitalised
    /// (`/store/orders/{orderId}` → "Orders"); a file keeps its name (`openapi.json`).
    pub(super) fn resource_name(path: &str) -> String {
        let mut segments = path.split('/').filter(|s| !s.is_empty());
        let first = match segments.next() {
            Some("store") => segments.next().unwrap_or("store"),
            Some(first) => first,
            None => return "Other".into(),
        };
        if first.contains('.') {
            return first.to_owned();
        }
        let mut chars = first.chars();
        chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
    }

    fn operation_doc(method: &str, path: &str, operation: &Value, schemas: &Value, document: &Value) -> OperationDoc {
        let security = operation.get("security").and_then(Value::as_array);
        let key = match security {
            // None stated, or stated as none (`security: []`).
            None => KeyNeed::None,
            Some(list) if list.is_empty() => KeyNeed::None,
            // An empty requirement `{}` among them: a key is optional.
            Some(list) if list.iter().any(|r| r.as_object().is_some_and(|o| o.is_empty())) => KeyNeed::Optional,
            Some(_) => KeyNeed::Required,
        };
        let deprecated = operation.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
        let params = operation
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|param| ParamDoc {
                name: text(param, "name"),
                location: text(param, "in"),
                required: param.get("required").and_then(Value::as_bool).unwrap_or(false),
                type_label: param.get("schema").map(type_label).unwrap_or_default(),
                description: markdown(param, "description"),
                values: param.get("schema").map(|schema| choices(schema, schemas)).unwrap_or_default(),
            })
            .collect();
        let body = operation.get("requestBody").map(|body| {
            let schema = body.pointer("/content/application~1json/schema").cloned().unwrap_or_default();
            let example = example(&schema, schemas, 0);
            // A body that is not JSON (a photo) is named by its media types.
            let media_types: Vec<&str> =
                body.get("content").and_then(Value::as_object).into_iter().flatten().map(|(t, _)| t.as_str()).collect();
            let type_label = match schema.is_null() {
                true => media_types.join(" or "),
                false => type_label(&schema),
            };
            BodyDoc {
                type_label,
                description: markdown(body, "description"),
                example: serde_json::to_string_pretty(&example).unwrap_or_default(),
            }
        });
        let mut responses: Vec<ResponseDoc> = operation
            .get("responses")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(status, response)| {
                // A response shared by every operation is a `$ref` to the components.
                let shared = response
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|to| to.strip_prefix('#'))
                    .and_then(|pointer| document.pointer(pointer));
                let response = shared.unwrap_or(response);
                ResponseDoc {
                    status: status.clone(),
                    codes: error_codes(&text(response, "description")),
                    type_label: response.pointer("/content/application~1json/schema").map(type_label),
                    description: markdown(response, "description"),
                }
            })
            .collect();
        responses.sort_by(|a, b| a.status.cmp(&b.status));
        let (general, responses): (Vec<ResponseDoc>, Vec<ResponseDoc>) =
            responses.into_iter().partition(|r| GENERAL_STATUSES.contains(&r.status.as_str()));
        OperationDoc {
            id: text(operation, "operationId"),
            method: method.to_uppercase(),
            path: path.to_owned(),
            summary: text(operation, "summary"),
            description: markdown(operation, "description"),
            stability: operation.get("x-stability").and_then(Value::as_str).unwrap_or("stable").to_owned(),
            deprecation: deprecated.then(|| Deprecation {
                sunset: operation.get("x-sunset").and_then(Value::as_str).map(str::to_owned),
                successor: operation.get("x-successor").and_then(Value::as_str).map(str::to_owned),
            }),
            try_it: operation.get("x-hideTryItPanel").and_then(Value::as_bool) != Some(true),
            key,
            params,
            body,
            responses,
            general_errors: general.into_iter().map(|r| r.status).collect(),
        }
    }

    /// The Error codes a response description names in backquotes (`not_found`, …).
    fn error_codes(description: &str) -> Vec<String> {
        let mut codes: Vec<String> = description
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|word| serde_json::from_value::<crate::error::ErrorCode>(Value::String((*word).to_owned())).is_ok())
            .map(str::to_owned)
            .collect();
        codes.dedup();
        codes
    }

    fn ref_name(schema: &Value) -> Option<&str> {
        schema.get("$ref").and_then(Value::as_str).and_then(|r| r.rsplit('/').next())
    }

    /// The values a parameter's schema allows, when it names them: an enum (its own, or
    /// the schema it refers to) or a boolean.
    fn choices(schema: &Value, schemas: &Value) -> Vec<String> {
        // `Option<PetStatus>` reads `oneOf: [null, $ref]`: the choices of its variants.
        for union in ["oneOf", "anyOf"] {
            if let Some(variants) = schema.get(union).and_then(Value::as_array) {
                return variants.iter().flat_map(|variant| choices(variant, schemas)).collect();
            }
        }
        let resolved = ref_name(schema).and_then(|name| schemas.get(name)).unwrap_or(schema);
        if let Some(values) = resolved.get("enum").and_then(Value::as_array) {
            return values.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        }
        let boolean = match resolved.get("type") {
            Some(Value::String(t)) => t == "boolean",
            Some(Value::Array(list)) => list.iter().any(|t| t == "boolean"),
            _ => false,
        };
        if boolean { vec!["true".into(), "false".into()] } else { Vec::new() }
    }

    /// A short human type: `Pet`, `array of Pet`, `string (date-time)`, `integer | null`.
    pub(super) fn type_label(schema: &Value) -> String {
        if let Some(name) = ref_name(schema) {
            return name.to_owned();
        }
        for union in ["oneOf", "anyOf", "allOf"] {
            if let Some(list) = schema.get(union).and_then(Value::as_array) {
                return list.iter().map(type_label).collect::<Vec<_>>().join(" | ");
            }
        }
        let types: Vec<String> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => vec![if schema.get("properties").is_some() { "object".into() } else { "any".into() }],
        };
        types
            .into_iter()
            .map(|t| match t.as_str() {
                "array" => format!("array of {}", schema.get("items").map(type_label).unwrap_or_default()),
                _ => match schema.get("format").and_then(Value::as_str) {
                    Some(format) => format!("{t} ({format})"),
                    None => t,
                },
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// A value the schema accepts: its example, else the smallest plausible one, with
    /// an object's required fields only.
    fn example(schema: &Value, schemas: &Value, depth: usize) -> Value {
        if depth > 6 {
            return Value::Null;
        }
        if let Some(example) = schema.get("example").or_else(|| schema.pointer("/examples/0")) {
            return example.clone();
        }
        if let Some(target) = ref_name(schema).and_then(|name| schemas.get(name)) {
            return example(target, schemas, depth + 1);
        }
        if let Some(first) = schema.pointer("/oneOf/0").or_else(|| schema.pointer("/anyOf/0")) {
            return example(first, schemas, depth + 1);
        }
        if let Some(value) = schema.pointer("/enum/0").or_else(|| schema.get("const")) {
            return value.clone();
        }
        let kind = match schema.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null"),
            _ => "object",
        };
        match kind {
            "object" => {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let mut object = serde_json::Map::new();
                for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    if required.contains(&name.as_str()) {
                        object.insert(name.clone(), example(property, schemas, depth + 1));
                    }
                }
                Value::Object(object)
            }
            "array" => Value::Array(Vec::new()),
            "integer" | "number" => schema.get("minimum").cloned().unwrap_or(Value::from(1)),
            "boolean" => Value::Bool(true),
            "string" => Value::String(match schema.get("format").and_then(Value::as_str) {
                Some("date-time") => "2027-01-01T12:00:00Z".into(),
                _ => "string".into(),
            }),
            _ => Value::Null,
        }
    }

    fn schema_doc(name: &str, schema: &Value) -> SchemaDoc {
        let required: Vec<&str> =
            schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let values = schema
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let fields = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(field, property)| FieldDoc {
                name: field.clone(),
                type_label: type_label(property),
                required: required.contains(&field.as_str()),
                description: markdown(property, "description"),
                constraints: constraints(property),
            })
            .collect();
        SchemaDoc { name: name.to_owned(), description: markdown(schema, "description"), values, fields }
    }

    fn constraints(property: &Value) -> String {
        let mut said = Vec::new();
        for (key, label) in [
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("minLength", "min length"),
            ("maxLength", "max length"),
            ("pattern", "pattern"),
            ("const", "always"),
        ] {
            if let Some(value) = property.get(key) {
                said.push(format!("{label} {value}"));
            }
        }
        if let Some(values) = property.get("enum").and_then(Value::as_array) {
            let names: Vec<String> = values.iter().map(Value::to_string).collect();
            said.push(format!("one of {}", names.join(", ")));
        }
        said.join(", ")
    }

    /// The API guide, rendered to HTML (our own text, so it is trusted), with its
    /// sections as (anchor id, title). Its sections are `##` in `docs/api.md`, under its
    /// `#` title; on the page they sit right under the page's `<h1>`, as they are. Each
    /// heading gets the id GitHub gives it (`## Rate limits` → `rate-limits`), so that
    /// `/docs#errors` and the file's own links agree.
    pub(super) fn guide_html(guide: &str) -> (String, Vec<(String, String)>) {
        use pulldown_cmark::{Event, HeadingLevel, Tag, TagEnd};
        let Some(start) = guide.find(GUIDE_BEGIN) else { return Default::default() };
        let begin = guide[start..].find('\n').map_or(guide.len(), |n| start + n + 1);
        let end = guide[begin..].find(GUIDE_END).map_or(guide.len(), |n| begin + n);
        let mut events: Vec<Event<'_>> =
            pulldown_cmark::Parser::new_ext(&guide[begin..end], pulldown_cmark::Options::ENABLE_TABLES).collect();
        let mut sections = Vec::new();
        for i in 0..events.len() {
            let Event::Start(Tag::Heading { level, .. }) = &events[i] else { continue };
            let level = *level;
            let title: String = events[i + 1..]
                .iter()
                .take_while(|e| !matches!(e, Event::End(TagEnd::Heading(_))))
                .filter_map(|e| match e {
                    Event::Text(t) | Event::Code(t) => Some(t.as_ref()),
                    _ => None,
                })
                .collect();
            let id = slug(&title);
            if level == HeadingLevel::H2 {
                sections.push((id.clone(), title));
            }
            if let Event::Start(Tag::Heading { id: heading_id, .. }) = &mut events[i] {
                *heading_id = Some(id.into());
            }
        }
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, events.into_iter());
        (html, sections)
    }

    /// A heading's anchor as GitHub makes it: lower case, spaces to `-`, other
    /// punctuation dropped.
    fn slug(title: &str) -> String {
        title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect()
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    #[test]
    fn the_guide_is_the_part_of_docs_api_between_the_markers() {
        let (html, sections) = build::guide_html(include_str!("../../docs/api.md"));
        assert!(html.contains("<h2 id=\"your-first-authenticated-call\">Your first authenticated call</h2>"), "{html}");
        assert!(html.contains("<h2 id=\"versioning\">Versioning</h2>"));
        assert!(html.contains("<table>"), "the plan table is a table");
        assert!(!html.contains("Pet content and photos</h2>"), "starts at the begin marker");
        assert!(!html.contains("How the server keeps"), "ends at the end marker");
        assert!(!html.contains("## "), "no Markdown left over");
        let ids: Vec<&str> = sections.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "your-first-authenticated-call",
                "rate-limits",
                "rules",
                "paging",
                "errors",
                "what-the-document-promises-generators",
                "versioning"
            ]
        );
        assert_eq!(sections[1].1, "Rate limits");
    }

    #[test]
    fn a_path_names_its_resource() {
        for (path, name) in [
            ("/pets", "Pets"),
            ("/pets/{petId}/photo", "Pets"),
            ("/store/orders/{orderId}", "Orders"),
            ("/store/inventory", "Inventory"),
            ("/webhooks/{webhookId}/deliveries/{deliveryId}/retry", "Webhooks"),
            ("/openapi.json", "openapi.json"),
        ] {
            assert_eq!(build::resource_name(path), name, "{path}");
        }
    }

    #[test]
    fn reads_operations_schemas_and_examples() {
        let document = serde_json::json!({
            "info": {"title": "T", "version": "1.0.0"},
            "tags": [{"name": "Pets", "description": "d"}],
            "paths": {"/pets/{petId}": {"get": {
                "tags": ["Pets"], "operationId": "getPet", "summary": "Get",
                "deprecated": true, "x-sunset": "2027-06-30", "x-successor": "GET /pets?ids={petId}",
                "x-hideTryItPanel": true,
                "security": [{"apiKey": []}],
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "integer", "format": "int64"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}},
                "responses": {
                    "404": {"description": "No such pet (`not_found`), see `petId`"},
                    "429": {"description": "Over the limit (`rate_limited`)"},
                    "200": {"description": "The pet", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                    "401": {"description": "No key (`missing_api_key`)"}
                }
            }}},
            "components": {"schemas": {"NewPet": {
                "type": "object", "required": ["name", "categoryId"],
                "properties": {
                    "name": {"type": "string", "example": "Rex", "maxLength": 100},
                    "categoryId": {"type": "integer", "minimum": 1},
                    "status": {"type": ["string", "null"]}
                }
            }}}
        });
        let reference = ApiReference::build(&document);
        assert_eq!(reference.groups[0].resources[0].name, "Pets");
        let operation = &reference.groups[0].resources[0].operations[0];
        assert_eq!((operation.method.as_str(), operation.path.as_str()), ("GET", "/pets/{petId}"));
        assert!(!operation.try_it);
        assert_eq!(operation.key, KeyNeed::Required);
        let deprecation = operation.deprecation.as_ref().expect("deprecated");
        assert_eq!(deprecation.sunset.as_deref(), Some("2027-06-30"));
        assert_eq!(operation.params[0].type_label, "integer (int64)");
        assert_eq!(operation.responses[0].status, "200", "sorted by status");
        assert_eq!(operation.responses[0].type_label.as_deref(), Some("Pet"));
        assert_eq!(operation.responses[1].codes, ["not_found"], "only real Error codes");
        assert_eq!(operation.responses.len(), 2, "the general errors are not repeated");
        assert_eq!(operation.general_errors, ["401", "429"], "but named");
        let request = operation.request();
        assert_eq!(request.params[0].name, "petId");
        assert!(request.body_example.as_deref().is_some_and(|body| body.contains("Rex")));
        let body = operation.body.as_ref().expect("body");
        let example: serde_json::Value = serde_json::from_str(&body.example).unwrap();
        assert_eq!(example, serde_json::json!({"name": "Rex", "categoryId": 1}), "required fields only");
        let fields = &reference.schemas[0].fields;
        assert!(fields.iter().any(|f| f.name == "name" && f.required && f.constraints == "max length 100"));
        assert!(fields.iter().any(|f| f.name == "status" && f.type_label == "string | null"));
    }

    #[test]
    fn a_body_that_is_not_json_is_named_by_its_media_types() {
        let image = serde_json::json!({"schema": {"type": "string", "format": "binary"}});
        let document = serde_json::json!({
            "info": {"title": "T", "version": "1.0.0"},
            "paths": {"/pets/{petId}/photo": {"put": {
                "operationId": "setPetPhoto", "security": [],
                "requestBody": {"content": {"image/jpeg": image, "image/png": image}},
                "responses": {"200": {"description": "The pet"}}
            }}}
        });
        let reference = ApiReference::build(&document);
        let body = reference.groups[0].resources[0].operations[0].body.as_ref().expect("body");
        assert_eq!(body.type_label, "image/jpeg or image/png");
    }

    #[test]
    fn descriptions_are_markdown_shown_as_html_and_shared_responses_are_followed() {
        let document = serde_json::json!({
            "info": {"title": "T", "version": "1", "description": "Send `X-API-Key`.\n\nA <b>second</b> [paragraph](javascript:alert(1))."},
            "paths": {"/openapi.json": {"get": {
                "operationId": "doc", "description": "The *whole* document", "security": [],
                "responses": {"410": {"$ref": "#/components/responses/Gone"}}
            }}},
            "components": {"responses": {"Gone": {
                "description": "Gone (`sunset`)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            }}}
        });
        let reference = ApiReference::build(&document);
        assert_eq!(
            reference.description,
            "<p>Send <code>X-API-Key</code>.</p>\n<p>A &lt;b&gt;second&lt;/b&gt; <a href=\"#\">paragraph</a>.</p>",
            "Markdown, and raw HTML shown as text"
        );
        let operation = &reference.groups[0].resources[0].operations[0];
        assert_eq!(operation.description, "The <em>whole</em> document", "one paragraph fits a sentence");
        assert_eq!(operation.key, KeyNeed::None, "security: [] needs no key");
        let gone = &operation.responses[0];
        assert_eq!(
            (gone.description.as_str(), gone.codes.as_slice()),
            ("Gone (<code>sunset</code>)", &["sunset".to_owned()][..])
        );
        assert_eq!(gone.type_label.as_deref(), Some("Error"));
    }
}
