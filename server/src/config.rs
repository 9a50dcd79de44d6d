//! Settings read from the environment, with the defaults `make run` relies on.
//! (`LEPTOS_SITE_ADDR` and the other `LEPTOS_*` variables are read by Leptos itself.)

use app::services::limits::BanPolicy;
use time::{Date, Month, OffsetDateTime};

pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/petstore.db";

#[derive(Clone, Debug)]
pub struct Config {
    /// `DATABASE_URL`.
    pub database_url: String,
    /// `PETSTORE_DEMO_DATA` (default on): load the demo catalog into an empty database.
    pub demo_data: bool,
    /// `PETSTORE_DEPRECATION_DATE` (YYYY-MM-DD, default 2026-11-01): when
    /// `GET /pets/{petId}` was deprecated, sent in its `Deprecation` header.
    pub deprecation: OffsetDateTime,
    /// `PETSTORE_SUNSET_DATE` (YYYY-MM-DD, default 2027-06-30): from this instant
    /// (midnight UTC) on, `GET /pets/{petId}` answers 410.
    pub sunset: OffsetDateTime,
    /// `PETSTORE_BAN_AFTER` (default 10) refusals in a window, then one more request
    /// bans for `PETSTORE_BAN_MINUTES` (default 15).
    pub bans: BanPolicy,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: DEFAULT_DATABASE_URL.into(),
            demo_data: true,
            deprecation: midnight(2026, Month::November, 1),
            sunset: midnight(2027, Month::June, 30),
            bans: BanPolicy::default(),
        }
    }
}

impl Config {
    pub fn from_env() -> Result<Config, String> {
        let mut config = Config::default();
        if let Ok(url) = std::env::var("DATABASE_URL") {
            config.database_url = url;
        }
        if let Ok(flag) = std::env::var("PETSTORE_DEMO_DATA") {
            config.demo_data = match flag.to_ascii_lowercase().as_str() {
                "1" | "true" | "on" | "yes" => true,
                "0" | "false" | "off" | "no" => false,
                _ => return Err(format!("PETSTORE_DEMO_DATA must be true or false, not {flag:?}")),
            };
        }
        if let Ok(date) = std::env::var("PETSTORE_DEPRECATION_DATE") {
            config.deprecation = parse_date("PETSTORE_DEPRECATION_DATE", &date)?;
        }
        if let Ok(date) = std::env::var("PETSTORE_SUNSET_DATE") {
            config.sunset = parse_date("PETSTORE_SUNSET_DATE", &date)?;
        }
        if let Ok(raw) = std::env::var("PETSTORE_BAN_AFTER") {
            config.bans.after_refusals =
                raw.parse().ok().filter(|n| *n > 0).ok_or("PETSTORE_BAN_AFTER must be a positive integer")?;
        }
        if let Ok(raw) = std::env::var("PETSTORE_BAN_MINUTES") {
            let minutes: i64 =
                raw.parse().ok().filter(|n| *n > 0).ok_or("PETSTORE_BAN_MINUTES must be a positive integer")?;
            config.bans.seconds = minutes * 60;
        }
        Ok(config)
    }
}

fn midnight(year: i32, month: Month, day: u8) -> OffsetDateTime {
    Date::from_calendar_date(year, month, day).expect("a valid date").midnight().assume_utc()
}

pub fn parse_date(name: &str, raw: &str) -> Result<OffsetDateTime, String> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(raw, &format)
        .map(|date| date.midnight().assume_utc())
        .map_err(|e| format!("{name} must be a date like 2027-06-30 ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_to_midnight_utc() {
        assert_eq!(parse_date("X", "2027-06-30").unwrap(), Config::default().sunset);
        assert!(parse_date("X", "30/06/2027").unwrap_err().starts_with("X must be"));
    }
}
