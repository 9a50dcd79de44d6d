//! Where webhooks may be sent (contract.md, "Events": target safety). A webhook is a
//! request the store makes on an admin's word, so it must not become a way into the
//! store's own network: `https`, or `http`, to public addresses only. Loopback,
//! private, link-local, CGNAT, multicast, reserved and cloud-metadata addresses are
//! refused when an endpoint is registered (every address its host names) and again at
//! each connection (the name may point elsewhere by then: DNS rebinding), unless the
//! operator allows them (`--webhooks-allow-private`, for development and tests).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::error::{AppError, AppResult, ErrorCode};

/// How long a host's name may take to resolve.
const LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest URL an endpoint may have.
pub const URL_MAX: usize = 2_000;

/// Whether private addresses are allowed (`--webhooks-allow-private`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    pub allow_private: bool,
}

fn refused(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::InvalidWebhookUrl, message)
}

impl Targets {
    /// Checks an endpoint's URL as it is registered (or changed): its form, and every
    /// address its host has now. Returns it as given.
    pub async fn check_url(self, raw: &str) -> AppResult<String> {
        let url = parse(raw)?;
        let host = url.host_str().ok_or_else(|| refused("the URL names no host"))?;
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses: Vec<IpAddr> = match url.host() {
            Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            _ => tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port)))
                .await
                .map_err(|_| refused(format!("the host {host} did not resolve in time")))?
                .map_err(|_| refused(format!("the host {host} has no address")))?
                .map(|addr| addr.ip())
                .collect(),
        };
        if addresses.is_empty() {
            return Err(refused(format!("the host {host} has no address")));
        }
        for ip in addresses {
            self.check_ip(ip)
                .map_err(|why| refused(format!("{host} is {why}: a webhook goes to public addresses only")))?;
        }
        Ok(raw.trim().to_owned())
    }

    /// Whether a webhook may connect to `ip`; `Err` names the kind of address it is.
    pub fn check_ip(self, ip: IpAddr) -> Result<(), &'static str> {
        if self.allow_private {
            return Ok(());
        }
        match kind(ip) {
            None => Ok(()),
            Some(kind) => Err(kind),
        }
    }

    /// The addresses of `host` a webhook may connect to now (the refused ones left out;
    /// `Err` when none is left).
    pub async fn resolve(self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let all: Vec<SocketAddr> = tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port)))
            .await
            .map_err(|_| format!("{host} did not resolve in time"))?
            .map_err(|err| format!("{host} has no address: {err}"))?
            .collect();
        let allowed: Vec<SocketAddr> = all.iter().copied().filter(|addr| self.check_ip(addr.ip()).is_ok()).collect();
        if allowed.is_empty() {
            let why = all.first().and_then(|addr| self.check_ip(addr.ip()).err()).unwrap_or("unreachable");
            return Err(format!("{host} is {why} now: not connected"));
        }
        Ok(allowed)
    }
}

/// The URL, if it is one a webhook can have: absolute, `http` or `https`, a host, no
/// longer than [`URL_MAX`].
pub fn parse(raw: &str) -> AppResult<url::Url> {
    let raw = raw.trim();
    if raw.len() > URL_MAX {
        return Err(refused(format!("the URL is longer than {URL_MAX} characters")));
    }
    let url = url::Url::parse(raw).map_err(|err| refused(format!("not a URL: {err}")))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(refused(format!("a webhook is sent over https or http, not {}", url.scheme())));
    }
    if url.host().is_none() {
        return Err(refused("the URL names no host"));
    }
    Ok(url)
}

/// What kind of address a webhook must not reach `ip` is, if it is one.
pub fn kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => kind_v4(v4),
        IpAddr::V6(v6) => kind_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, network: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(network)) & mask)
}

fn kind_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const BLOCKS: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "an unspecified address"),
        ([10, 0, 0, 0], 8, "a private address"),
        ([100, 64, 0, 0], 10, "a carrier-grade NAT address"),
        ([127, 0, 0, 0], 8, "a loopback address"),
        // 169.254.169.254 (the clouds' metadata service) is one of these.
        ([169, 254, 0, 0], 16, "a link-local address"),
        ([172, 16, 0, 0], 12, "a private address"),
        ([192, 0, 0, 0], 24, "a reserved address"),
        ([192, 0, 2, 0], 24, "a documentation address"),
        ([192, 88, 99, 0], 24, "a reserved address"),
        ([192, 168, 0, 0], 16, "a private address"),
        ([198, 18, 0, 0], 15, "a benchmarking address"),
        ([198, 51, 100, 0], 24, "a documentation address"),
        ([203, 0, 113, 0], 24, "a documentation address"),
        ([224, 0, 0, 0], 4, "a multicast address"),
        ([240, 0, 0, 0], 4, "a reserved address"),
    ];
    BLOCKS.iter().find(|(network, prefix, _)| in_v4(ip, *network, *prefix)).map(|(_, _, kind)| *kind)
}

fn kind_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    let under = |network: u128, prefix: u32| (bits >> (128 - prefix)) == (network >> (128 - prefix));
    // An IPv4 address inside (mapped, translated by SIIT, compatible, NAT64, 6to4) is
    // judged as itself.
    let siit = under(0xffff << 48, 96);
    if under(0xffff_0000_0000, 96) || siit || (under(0, 96) && bits > 1) || under(0x0064_ff9b << 96, 96) {
        return kind_v4(Ipv4Addr::from((bits & 0xffff_ffff) as u32));
    }
    if under(0x2002 << 112, 16) {
        return kind_v4(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32));
    }
    match () {
        () if ip.is_unspecified() => Some("an unspecified address"),
        () if ip.is_loopback() => Some("a loopback address"),
        () if under(0xfe80 << 112, 10) => Some("a link-local address"),
        () if under(0xfec0 << 112, 10) => Some("a site-local address"),
        // fd00:ec2::254 (a cloud's metadata service) is one of these.
        () if under(0xfc00 << 112, 7) => Some("a private address"),
        () if under(0xff00 << 112, 8) => Some("a multicast address"),
        () if under(0x2001_0db8 << 96, 32) => Some("a documentation address"),
        () if under(0x0100 << 112, 64) => Some("a discard-only address"),
        // RFC 8215: translators inside one network, whose IPv4 side may be anything.
        () if under(0x0064_ff9b_0001 << 80, 48) => Some("a local-use NAT64 address"),
        () => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_of_address_a_webhook_must_not_reach_is_refused() {
        for (ip, expected) in [
            ("127.0.0.1", "a loopback address"),
            ("127.8.9.10", "a loopback address"),
            ("::1", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("172.16.0.1", "a private address"),
            ("172.31.255.255", "a private address"),
            ("192.168.1.1", "a private address"),
            ("fd12:3456::1", "a private address"),
            ("169.254.1.1", "a link-local address"),
            ("169.254.169.254", "a link-local address"),
            ("fe80::1", "a link-local address"),
            ("100.64.0.1", "a carrier-grade NAT address"),
            ("100.100.100.200", "a carrier-grade NAT address"),
            ("224.0.0.1", "a multicast address"),
            ("ff02::1", "a multicast address"),
            ("fd00:ec2::254", "a private address"),
            ("0.0.0.0", "an unspecified address"),
            ("::", "an unspecified address"),
            ("255.255.255.255", "a reserved address"),
            ("192.0.2.10", "a documentation address"),
            ("2001:db8::1", "a documentation address"),
            // IPv4 inside IPv6, however it is written.
            ("::ffff:127.0.0.1", "a loopback address"),
            ("::ffff:169.254.169.254", "a link-local address"),
            ("64:ff9b::a00:1", "a private address"),
            ("2002:c0a8:0101::1", "a private address"),
            ("::ffff:0:7f00:1", "a loopback address"),
            ("::ffff:0:a9fe:a9fe", "a link-local address"),
            // Local-use NAT64 (RFC 8215): whatever IPv4 side it names.
            ("64:ff9b:1::a00:1", "a local-use NAT64 address"),
            ("64:ff9b:1:ffff::808:808", "a local-use NAT64 address"),
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(kind(ip), Some(expected), "{ip}");
            assert!(Targets::default().check_ip(ip).is_err(), "{ip}");
            assert!(Targets { allow_private: true }.check_ip(ip).is_ok(), "{ip} allowed by the operator");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "::ffff:0:808:808",
        ] {
            assert_eq!(kind(ip.parse().unwrap()), None, "{ip} is public");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_for_their_form_and_every_address_they_name() {
        let targets = Targets::default();
        for (url, says) in [
            ("ftp://example.com/x", "https or http"),
            ("not a url", "not a URL"),
            ("https://127.0.0.1/hook", "loopback"),
            ("http://[::1]:8080/hook", "loopback"),
            ("http://169.254.169.254/latest/meta-data", "link-local"),
            ("https://10.0.0.5/", "private"),
            ("http://localhost:9000/hook", "loopback"),
        ] {
            let err = targets.check_url(url).await.unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidWebhookUrl, "{url}");
            assert!(err.message.contains(says), "{url}: {}", err.message);
        }
        let long = format!("https://example.com/{}", "x".repeat(URL_MAX));
        assert!(targets.check_url(&long).await.is_err());
        assert_eq!(
            Targets { allow_private: true }.check_url("http://127.0.0.1:9000/hook").await.unwrap(),
            "http://127.0.0.1:9000/hook"
        );
        assert_eq!(targets.check_url("https://8.8.8.8/hook").await.unwrap(), "https://8.8.8.8/hook");
    }
}
