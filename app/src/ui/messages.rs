//! What an error says to the people using the storefront and the console: a sentence in
//! the store's words, naming a field as the forms label it. The Error object's code and
//! its message (written for API clients) stay for staff, in a quiet detail.

use crate::error::{AppError, ErrorCode, PASSKEY_REFUSED, RECOVERY_CODE_REFUSED};

/// The forms' label of each field the service names in a 422 (the API's spelling).
const LABELS: &[(&str, &str)] = &[
    ("name", "Name"),
    ("categoryId", "Category"),
    ("status", "Status"),
    ("description", "Description"),
    ("price", "Price"),
    ("sort", "Sort"),
    ("quantity", "Quantity"),
    ("petId", "Pet"),
    ("perMinute", "Per minute"),
    ("perDay", "Per day"),
    ("limits", "Limits"),
    ("role", "Role"),
    ("plan", "Plan"),
    ("key", "API key"),
    ("q", "Name"),
    ("pet", "Pet"),
    ("state", "State"),
    ("cursor", "Page"),
    ("passkey", "Passkey"),
    ("confirm", "Confirmation"),
];

/// The label of a field as the forms show it.
pub fn label(field: &str) -> &str {
    LABELS.iter().find(|(name, _)| *name == field).map_or(field, |(_, label)| label)
}

/// The error as a sentence for a person.
pub fn sentence(error: &AppError) -> String {
    use ErrorCode::{
        BadRequest, Forbidden, IdempotencyKeyReused, InsufficientStorage, InternalError, InvalidApiKey, InvalidImage,
        MissingApiKey, NotFound, PayloadTooLarge, PetNotAvailable, RequestTimeout, Unavailable, UnsupportedMediaType,
        ValidationFailed,
    };
    match error.code {
        ValidationFailed => match error.field() {
            Some(field) => {
                let problem = error.message.split_once(": ").map_or("", |(_, problem)| problem);
                let separator = if problem.starts_with("must") { " " } else { ": " };
                finish(format!("{}{separator}{problem}", label(field)))
            }
            None => finish(capitalised(&error.message)),
        },
        MissingApiKey => "Please sign in first.".into(),
        // A passkey or a recovery code that did not work: its message is for people.
        InvalidApiKey if [PASSKEY_REFUSED, RECOVERY_CODE_REFUSED].contains(&error.message.as_str()) => {
            finish(capitalised(&error.message))
        }
        InvalidApiKey => "That key is not recognised (or it has been revoked). Check it and try again.".into(),
        Forbidden => "That needs a staff (admin) key.".into(),
        NotFound => "That no longer exists: someone may have just deleted it. Reload the page to see.".into(),
        PetNotAvailable => "This pet is not available to order right now.".into(),
        IdempotencyKeyReused => "This form was already sent with other values. Reload the page and try again.".into(),
        BadRequest | UnsupportedMediaType | PayloadTooLarge => {
            "The form could not be read. Reload the page and try again.".into()
        }
        RequestTimeout | Unavailable => "The store is busy right now. Please try again in a moment.".into(),
        InternalError => "Something went wrong on our side. Please try again.".into(),
        InsufficientStorage => {
            "The store cannot save anything right now. Nothing was changed; please try again later.".into()
        }
        // Written for an API client's request body: here it is the file that was chosen.
        InvalidImage => {
            let text = error.message.replace("the body", "the file").replace("its Content-Type", "its type");
            finish(format!("That photo cannot be used: {text}"))
        }
        // Written for people already: the stock left, the rule broken, the time to wait.
        _ => finish(capitalised(&error.message)),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn finish(mut text: String) -> String {
    if !text.ends_with(['.', '!', '?']) {
        text.push('.');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_as_the_forms_label_them() {
        let error = AppError::validation("categoryId", "must be chosen");
        assert_eq!(sentence(&error), "Category must be chosen.");
        let error = AppError::validation("perMinute", "must be at most 4,294,967,295");
        assert_eq!(sentence(&error), "Per minute must be at most 4,294,967,295.");
        let error = AppError::new(ErrorCode::InvalidImage, "the body is not a JPEG image");
        assert_eq!(sentence(&error), "That photo cannot be used: the file is not a JPEG image.");
        let error = AppError::validation("status", "unknown variant `x`");
        assert_eq!(sentence(&error), "Status: unknown variant `x`.");
    }

    #[test]
    fn codes_become_sentences() {
        let error = AppError::new(ErrorCode::InsufficientStock, "only 1 in stock, 2 ordered");
        assert_eq!(sentence(&error), "Only 1 in stock, 2 ordered.");
        let error = AppError::new(
            ErrorCode::TemporarilyBanned,
            "too many requests after being limited: blocked for another 14 min",
        );
        assert_eq!(sentence(&error), "Too many requests after being limited: blocked for another 14 min.");
        let error = AppError::new(
            ErrorCode::DuplicateName,
            "a category named \"Cats\" already exists (compared case-insensitively)",
        );
        assert_eq!(sentence(&error), "A category named \"Cats\" already exists (compared case-insensitively).");
        assert_eq!(sentence(&AppError::new(ErrorCode::MissingApiKey, "no key")), "Please sign in first.");
    }
}
