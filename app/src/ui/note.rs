//! What a form sent without JavaScript did, as the island holding that form shows it.
//!
//! The page reads the flash (`server_fns::flash`) while it is rendered on the server,
//! and hands its island a `Note`: plain words and strings, made on the server with the
//! flash's types, so that the WASM reads no more than strings (every type in an
//! island's props is another JSON reader in the WASM). With JavaScript, a form shows
//! its action's own answer instead.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use serde::{Deserialize, Serialize};

use crate::server_fns::flash::Flash;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Note {
    /// Which form: its server function's path, and `#<id>` for a form about one record.
    pub form: String,
    /// A confirmation, or the refusal in the store's words.
    pub text: String,
    /// For a refusal: the Error object's code (staff see it) and the field it blames.
    pub code: Option<String>,
    pub field: Option<String>,
    /// After a refusal, what was typed, to fill the form in again.
    pub values: Vec<(String, String)>,
    /// What a confirmation links to (`(href, text)`).
    pub links: Vec<(String, String)>,
    /// A new key, shown once.
    pub secret: Option<String>,
}

/// The form of server function `S` about `record` (none for a create form).
fn form_of<S: ServerFn>(record: Option<i64>) -> String {
    match record {
        Some(id) => format!("{}#{id}", S::PATH),
        None => S::PATH.to_owned(),
    }
}

impl Note {
    /// This note, if it is for the form of `S` about `record`.
    pub fn for_form<S: ServerFn>(note: &Option<Note>, record: Option<i64>) -> Option<Note> {
        note.as_ref().filter(|note| note.form == form_of::<S>(record)).cloned()
    }

    /// Whether this note is for a form of `S`, about any record.
    pub fn is_of<S: ServerFn>(&self) -> bool {
        self.form.starts_with(S::PATH)
    }

    pub fn is_refusal(&self) -> bool {
        self.code.is_some()
    }

    /// What was typed into `field`, after a refusal.
    pub fn typed(&self, field: &str) -> Option<String> {
        self.values.iter().find(|(name, _)| name == field).map(|(_, value)| value.clone())
    }
}

/// A note as a form's outcome line: a refusal (with its code, for staff, unless
/// `plain`) or a confirmation with its links.
///
/// A note is drawn only on the page shown after its form was sent, which the browser
/// opens at the top with the focus on the body. `autofocus` (on a `tabindex="-1"`
/// element, so it can hold the focus) scrolls the note into view and gives it the
/// focus, so that a form far down a long list, or a keyboard, lands where the answer
/// is: without JavaScript too. (The first note of a page wins; a page has one.)
#[component]
pub fn NoteView(note: Note, #[prop(optional)] plain: bool) -> impl IntoView {
    match note.code {
        Some(code) => view! {
            <p class="form-error" role="alert" tabindex="-1" autofocus>
                {note.text}{(!plain).then(|| view! { " "<small class="error-code">{code}</small> })}
            </p>
        }
        .into_any(),
        None => {
            let links = note.links.into_iter().enumerate().map(|(n, (href, text))| {
                view! { {(n > 0).then_some(" · ")}<a href=href>{text}</a> }
            });
            view! { <p class="form-done" role="status" tabindex="-1" autofocus>{note.text}" "{links.collect_view()}</p> }
                .into_any()
        }
    }
}

/// The note a page hands its island: made with `build` from the flash, while the
/// server renders the page (in the browser there is none).
pub fn from_flash(build: impl FnOnce(&Flash) -> Option<Note>) -> Option<Note> {
    super::widgets::flash().as_ref().and_then(build)
}

mod notes {
    use leptos::server_fn::ServerFn;
    use serde::de::DeserializeOwned;

    use super::Note;
    use crate::server_fns::flash::Flash;
    use crate::ui::messages::sentence;

    /// What a confirmation says: its words and links (and a key's secret).
    #[derive(Default)]
    pub struct Done {
        pub text: String,
        pub links: Vec<(String, String)>,
        pub secret: Option<String>,
    }

    impl Done {
        pub fn new(text: impl Into<String>) -> Done {
            Done { text: text.into(), ..Done::default() }
        }

        pub fn link(mut self, href: impl Into<String>, text: impl Into<String>) -> Done {
            self.links.push((href.into(), text.into()));
            self
        }
    }

    impl Flash {
        /// The note of this flash if it is a form of `S` (whichever record): a refusal
        /// in words, or what `done` says of the answer (given the record's id).
        pub fn note<S>(&self, done: impl FnOnce(S::Output, Option<i64>) -> Done) -> Option<Note>
        where
            S: ServerFn,
            S::Output: DeserializeOwned,
        {
            if self.path != S::PATH {
                return None;
            }
            let record = self.record().and_then(|id| id.parse().ok());
            let form = super::form_of::<S>(record);
            Some(match self.outcome_of::<S>(record)? {
                Ok(answer) => {
                    let done = done(answer, record);
                    Note { form, text: done.text, links: done.links, secret: done.secret, ..Note::default() }
                }
                Err(error) => Note {
                    form,
                    text: sentence(&error),
                    field: error.field().map(str::to_owned),
                    code: Some(error.code.as_str().to_owned()),
                    values: self.values.clone(),
                    ..Note::default()
                },
            })
        }
    }
}

pub use notes::Done;

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::error::{AppError, ErrorCode};
    use crate::server_fns::{DeleteCategory, PlaceOrder, SaveCategory};

    fn flash<S: ServerFn>(outcome: Result<String, AppError>, values: &[(&str, &str)]) -> Flash {
        let values = values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Flash { path: S::PATH.into(), outcome, values }
    }

    #[test]
    fn a_flash_belongs_to_one_form() {
        let refused = flash::<SaveCategory>(
            Err(AppError::new(ErrorCode::DuplicateName, "taken")),
            &[("id", "3"), ("name", "Cats")],
        );
        let decoded = Flash::decode(&refused.encode()).unwrap();
        assert_eq!(decoded, refused);
        assert!(decoded.outcome_of::<SaveCategory>(Some(3)).unwrap().is_err());
        assert!(decoded.outcome_of::<SaveCategory>(Some(4)).is_none(), "another row");
        assert!(decoded.outcome_of::<SaveCategory>(None).is_none(), "the create form");
        assert!(decoded.outcome_of::<DeleteCategory>(Some(3)).is_none(), "another function");

        // The page turns it into a note for that one form, with what was typed.
        let note = decoded.note::<SaveCategory>(|_, _| Done::new("saved")).expect("a note of its function");
        assert!(Note::for_form::<SaveCategory>(&Some(note.clone()), Some(4)).is_none(), "another row's form");
        let own = Note::for_form::<SaveCategory>(&Some(note), Some(3)).expect("its row's form");
        assert!(own.is_refusal() && own.is_of::<SaveCategory>());
        assert_eq!(own.typed("name").as_deref(), Some("Cats"), "what was typed goes back into the form");
        assert!(decoded.note::<DeleteCategory>(|_, _| Done::new("deleted")).is_none());
        // A success says what was done and gives nothing typed back.
        let saved = flash::<SaveCategory>(Ok(r#"{"id":3,"name":"Cats"}"#.into()), &[("id", "3"), ("name", "Cats")]);
        let note = saved.note::<SaveCategory>(|category, _| Done::new(format!("Saved {}.", category.name))).unwrap();
        assert_eq!((note.text.as_str(), note.typed("name"), note.is_refusal()), ("Saved Cats.", None, false));

        let order = r#"{"id":7,"petId":10,"quantity":1,"complete":false}"#;
        let placed = flash::<PlaceOrder>(Ok(order.into()), &[("pet_id", "10")]);
        assert_eq!(placed.outcome_of::<PlaceOrder>(Some(10)).unwrap().unwrap().id, 7);
        assert_eq!(placed.record(), Some("10"));
        assert!(Flash::decode("not base64 json").is_none());
    }
}
