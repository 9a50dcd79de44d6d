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
    pub groups: Vec<OperationGroup>,
    pub schemas: Vec<SchemaDoc>,
}

/// The operations of one tag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperationGroup {
    pub tag: String,
    /// HTML, from the document's Markdown (trusted: the server's own document).
    pub description: String,
    pub operations: Vec<OperationDoc>,
}

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
    pub responses: Vec<ResponseDoc>,
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
                    operations: Vec::new(),
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
                                operations: Vec::new(),
                            });
                            groups.last_mut().expect("just pushed")
                        }
                    };
                    group.operations.push(operation_doc(method, path, operation, &schemas, document));
                }
            }
            groups.retain(|g| !g.operations.is_empty());
            let info = document.get("info").cloned().unwrap_or_default();
            ApiReference {
                title: text(&info, "title"),
                version: text(&info, "version"),
                description: markdown(&info, "description"),
                guide_html: guide_html(include_str!("../../docs/api.md")),
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

    /// The API guide, rendered to HTML (our own text, so it is trusted). Its sections
    /// are `##` in `docs/api.md`, under its `#` title; on the page they sit right under
    /// the page's `<h1>`, as they are.
    pub(super) fn guide_html(guide: &str) -> String {
        let Some(start) = guide.find(GUIDE_BEGIN) else { return String::new() };
        let begin = guide[start..].find('\n').map_or(guide.len(), |n| start + n + 1);
        let end = guide[begin..].find(GUIDE_END).map_or(guide.len(), |n| begin + n);
        let events = pulldown_cmark::Parser::new_ext(&guide[begin..end], pulldown_cmark::Options::ENABLE_TABLES);
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, events);
        html
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    #[test]
    fn the_guide_is_the_part_of_docs_api_between_the_markers() {
        let html = build::guide_html(include_str!("../../docs/api.md"));
        assert!(html.contains("<h2>Your first authenticated call</h2>"), "{html}");
        assert!(html.contains("<h2>Versioning</h2>"));
        assert!(html.contains("<table>"), "the plan table is a table");
        assert!(!html.contains("<h2>Pet content and photos</h2>"), "starts at the begin marker");
        assert!(!html.contains("## "), "no Markdown left over");
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
                    "200": {"description": "The pet", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
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
        let operation = &reference.groups[0].operations[0];
        assert_eq!((operation.method.as_str(), operation.path.as_str()), ("GET", "/pets/{petId}"));
        assert!(!operation.try_it);
        assert_eq!(operation.key, KeyNeed::Required);
        let deprecation = operation.deprecation.as_ref().expect("deprecated");
        assert_eq!(deprecation.sunset.as_deref(), Some("2027-06-30"));
        assert_eq!(operation.params[0].type_label, "integer (int64)");
        assert_eq!(operation.responses[0].status, "200", "sorted by status");
        assert_eq!(operation.responses[0].type_label.as_deref(), Some("Pet"));
        assert_eq!(operation.responses[1].codes, ["not_found"], "only real Error codes");
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
        let body = reference.groups[0].operations[0].body.as_ref().expect("body");
        assert_eq!(body.type_label, "image/jpeg or image/png");
    }

    #[test]
    fn descriptions_are_markdown_shown_as_html_and_shared_responses_are_followed() {
        let document = serde_json::json!({
            "info": {"title": "T", "version": "1", "description": "Send `X-API-Key`.\n\nA <b>second</b> [paragraph](javascript:alert(1))."},
            "paths": {"/openapi.json": {"get": {
                "operationId": "doc", "description": "The *whole* document", "security": [],
                "responses": {"503": {"$ref": "#/components/responses/Unavailable"}}
            }}},
            "components": {"responses": {"Unavailable": {
                "description": "Busy (`unavailable`)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            }}}
        });
        let reference = ApiReference::build(&document);
        assert_eq!(
            reference.description,
            "<p>Send <code>X-API-Key</code>.</p>\n<p>A &lt;b&gt;second&lt;/b&gt; <a href=\"#\">paragraph</a>.</p>",
            "Markdown, and raw HTML shown as text"
        );
        let operation = &reference.groups[0].operations[0];
        assert_eq!(operation.description, "The <em>whole</em> document", "one paragraph fits a sentence");
        assert_eq!(operation.key, KeyNeed::None, "security: [] needs no key");
        let busy = &operation.responses[0];
        assert_eq!(
            (busy.description.as_str(), busy.codes.as_slice()),
            ("Busy (<code>unavailable</code>)", &["unavailable".to_owned()][..])
        );
        assert_eq!(busy.type_label.as_deref(), Some("Error"));
    }
}
