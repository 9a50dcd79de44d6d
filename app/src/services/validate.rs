//! Field rules of contract.md, "Resources and limits". Each returns a 422 naming the
//! field as the client spelled it.

use crate::error::{AppError, AppResult};
use crate::model::{PetFilter, PetStatus};

pub const NAME_MAX_CHARS: usize = 100;
pub const DESCRIPTION_MAX_CHARS: usize = 1_000;
/// A pet's description is longer than a category's (contract.md, "Pet content").
pub const PET_DESCRIPTION_MAX_CHARS: usize = 2_000;
/// The highest price, in minor units (a million euros in cents).
pub const PRICE_MAX: i64 = 100_000_000;
pub const STOCK_MAX: i64 = 1_000_000;
pub const IDS_MAX: usize = 100;
/// Longest search string; longer ones cannot match a name anyway.
pub const QUERY_MAX_CHARS: usize = NAME_MAX_CHARS;

/// A validated name: the trimmed text and its lowercased key for uniqueness and search.
#[derive(Debug, PartialEq)]
pub struct Name {
    pub text: String,
    pub key: String,
}

pub fn name(field: &str, raw: &str) -> AppResult<Name> {
    let text = raw.trim();
    let chars = text.chars().count();
    if chars == 0 {
        return Err(AppError::validation(field, "must not be empty"));
    }
    if chars > NAME_MAX_CHARS {
        return Err(AppError::validation(field, format!("must be at most {NAME_MAX_CHARS} characters (got {chars})")));
    }
    no_control_chars(field, text)?;
    Ok(Name { text: text.to_owned(), key: fold(text) })
}

pub fn description(field: &str, raw: Option<&str>) -> AppResult<Option<String>> {
    text_block(field, raw, DESCRIPTION_MAX_CHARS)
}

/// A pet's description: plain text up to 2,000 characters, its ends trimmed and its
/// line breaks `\n` (a form sent by a browser breaks lines with `\r\n`); an empty one
/// is none.
pub fn pet_description(field: &str, raw: Option<&str>) -> AppResult<Option<String>> {
    let text = raw.map(|raw| raw.replace("\r\n", "\n").replace('\r', "\n"));
    Ok(text_block(field, text.as_deref().map(str::trim), PET_DESCRIPTION_MAX_CHARS)?.filter(|text| !text.is_empty()))
}

/// Free text of at most `max` characters; line breaks and tabs are fine, other control
/// characters are not.
fn text_block(field: &str, raw: Option<&str>, max: usize) -> AppResult<Option<String>> {
    let Some(raw) = raw else { return Ok(None) };
    let chars = raw.chars().count();
    if chars > max {
        return Err(AppError::validation(field, format!("must be at most {max} characters (got {chars})")));
    }
    if raw.chars().any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t') {
        return Err(AppError::validation(field, "must not contain control characters"));
    }
    Ok(Some(raw.to_owned()))
}

/// A price in minor units: 0 to [`PRICE_MAX`].
pub fn price(field: &str, price: i64) -> AppResult<i64> {
    if (0..=PRICE_MAX).contains(&price) {
        Ok(price)
    } else {
        Err(AppError::validation(field, format!("must be from 0 to {PRICE_MAX} (minor units of the currency)")))
    }
}

pub fn stock(field: &str, quantity: i64) -> AppResult<i64> {
    if (0..=STOCK_MAX).contains(&quantity) {
        Ok(quantity)
    } else {
        Err(AppError::validation(field, format!("must be from 0 to {STOCK_MAX}")))
    }
}

pub fn id(field: &str, id: i64) -> AppResult<i64> {
    if id > 0 { Ok(id) } else { Err(AppError::validation(field, "must be a positive integer")) }
}

/// Ids written as `1,2,3`: each positive, at most `max` of them, none twice.
pub fn id_list(field: &str, raw: &str, max: usize) -> AppResult<Vec<i64>> {
    let mut ids = Vec::new();
    for part in raw.split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let id = part.parse::<i64>().ok().filter(|id| *id > 0);
        let id =
            id.ok_or_else(|| AppError::validation(field, "must be ids (positive integers) separated by commas"))?;
        if !ids.contains(&id) {
            ids.push(id);
        }
        if ids.len() > max {
            return Err(AppError::validation(field, format!("must name at most {max} pets")));
        }
    }
    Ok(ids)
}

pub use crate::model::fold;

fn no_control_chars(field: &str, text: &str) -> AppResult<()> {
    if text.chars().any(char::is_control) {
        return Err(AppError::validation(field, "must not contain control characters"));
    }
    Ok(())
}

/// Reads the raw query values of a pet listing (REST `GET /pets` and the catalog page).
pub fn pet_filter(
    status: Option<&str>,
    category_id: Option<&str>,
    q: Option<&str>,
    ids: Option<&str>,
) -> AppResult<PetFilter> {
    let status = match status.filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(
            PetStatus::parse(raw)
                .ok_or_else(|| AppError::validation("status", "must be one of available, pending, sold"))?,
        ),
    };
    let category_id = match category_id.filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(positive_int("categoryId", raw)?),
    };
    let q = search_text("q", q)?;
    let ids = match ids {
        None => None,
        Some(raw) => {
            let ids = raw.split(',').map(|part| positive_int("ids", part.trim())).collect::<AppResult<Vec<i64>>>()?;
            if ids.len() > IDS_MAX {
                return Err(AppError::validation("ids", format!("must list at most {IDS_MAX} ids")));
            }
            Some(ids)
        }
    };
    Ok(PetFilter { status, category_id, q, text: None, ids })
}

/// Reads the raw query values of an order listing.
pub fn order_filter(complete: Option<&str>, pet_id: Option<&str>) -> AppResult<crate::model::OrderFilter> {
    let complete = match complete.filter(|s| !s.is_empty()) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(AppError::validation("complete", "must be true or false")),
    };
    let pet_id = match pet_id.filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(positive_int("petId", raw)?),
    };
    Ok(crate::model::OrderFilter { complete, pet_id })
}

/// Reads the storefront's order history filters (`state`, `pet`: a name to look for).
pub fn order_history_filter(state: Option<&str>, pet: Option<&str>) -> AppResult<crate::model::OrderHistoryFilter> {
    let state = match state.filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(
            crate::model::OrderState::parse(raw)
                .ok_or_else(|| AppError::validation("state", "must be one of open, completed, cancelled"))?,
        ),
    };
    Ok(crate::model::OrderHistoryFilter { state, pet: search_text("pet", pet)? })
}

/// Text to look for in names: trimmed (empty is none), at most a name's length, no
/// control characters.
fn search_text(field: &str, raw: Option<&str>) -> AppResult<Option<String>> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(text) if text.chars().count() > QUERY_MAX_CHARS => {
            Err(AppError::validation(field, format!("must be at most {QUERY_MAX_CHARS} characters")))
        }
        Some(text) => {
            no_control_chars(field, text)?;
            Ok(Some(text.to_owned()))
        }
    }
}

fn positive_int(field: &str, raw: &str) -> AppResult<i64> {
    match raw.parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(AppError::validation(field, format!("must be a positive 64-bit integer (got {raw:?})"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn id_lists_are_bounded_and_refuse_what_is_not_an_id() {
        assert_eq!(id_list("pets", "3, 1,3,,2", 5).unwrap(), vec![3, 1, 2]);
        assert_eq!(id_list("pets", "", 5).unwrap(), Vec::<i64>::new());
        for bad in ["1,x", "0", "-2", "1.5", "99999999999999999999"] {
            assert_eq!(id_list("pets", bad, 5).unwrap_err().code, ErrorCode::ValidationFailed, "{bad}");
        }
        let many = (1..=6).map(|id| id.to_string()).collect::<Vec<_>>().join(",");
        assert!(id_list("pets", &many, 5).unwrap_err().message.contains("at most 5"));
    }

    #[test]
    fn names_are_trimmed_and_counted_in_characters() {
        assert_eq!(name("name", "  Rex ").unwrap(), Name { text: "Rex".into(), key: "rex".into() });
        // 100 two-byte characters are fine: the limit is characters, not bytes.
        assert!(name("name", &"é".repeat(100)).is_ok());
        let err = name("name", &"é".repeat(101)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ValidationFailed);
        assert!(err.message.starts_with("name:"));
        assert!(name("name", "   ").is_err());
        assert!(name("name", "Re\0x").is_err());
        assert_eq!(name("name", "ÉCLAIR").unwrap().key, "éclair");
    }

    #[test]
    fn descriptions_are_bounded() {
        assert_eq!(description("description", None).unwrap(), None);
        assert!(description("description", Some(&"a".repeat(1000))).is_ok());
        assert!(description("description", Some(&"a".repeat(1001))).is_err());
        assert!(description("description", Some("two\nlines")).is_ok());
        assert!(description("description", Some("bell\u{7}")).is_err());
    }

    #[test]
    fn stock_range() {
        assert!(stock("quantity", 0).is_ok());
        assert!(stock("quantity", 1_000_000).is_ok());
        assert!(stock("quantity", -1).is_err());
        assert!(stock("quantity", 1_000_001).is_err());
    }

    #[test]
    fn pet_filter_parses_and_names_the_bad_parameter() {
        let filter = pet_filter(Some("sold"), Some("3"), Some(" Re "), Some("1, 2,3")).unwrap();
        assert_eq!(filter.status, Some(PetStatus::Sold));
        assert_eq!(filter.category_id, Some(3));
        assert_eq!(filter.q.as_deref(), Some("Re"));
        assert_eq!(filter.ids, Some(vec![1, 2, 3]));
        assert_eq!(pet_filter(None, Some(""), Some(""), None).unwrap(), PetFilter::default());

        for (args, field) in [
            ((Some("lost"), None, None, None), "status"),
            ((None, Some("x"), None, None), "categoryId"),
            ((None, Some("0"), None, None), "categoryId"),
            ((None, None, None, Some("1,,2")), "ids"),
            ((None, None, None, Some("99999999999999999999")), "ids"),
        ] {
            let err = pet_filter(args.0, args.1, args.2, args.3).unwrap_err();
            assert!(err.message.starts_with(field), "{field}: {}", err.message);
        }
        let many = (1..=101).map(|n| n.to_string()).collect::<Vec<_>>().join(",");
        assert!(pet_filter(None, None, None, Some(&many)).is_err());
        let hundred = (1..=100).map(|n| n.to_string()).collect::<Vec<_>>().join(",");
        assert!(pet_filter(None, None, None, Some(&hundred)).is_ok());
    }
}
