//! `/docs`: the API reference, drawn on the server from the live OpenAPI document, so
//! it reads without JavaScript. With it, each operation gets a try-it panel.

mod try_it;

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;

use crate::reference::{ApiReference, KeyNeed, OperationDoc, SchemaDoc};
use crate::server_fns::docs::load_api_reference;
use crate::server_fns::viewer;
use crate::ui::widgets::ErrorNotice;
use try_it::{KeyBar, TryIt};

/// An anchor id for an operation.
fn anchor(operation: &OperationDoc) -> String {
    format!("op-{}", operation.id)
}

#[component]
pub fn DocsPage() -> impl IntoView {
    let reference = data::resource(|| (), |_| load_api_reference());
    let who = data::resource(|| (), |_| viewer());
    let origin = own_origin();
    view! {
        <PageTitle text="API reference"/>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let origin = origin.clone();
                Suspend::new(async move {
                    let signed_in = matches!(who.await, Ok(Some(_)));
                    match reference.await {
                        Ok(reference) => view! { <Reference reference signed_in origin/> }.into_any(),
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// This store's own address (`Services::origin`), for the examples: docs/api.md's say
/// `localhost:3000`.
fn own_origin() -> String {
    #[cfg(feature = "ssr")]
    if let Some(services) = use_context::<crate::services::Services>() {
        return services.origin.to_string();
    }
    "http://localhost:3000".into()
}

/// A path as the contents show it: it may break after each `/`, so that a long one
/// wraps in the narrow column rather than being cut.
fn breakable_path(path: &str) -> impl IntoView + use<> {
    path.split_inclusive('/').map(|part| view! { {part.to_owned()}<wbr/> }).collect_view()
}

#[component]
fn Reference(reference: ApiReference, signed_in: bool, origin: String) -> impl IntoView {
    // The guide's examples, at this store's own address.
    let guide_html = reference
        .guide_html
        .replace("http://localhost:3000", &origin)
        .replace("localhost:3000", origin.trim_start_matches("https://").trim_start_matches("http://"));
    let guide_links = reference
        .guide_sections
        .iter()
        .map(|(id, title)| view! { <li><a href=format!("#{id}")>{title.clone()}</a></li> })
        .collect_view();
    let contents = reference
        .groups
        .iter()
        .map(|group| {
            let resources = group
                .resources
                .iter()
                .map(|resource| {
                    let links = resource
                        .operations
                        .iter()
                        .map(|op| {
                            view! {
                                <li><a href=format!("#{}", anchor(op))>
                                    <span class=format!("method method-{}", op.method.to_ascii_lowercase())>{op.method.clone()}</span>
                                    " "{breakable_path(&op.path)}
                                </a></li>
                            }
                        })
                        .collect_view();
                    view! {
                        <li><a href=format!("#{}", resource_anchor(&group.tag, &resource.name))>{resource.name.clone()}</a>
                            <ul class="toc-operations">{links}</ul></li>
                    }
                })
                .collect_view();
            view! { <li><a href=format!("#tag-{}", group.tag)>{group.tag.clone()}</a><ul>{resources}</ul></li> }
        })
        .collect_view();
    view! {
        <div class="docs">
            <nav class="docs-toc" aria-label="Contents">
                <ul>
                    <li><a href="#guide">"Guide"</a><ul>{guide_links}</ul></li>
                    <li><a href="#try-key">"Your key"</a></li>
                    {contents}
                    <li><a href="#schemas">"Schemas"</a></li>
                </ul>
            </nav>
            <div class="docs-body">
                <h1>{format!("{} {}", reference.title, reference.version)}</h1>
                <div class="markdown" inner_html=reference.description></div>
                <p>"Base URL " <code>"/api/v1"</code> ". The machine-readable document: "
                    <a href="/api/v1/openapi.json">"openapi.json"</a>"."</p>
                <section id="guide" class="guide" aria-label="Guide" inner_html=guide_html></section>
                <section id="try-key" class="try-key" aria-labelledby="try-key-title">
                    <h2 id="try-key-title">"Your key"</h2>
                    <p>"Each operation below has a try-it panel. They all send the key chosen here."</p>
                    <KeyBar signed_in/>
                </section>
                {reference.groups.into_iter().map(|group| {
                    let tag = group.tag.clone();
                    view! {
                        <section class="docs-group" aria-labelledby=format!("tag-{}", group.tag)>
                            <h2 id=format!("tag-{}", group.tag)>{group.tag.clone()}</h2>
                            <div class="markdown" inner_html=group.description></div>
                            {group.resources.into_iter().map(|resource| view! {
                                // No name of its own: the resource is a part of its tag's region.
                                <section class="docs-resource">
                                    <h3 id=resource_anchor(&tag, &resource.name)>{resource.name.clone()}</h3>
                                    {resource.operations.into_iter().map(|operation| view! { <Operation operation signed_in origin=origin.clone()/> }).collect_view()}
                                </section>
                            }).collect_view()}
                        </section>
                    }
                }).collect_view()}
                <section id="schemas" aria-labelledby="schemas-title">
                    <h2 id="schemas-title">"Schemas"</h2>
                    {reference.schemas.into_iter().map(|schema| view! { <Schema schema/> }).collect_view()}
                </section>
            </div>
        </div>
    }
}

/// A resource's anchor (the tag too: a name might come under two tags).
fn resource_anchor(tag: &str, resource: &str) -> String {
    format!("res-{tag}-{}", resource.replace('.', "-"))
}

/// A type, linked to its schema when it names one.
fn type_view(label: String) -> AnyView {
    let plain = label.chars().next().is_some_and(char::is_lowercase) || label.contains(' ');
    if plain {
        view! { <code>{label}</code> }.into_any()
    } else {
        view! { <a href=format!("#schema-{label}")><code>{label.clone()}</code></a> }.into_any()
    }
}

#[component]
fn Operation(operation: OperationDoc, signed_in: bool, origin: String) -> impl IntoView {
    let id = anchor(&operation);
    let method_class = format!("method method-{}", operation.method.to_ascii_lowercase());
    let key_note = match operation.key {
        KeyNeed::Required => "Needs a key.",
        KeyNeed::Optional => "A key is optional.",
        KeyNeed::None => "Needs no key.",
    };
    let stability = operation.stability.clone();
    let params = (!operation.params.is_empty()).then(|| {
        view! {
            <h5>"Parameters"</h5>
            <table class="table compact responsive">
                <thead><tr><th scope="col">"Name"</th><th scope="col">"In"</th><th scope="col">"Type"</th><th scope="col">"Description"</th></tr></thead>
                <tbody>
                    {operation.params.iter().cloned().map(|p| view! {
                        <tr>
                            <td data-label="Name"><code>{p.name}</code>{p.required.then_some(" (required)")}</td>
                            <td data-label="In">{p.location}</td>
                            <td data-label="Type">{type_view(p.type_label)}</td>
                            <td data-label="Description" inner_html=p.description></td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
    });
    let body = operation.body.clone().map(|body| {
        view! {
            <h5>"Request body"</h5>
            <p>{type_view(body.type_label)}" "<span inner_html=body.description></span></p>
        }
    });
    let responses = operation
        .responses
        .iter()
        .cloned()
        .map(|r| {
            view! {
                <tr>
                    <td data-label="Status"><code>{r.status}</code></td>
                    <td data-label="Meaning" inner_html=r.description></td>
                    <td data-label="Body">{r.type_label.map(type_view)}</td>
                    <td data-label="Error codes">{r.codes.into_iter().map(|c| view! { <code class="code">{c}</code>" " }).collect_view()}</td>
                </tr>
            }
        })
        .collect_view();
    let general = (!operation.general_errors.is_empty()).then(|| {
        view! {
            <p class="general-errors">"Also the " <a href="#errors">"general errors"</a> ": "
                {operation.general_errors.join(" · ")}</p>
        }
    });
    let panel = if operation.try_it {
        view! { <TryIt request=operation.request() signed_in origin/> }.into_any()
    } else {
        view! {
            <p class="notice try-it-hidden">"No try-it panel here (the document marks this operation \
                x-hideTryItPanel): call it from your own client with your key."</p>
        }
        .into_any()
    };
    view! {
        <article class="operation" id=id.clone() aria-labelledby=format!("{id}-title")>
            <h4 id=format!("{id}-title")>
                <span class=method_class>{operation.method.clone()}</span>" "
                <code class="path">{format!("/api/v1{}", operation.path)}</code>" "
                <span class="summary">{operation.summary.clone()}</span>
            </h4>
            <p class="badges">
                // A deprecated operation is not also called stable.
                {match operation.deprecation {
                    Some(_) => view! { <span class="badge badge-deprecated">"Deprecated"</span> }.into_any(),
                    None => view! { <span class=format!("badge stability-{stability}")>{stability_label(&stability)}</span> }.into_any(),
                }}
                " "<span class="meta">{key_note}</span>
            </p>
            {operation.deprecation.clone().map(|d| view! {
                <div class="notice notice-warning" role="note">
                    <strong>"Deprecated. "</strong>
                    {d.sunset.map(|s| format!("It stops working on {s} (410 sunset from then on). "))}
                    {d.successor.map(|s| view! { "Use " <code>{s}</code> " instead." })}
                </div>
            })}
            <div class="description markdown" inner_html=operation.description.clone()></div>
            {params}
            {body}
            <h5>"Responses"</h5>
            <table class="table compact responsive responses">
                <thead><tr><th scope="col">"Status"</th><th scope="col">"Meaning"</th><th scope="col">"Body"</th><th scope="col">"Error codes"</th></tr></thead>
                <tbody>{responses}</tbody>
            </table>
            {general}
            {panel}
        </article>
    }
}

/// `beta` → "Beta", as the badges read.
fn stability_label(stability: &str) -> String {
    let mut chars = stability.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[component]
fn Schema(schema: SchemaDoc) -> impl IntoView {
    view! {
        <article class="schema" id=format!("schema-{}", schema.name) aria-labelledby=format!("schema-{}-title", schema.name)>
            <h3 id=format!("schema-{}-title", schema.name)><code>{schema.name.clone()}</code></h3>
            <div class="markdown" inner_html=schema.description></div>
            {(!schema.values.is_empty()).then(|| view! {
                <p>"One of: "{schema.values.join(", ")}</p>
            })}
            {(!schema.fields.is_empty()).then(|| view! {
                <table class="table compact responsive">
                    <thead><tr><th scope="col">"Field"</th><th scope="col">"Type"</th><th scope="col">"Rules"</th><th scope="col">"Description"</th></tr></thead>
                    <tbody>
                        {schema.fields.into_iter().map(|f| view! {
                            <tr>
                                <td data-label="Field"><code>{f.name}</code>{f.required.then_some(" (required)")}</td>
                                <td data-label="Type">{type_view(f.type_label)}</td>
                                <td data-label="Rules">{f.constraints}</td>
                                <td data-label="Description" inner_html=f.description></td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
        </article>
    }
}
