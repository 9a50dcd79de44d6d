//! A pet's photo in the console: the current one (or the placeholder), a drop zone with
//! a file picker, a preview of the chosen file at once, the upload's progress, and
//! removing it.
//!
//! The upload is the REST API's `PUT /api/v1/pets/{petId}/photo` (the image itself as
//! the body, up to 5 MiB), sent by the page with its session: the same service call as
//! any client's, and a body too large for a server function's form. It is sent with
//! `XMLHttpRequest`, the one browser API that reports an upload's progress. Choosing a
//! file needs JavaScript; removing the photo is a form that works without.

use leptos::prelude::*;

use crate::model::{PHOTO_WIDTHS, Photo};
use crate::server_fns::RemovePhoto;
use crate::ui::admin::FormOutcome;
use crate::ui::note::Note;
use crate::ui::photo::{Loading, PetPhoto};
use crate::ui::widgets::confirm;

/// The types the API takes, for the file picker and the check before sending.
const ACCEPTED: &str = "image/jpeg,image/png,image/webp";
/// The API's limit (`services::photos::MAX_UPLOAD_BYTES`).
#[cfg(feature = "hydrate")]
const MAX_BYTES: f64 = 5.0 * 1024.0 * 1024.0;

/// Where an upload stands.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), expect(dead_code, reason = "an upload runs in the browser only"))]
enum Upload {
    Idle,
    /// Sending: the share sent so far, 0 to 100.
    Sending(f64),
    Done,
    Failed(String),
}

#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn PhotoEditor(pet_id: i64, name: String, photo: Option<Photo>, note: Option<Note>) -> impl IntoView {
    // The chosen file's own preview (an object URL) once there is one.
    let preview = RwSignal::new(None::<String>);
    let upload = RwSignal::new(Upload::Idle);
    let dragging = RwSignal::new(false);
    let remove = ServerAction::<RemovePhoto>::new();
    // Whether the pet has a photo now (one uploaded here counts).
    let has_photo = RwSignal::new(photo.is_some());
    let shown_name = name.clone();
    let current = move || match preview.get() {
        Some(url) => view! {
            <img class="photo" src=url alt=format!("The photo chosen for {shown_name}") width=PHOTO_WIDTHS[1]
                height=PHOTO_WIDTHS[1] * 3 / 4/>
        }
        .into_any(),
        None => view! { <PetPhoto photo=photo.clone() name=shown_name.clone() sizes="320px" loading=Loading::Eager/> }
            .into_any(),
    };
    let on_chosen = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let input = ev.target().and_then(|target| target.dyn_into::<web_sys::HtmlInputElement>().ok());
            if let Some(file) = input.as_ref().and_then(|input| input.files()).and_then(|files| files.get(0)) {
                send(pet_id, file, preview, upload, has_photo);
            }
            // The same file may be chosen again after a refusal.
            if let Some(input) = input {
                input.set_value("");
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        #[cfg(feature = "hydrate")]
        if let Some(file) = ev.data_transfer().and_then(|data| data.files()).and_then(|files| files.get(0)) {
            send(pet_id, file, preview, upload, has_photo);
        }
    };
    let status = move || match upload.get() {
        Upload::Idle => ().into_any(),
        Upload::Sending(share) => view! {
            <p class="upload-progress" role="status">
                <label>"Uploading… "<progress max="100" value=share>{format!("{share:.0} %")}</progress></label>
            </p>
        }
        .into_any(),
        Upload::Done => view! { <p class="form-done" role="status">"Photo saved."</p> }.into_any(),
        Upload::Failed(why) => view! { <p class="form-error" role="alert">{why}</p> }.into_any(),
    };
    view! {
        <div class="photo-editor">
            <div class="photo-current">{current}</div>
            <div class="photo-actions">
                <label class="dropzone" class:dragging=move || dragging.get()
                    on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
                    on:dragleave=move |_| dragging.set(false)
                    on:drop=on_drop>
                    <span class="dropzone-text">
                        {move || if has_photo.get() { "Replace the photo: drop an image here, or " } else { "Drop an image here, or " }}
                        <span class="pick">"choose a file"</span>
                    </span>
                    <input type="file" name="photo" accept=ACCEPTED on:change=on_chosen
                        disabled=move || matches!(upload.get(), Upload::Sending(_))/>
                    <small class="meta">"JPEG, PNG or WebP, at most 5 MB. Shown at 320, 640 and 1280 pixels wide."</small>
                </label>
                {status}
                <div class:hidden=move || !has_photo.get()>
                    {confirm(
                        "Remove the photo…".to_owned(),
                        format!("Remove {name}'s photo? The shop shows a placeholder instead."),
                        view! {
                            <ActionForm action=remove attr:class="inline">
                                <input type="hidden" name="id" value=pet_id/>
                                <button type="submit" class="danger">"Yes, remove it"</button>
                            </ActionForm>
                        },
                    )}
                </div>
                <FormOutcome result=remove.value().into() done="The photo was removed." note/>
            </div>
        </div>
    }
}

/// Checks `file`, shows it, and sends it; `upload` follows the request. A refused file's
/// preview goes again (the stored photo is what shows), a stored one's stays.
#[cfg(feature = "hydrate")]
fn send(
    pet_id: i64,
    file: web_sys::File,
    preview: RwSignal<Option<String>>,
    upload: RwSignal<Upload>,
    has_photo: RwSignal<bool>,
) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    if !ACCEPTED.split(',').any(|accepted| accepted == file.type_()) {
        upload.set(Upload::Failed("That file is not a JPEG, PNG or WebP image.".into()));
        return;
    }
    if file.size() > MAX_BYTES {
        upload.set(Upload::Failed("That image is larger than 5 MB.".into()));
        return;
    }
    let Ok(request) = web_sys::XmlHttpRequest::new() else {
        upload.set(Upload::Failed("This browser cannot send the file.".into()));
        return;
    };
    // What showed before: shown again if this file is refused.
    let before = preview.get_untracked();
    let chosen = web_sys::Url::create_object_url_with_blob(&file).ok();
    if chosen.is_some() {
        preview.set(chosen.clone());
    }
    let settle = move |stored: bool| {
        let (gone, shown) = if stored { (before, chosen) } else { (chosen, before) };
        if let Some(url) = gone {
            let _ = web_sys::Url::revoke_object_url(&url);
        }
        preview.set(shown);
    };
    upload.set(Upload::Sending(0.0));
    let _ = request.open("PUT", &format!("/api/v1/pets/{pet_id}/photo"));
    let _ = request.set_request_header("Content-Type", &file.type_());
    let on_progress = Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |ev: web_sys::ProgressEvent| {
        if ev.length_computable() && ev.total() > 0.0 {
            upload.set(Upload::Sending((ev.loaded() / ev.total() * 100.0).min(100.0)));
        }
    });
    if let Ok(target) = request.upload() {
        target.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
    }
    let answered = request.clone();
    // Called once, when the request ends either way; it takes the progress handler
    // along, so both are freed then.
    let on_end = Closure::once_into_js(move || {
        drop(on_progress);
        let status = answered.status().unwrap_or(0);
        let body = answered.response_text().ok().flatten().unwrap_or_default();
        let stored = (200..=299).contains(&status);
        settle(stored);
        if stored {
            has_photo.set(true);
        }
        upload.set(match status {
            200..=299 => Upload::Done,
            0 => Upload::Failed("The upload did not reach the store; check the connection and try again.".into()),
            _ => Upload::Failed(match serde_json::from_str::<crate::error::AppError>(&body) {
                Ok(error) => crate::ui::messages::sentence(&error),
                Err(_) => format!("The store answered {status}."),
            }),
        });
    });
    request.set_onloadend(Some(on_end.unchecked_ref()));
    if request.send_with_opt_blob(Some(&file)).is_err() {
        upload.set(Upload::Failed("The file could not be sent.".into()));
    }
}
