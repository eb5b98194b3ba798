//! The parts of a URL as Doris's URL functions read them (pure text work, no SQL types):
//! - [`UrlParts::parse`] splits `scheme://[userinfo@]host[:port][/path][?query][#ref]`, the form
//!   `parse_url` accepts (a URL without `://` has no parts);
//! - [`host`] is the host the `domain` family reads, more lenient: the scheme and `//` are
//!   optional, and a host without a dot is no host;
//! - [`first_significant_subdomain_range`] finds the label before the top-level domain, or
//!   before the second-level one when that is `com`, `net`, `org` or `co` (`www.google.com.cn`
//!   gives `google`);
//! - [`query_parameter`] is the value of the first `name=value` pair of a query.

/// A URL split at its delimiters; absent parts are `None`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    pub protocol: &'a str,
    pub userinfo: Option<&'a str>,
    pub host: &'a str,
    pub port: Option<&'a str>,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub reference: Option<&'a str>,
}

impl<'a> UrlParts<'a> {
    /// The parts of `url` (surrounding spaces ignored), or `None` when it has no `scheme://`.
    pub(crate) fn parse(url: &'a str) -> Option<Self> {
        let url = url.trim();
        let (protocol, rest) = url.split_once("://")?;
        if !is_scheme(protocol) {
            return None;
        }
        let (rest, reference) = match rest.split_once('#') {
            Some((before, after)) => (before, Some(after)),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((before, after)) => (before, Some(after)),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], &rest[slash..]),
            None => (rest, ""),
        };
        let (userinfo, host_port) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        let (host, port) = split_port(host_port);
        Some(UrlParts {
            protocol,
            userinfo,
            host,
            port,
            path,
            query,
            reference,
        })
    }

    /// `host[:port]`, without the user information (Doris's AUTHORITY).
    pub(crate) fn authority(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.to_string(),
        }
    }

    /// The path and, when there is one, `?query` (Doris's FILE).
    pub(crate) fn file(&self) -> String {
        match self.query {
            Some(query) => format!("{}?{query}", self.path),
            None => self.path.to_string(),
        }
    }
}

/// Whether `s` is a URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `host:port` split at the port's colon (a bracketed IPv6 host keeps its colons).
fn split_port(host_port: &str) -> (&str, Option<&str>) {
    let search_from = if host_port.starts_with('[') {
        host_port.find(']').map_or(host_port.len(), |end| end + 1)
    } else {
        0
    };
    match host_port[search_from..].find(':') {
        Some(colon) => {
            let colon = search_from + colon;
            (&host_port[..colon], Some(&host_port[colon + 1..]))
        }
        None => (host_port, None),
    }
}

/// The scheme of `url` (`https` of `https://a.b/`, `mailto` of `mailto:x@y.z`), `""` when it
/// has none; `host:8030` is a host and port, not a scheme.
pub(crate) fn protocol(url: &str) -> &str {
    match url.find(':') {
        Some(colon) if is_scheme(&url[..colon]) => {
            let after = &url[colon + 1..];
            if after.starts_with("//") || !after.starts_with(|c: char| c.is_ascii_digit()) {
                &url[..colon]
            } else {
                ""
            }
        }
        _ => "",
    }
}

/// The host of `url`: after an optional `scheme:` and `//`, up to the port, path, query or
/// fragment, after any `user@`; `""` when it is empty, has a character a host name cannot
/// have, or has no dot between labels.
pub(crate) fn host(url: &str) -> &str {
    let scheme = protocol(url);
    let mut rest = if scheme.is_empty() {
        url
    } else {
        &url[scheme.len() + 1..]
    };
    rest = rest.strip_prefix("//").unwrap_or(rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host_port.split(':').next().unwrap_or("");
    let valid = host.contains('.')
        && !host.starts_with('.')
        && !host.ends_with('.')
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if valid {
        host
    } else {
        ""
    }
}

/// The last label of `url`'s host; `""` without a host or for an IPv4 address.
pub(crate) fn top_level_domain(url: &str) -> &str {
    let host = host(url);
    let last = host.rsplit('.').next().unwrap_or("");
    if last.chars().all(|c| c.is_ascii_digit()) {
        ""
    } else {
        last
    }
}

/// Second-level labels that are part of a country's top-level domain (`com.cn`, `co.uk`).
const GENERIC_SECOND_LEVEL: [&str; 4] = ["com", "net", "org", "co"];

/// The byte range in `host` of its first significant subdomain, `None` for a host without dots.
pub(crate) fn first_significant_subdomain_range(host: &str) -> Option<std::ops::Range<usize>> {
    let labels: Vec<(usize, &str)> = {
        let mut start = 0;
        host.split('.')
            .map(|label| {
                let at = start;
                start += label.len() + 1;
                (at, label)
            })
            .collect()
    };
    if labels.len() < 2 {
        return None;
    }
    let mut pick = labels.len() - 2;
    if labels.len() >= 3 && GENERIC_SECOND_LEVEL.contains(&labels[pick].1) {
        pick -= 1;
    }
    let (at, label) = labels[pick];
    Some(at..at + label.len())
}

/// The value of the first `name=value` pair in the query of `url` (between `?` and `#`), as
/// written; `None` when there is none.
pub(crate) fn query_parameter<'a>(url: &'a str, name: &str) -> Option<&'a str> {
    let url = url.trim();
    let (_, after) = url.split_once('?')?;
    let query = after.split('#').next().unwrap_or("");
    parameter_in_query(query, name)
}

/// The value of the first `name=value` pair of `query` (pairs separated by `&`).
pub(crate) fn parameter_in_query<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .find_map(|pair| match pair.split_once('=') {
            Some((key, value)) if key == name => Some(value),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_a_full_url() {
        let url = "http://user:pass@example.com:80/docs/index.html?name=net&k=v#DOWN";
        let parts = UrlParts::parse(url).unwrap();
        assert_eq!(parts.protocol, "http");
        assert_eq!(parts.userinfo, Some("user:pass"));
        assert_eq!(parts.host, "example.com");
        assert_eq!(parts.port, Some("80"));
        assert_eq!(parts.path, "/docs/index.html");
        assert_eq!(parts.query, Some("name=net&k=v"));
        assert_eq!(parts.reference, Some("DOWN"));
        assert_eq!(parts.authority(), "example.com:80");
        assert_eq!(parts.file(), "/docs/index.html?name=net&k=v");
        assert_eq!(parameter_in_query(parts.query.unwrap(), "k"), Some("v"));
        assert_eq!(UrlParts::parse("doris.apache.org/x"), None);
        assert_eq!(
            UrlParts::parse("https://doris.apache.org").unwrap().path,
            ""
        );
    }

    #[test]
    fn reads_hosts_leniently() {
        assert_eq!(host("https://doris.apache.org/docs"), "doris.apache.org");
        assert_eq!(host("doris.apache.org:8030/x?y"), "doris.apache.org");
        assert_eq!(host("//u@www.a.com#x"), "www.a.com");
        assert_eq!(host("wwwwwwww"), "");
        assert_eq!(host("http://bad host.com/"), "");
        assert_eq!(protocol("svn+ssh://x.com"), "svn+ssh");
        assert_eq!(protocol("x.com/a:b"), "");
        assert_eq!(protocol("x.com:8030/a"), "");
        assert_eq!(protocol("mailto:a@b.com"), "mailto");
        assert_eq!(top_level_domain("www.google.com.cn"), "cn");
        assert_eq!(top_level_domain("http://10.0.0.1/"), "");
    }

    #[test]
    fn finds_the_first_significant_subdomain() {
        let pick = |h: &str| first_significant_subdomain_range(h).map(|r| h[r].to_string());
        assert_eq!(pick("www.baidu.com").as_deref(), Some("baidu"));
        assert_eq!(pick("www.google.com.cn").as_deref(), Some("google"));
        assert_eq!(pick("news.bbc.co.uk").as_deref(), Some("bbc"));
        assert_eq!(pick("com.cn").as_deref(), Some("com"));
        assert_eq!(pick("wwwwwwww"), None);
    }

    #[test]
    fn finds_the_first_parameter() {
        let url = "http://doris.apache.org?k1=aa&k2=bb&test=cc#999";
        assert_eq!(query_parameter(url, "k2"), Some("bb"));
        assert_eq!(query_parameter(url, "999"), None);
        assert_eq!(query_parameter("http://a.com/?a=1&a=2", "a"), Some("1"));
        assert_eq!(query_parameter("http://a.com/#a=1", "a"), None);
    }
}
