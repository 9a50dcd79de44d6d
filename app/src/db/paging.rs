//! Keyset paging: `limit` (1 to 100, default 20) and an opaque cursor naming the last
//! id of the previous page. Stable under inserts and deletes, and one index seek a page.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::sql::pets::Keyset;
use crate::error::{AppError, AppResult};
use crate::model::{Page, PetSort};

pub const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;
const CURSOR_PREFIX: &str = "after:";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRequest {
    pub limit: u32,
    /// Only rows with an id greater than this one.
    pub after: i64,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest { limit: DEFAULT_LIMIT, after: 0 }
    }
}

impl PageRequest {
    /// Reads the raw `limit` and `cursor` query values; anything out of range or
    /// malformed is a 422 naming the parameter.
    pub fn parse(limit: Option<&str>, cursor: Option<&str>) -> AppResult<PageRequest> {
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(raw) => match raw.parse::<u32>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => return Err(AppError::validation("limit", format!("must be an integer from 1 to {MAX_LIMIT}"))),
            },
        };
        let after = match cursor {
            None => 0,
            Some(raw) => {
                decode_cursor(raw).ok_or_else(|| AppError::validation("cursor", "is not a cursor this API issued"))?
            }
        };
        Ok(PageRequest { limit, after })
    }

    /// The SQL LIMIT: one more row than asked, to learn whether a next page exists.
    pub fn fetch_limit(&self) -> i64 {
        i64::from(self.limit) + 1
    }

    /// Cuts the over-fetched rows down to a page and makes the next cursor.
    pub fn finish<T>(&self, mut rows: Vec<T>, id_of: impl Fn(&T) -> i64) -> Page<T> {
        let has_more = rows.len() > self.limit as usize;
        rows.truncate(self.limit as usize);
        let next_cursor = if has_more { rows.last().map(|row| encode_cursor(id_of(row))) } else { None };
        Page { items: rows, next_cursor }
    }
}

pub fn encode_cursor(last_id: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{last_id}"))
}

fn decode_cursor(raw: &str) -> Option<i64> {
    let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let id: i64 = text.strip_prefix(CURSOR_PREFIX)?.parse().ok()?;
    (id > 0).then_some(id)
}

/// Where a page of the catalog in `sort`'s order starts: at the beginning, or where
/// `cursor` (made by [`encode_sorted_cursor`] for the same order) says. The default
/// order's cursors are the API's (`after:<id>`).
pub fn sorted_cursor(sort: PetSort, cursor: Option<&str>) -> AppResult<Keyset> {
    let Some(raw) = cursor else {
        return Ok(match sort {
            PetSort::Added => Keyset::Id(0),
            PetSort::Newest => Keyset::Newest(None),
            PetSort::Name => Keyset::Name(None),
            PetSort::Price => Keyset::Price(None),
        });
    };
    let bad = || AppError::validation("cursor", "is not a cursor this catalog issued for this order");
    let bytes = URL_SAFE_NO_PAD.decode(raw).map_err(|_| bad())?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad())?;
    let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
    // The id, then (for name and price) the sort value after a second colon.
    let (id, value) = rest.split_once(':').map_or((rest, None), |(id, value)| (id, Some(value)));
    let id: i64 = id.parse().ok().filter(|id| *id > 0).ok_or_else(bad)?;
    match (sort, kind, value) {
        (PetSort::Added, "after", None) => Ok(Keyset::Id(id)),
        (PetSort::Newest, "before", None) => Ok(Keyset::Newest(Some(id))),
        (PetSort::Name, "name", Some(key)) => Ok(Keyset::Name(Some((key.to_owned(), id)))),
        (PetSort::Price, "price", Some(price)) => Ok(Keyset::Price(Some((price.parse().map_err(|_| bad())?, id)))),
        _ => Err(bad()),
    }
}

/// The opaque cursor of a page starting at `from`.
pub fn encode_sorted_cursor(from: &Keyset) -> String {
    match from {
        Keyset::Id(id) => encode_cursor(*id),
        Keyset::Newest(before) => URL_SAFE_NO_PAD.encode(format!("before:{}", before.unwrap_or(0))),
        Keyset::Name(after) => {
            let (key, id) = after.clone().unwrap_or_default();
            URL_SAFE_NO_PAD.encode(format!("name:{id}:{key}"))
        }
        Keyset::Price(after) => {
            let (price, id) = after.unwrap_or_default();
            URL_SAFE_NO_PAD.encode(format!("price:{id}:{price}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn defaults_and_bounds() {
        assert_eq!(PageRequest::parse(None, None).unwrap(), PageRequest { limit: 20, after: 0 });
        assert_eq!(PageRequest::parse(Some("100"), None).unwrap().limit, 100);
        for bad in ["0", "101", "-1", "abc", ""] {
            let err = PageRequest::parse(Some(bad), None).unwrap_err();
            assert_eq!(err.code, ErrorCode::ValidationFailed, "limit={bad}");
            assert!(err.message.starts_with("limit"), "{}", err.message);
        }
    }

    #[test]
    fn cursor_round_trips_and_rejects_forgeries() {
        let cursor = encode_cursor(42);
        assert_eq!(PageRequest::parse(None, Some(&cursor)).unwrap().after, 42);
        for bad in ["", "42", "!!", &URL_SAFE_NO_PAD.encode("after:-3"), &URL_SAFE_NO_PAD.encode("x:4")] {
            let err = PageRequest::parse(None, Some(bad)).unwrap_err();
            assert_eq!(err.code, ErrorCode::ValidationFailed, "cursor={bad}");
        }
    }

    #[test]
    fn sorted_cursors_round_trip_and_belong_to_their_order() {
        for (sort, from) in [
            (PetSort::Added, Keyset::Id(7)),
            (PetSort::Newest, Keyset::Newest(Some(7))),
            (PetSort::Name, Keyset::Name(Some(("o'neil: the 2nd".into(), 7)))),
            (PetSort::Price, Keyset::Price(Some((12_900, 7)))),
            (PetSort::Price, Keyset::Price(Some((crate::db::sql::pets::NO_PRICE_SORTS_AS, 7)))),
        ] {
            let cursor = encode_sorted_cursor(&from);
            assert_eq!(sorted_cursor(sort, Some(&cursor)).unwrap(), from);
            for other in [PetSort::Added, PetSort::Newest, PetSort::Name, PetSort::Price] {
                if other != sort {
                    assert_eq!(sorted_cursor(other, Some(&cursor)).unwrap_err().code, ErrorCode::ValidationFailed);
                }
            }
        }
        assert_eq!(encode_sorted_cursor(&Keyset::Id(7)), encode_cursor(7), "the API's cursors");
        for bad in ["", "x", &URL_SAFE_NO_PAD.encode("price:7:cheap"), &URL_SAFE_NO_PAD.encode("name:0:rex")] {
            assert!(
                sorted_cursor(PetSort::Price, Some(bad)).is_err() && sorted_cursor(PetSort::Name, Some(bad)).is_err()
            );
        }
    }

    #[test]
    fn finish_sets_a_cursor_only_when_more_rows_exist() {
        let page = PageRequest { limit: 2, after: 0 };
        let full = page.finish(vec![1, 2, 3], |n| *n);
        assert_eq!(full.items, vec![1, 2]);
        assert_eq!(full.next_cursor, Some(encode_cursor(2)));
        let last = page.finish(vec![1, 2], |n| *n);
        assert_eq!(last.next_cursor, None);
    }
}
