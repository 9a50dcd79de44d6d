//! A pet's photo as the pages show it: one `<img>` with every stored width in its
//! `srcset` (the browser picks by the space it has and the screen's density), a fixed
//! 4:3 box so nothing moves as it loads, and a drawn placeholder for a pet without one.

use leptos::prelude::*;

use crate::model::{PHOTO_WIDTHS, Photo};

/// How the photo is loaded: `Lazy` below the fold (cards), `Eager` for the page's main
/// picture.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Loading {
    Lazy,
    Eager,
}

/// The photo, or the placeholder. `sizes` is the `<img>`'s (the width it is shown at).
#[component]
pub fn PetPhoto(photo: Option<Photo>, name: String, sizes: &'static str, loading: Loading) -> impl IntoView {
    match photo {
        Some(photo) => {
            let (middle, widest) = (PHOTO_WIDTHS[1], PHOTO_WIDTHS[PHOTO_WIDTHS.len() - 1]);
            view! {
                <img class="photo" src=photo.url(middle) srcset=photo.srcset() sizes=sizes
                    alt=format!("Photo of {name}") width=widest height=widest * 3 / 4 decoding="async"
                    loading=match loading { Loading::Lazy => "lazy", Loading::Eager => "eager" }
                    fetchpriority=match loading { Loading::Lazy => "auto", Loading::Eager => "high" }/>
            }
            .into_any()
        }
        None => view! {
            <div class="photo placeholder" role="img" aria-label=format!("No photo of {name} yet")>
                <svg viewBox="0 0 64 64" aria-hidden="true" focusable="false">
                    <ellipse cx="32" cy="42" rx="13" ry="11"/>
                    <ellipse cx="17" cy="27" rx="6" ry="8"/>
                    <ellipse cx="27" cy="17" rx="6" ry="8"/>
                    <ellipse cx="37" cy="17" rx="6" ry="8"/>
                    <ellipse cx="47" cy="27" rx="6" ry="8"/>
                </svg>
                <span>"No photo yet"</span>
            </div>
        }
        .into_any(),
    }
}
