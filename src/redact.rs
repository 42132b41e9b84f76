//! What may be shown of values that can carry secrets: the one place that renders a URL
//! or a header value for people and files. Passwords (and a lone user name, often a
//! token), query values and fragments become `***`; names are kept. Header values are
//! never shown. The plan, the transports' error messages, the report and `inspect` all
//! go through here, so a secret is carried to the server and written nowhere.

use std::borrow::Cow;

/// What a secret is written as.
pub const MASK: &str = "***";

/// A URL as it may be shown: every password, lone user name, query value and fragment
/// masked. Works on any text (a URL that does not parse is shown the same way).
pub fn url(text: impl AsRef<str>) -> String {
    url_with(text.as_ref(), |_| false)
}

/// A URL as the user wrote it, for the results folder's `profile.toml`: parts that name
/// environment variables (`${VAR}`) are kept, so the file runs again; literal secrets
/// are masked.
pub fn url_as_written(text: &str) -> String {
    url_with(text, names_variables)
}

/// A header (or environment) value as the user wrote it: kept when it only names
/// environment variables (`Bearer ${MCP_TOKEN}`), masked otherwise.
pub fn value_as_written(value: &str) -> Cow<'_, str> {
    if names_variables(value) {
        Cow::Borrowed(value)
    } else {
        Cow::Borrowed(MASK)
    }
}

/// Whether `value` is made of `${VAR}` references, optionally after one word of letters
/// (an authorization scheme such as `Bearer`): such a value holds no secret itself.
pub fn names_variables(value: &str) -> bool {
    let mut rest = String::new();
    let mut refs = 0;
    let mut text = value;
    while let Some(start) = text.find("${") {
        let Some(len) = text[start..].find('}') else {
            return false;
        };
        rest.push_str(&text[..start]);
        rest.push(' ');
        refs += 1;
        text = &text[start + len + 1..];
    }
    rest.push_str(text);
    let words: Vec<&str> = rest.split_whitespace().collect();
    refs > 0
        && match words.as_slice() {
            [] => true,
            [scheme] => {
                value.trim_start().starts_with(scheme)
                    && scheme.chars().all(|c| c.is_ascii_alphabetic())
            }
            _ => false,
        }
}

/// Mask the secret parts of a URL's text unless `keep` says the part may be shown.
fn url_with(text: &str, keep: impl Fn(&str) -> bool) -> String {
    let mask = |part: &str| -> String {
        if part.is_empty() || keep(part) {
            part.to_string()
        } else {
            MASK.to_string()
        }
    };
    let (rest, fragment) = match text.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (text, None),
    };
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let (scheme, after) = match base.find("://") {
        Some(i) => base.split_at(i + 3),
        None => ("", base),
    };
    let authority_end = after.find('/').unwrap_or(after.len());
    let (authority, path) = after.split_at(authority_end);
    let mut out = String::from(scheme);
    match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.split_once(':') {
                Some((user, password)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(&mask(password));
                }
                // A user name alone is most often a token (`https://TOKEN@host/`).
                None => out.push_str(&mask(userinfo)),
            }
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    out.push_str(path);
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) => format!("{name}={}", mask(value)),
                None => mask(pair),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(&mask(fragment));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_names_and_mask_values() {
        let cases = [
            ("http://127.0.0.1:3000/mcp", "http://127.0.0.1:3000/mcp"),
            (
                "http://u:pw@host:1/mcp?api_key=s3&x=&flag",
                "http://u:***@host:1/mcp?api_key=***&x=&***",
            ),
            ("https://tok3n@host/a@b", "https://***@host/a@b"),
            ("ws://host/ws#frag", "ws://host/ws#***"),
            ("not a url ?k=v", "not a url ?k=***"),
            ("http://[::1]:8/mcp?a=1", "http://[::1]:8/mcp?a=***"),
        ];
        for (text, shown) in cases {
            assert_eq!(url(text), shown, "{text}");
        }
        let parsed = url::Url::parse("http://u:p%40ss@h/m?t=a%20b").expect("url");
        assert_eq!(url(&parsed), "http://u:***@h/m?t=***");
    }

    #[test]
    fn written_forms_keep_variables_only() {
        assert_eq!(
            url_as_written("http://u:${PW}@h/mcp?k=${KEY}&l=lit"),
            "http://u:${PW}@h/mcp?k=${KEY}&l=***"
        );
        assert_eq!(url_as_written("${MCP_URL}"), "${MCP_URL}");
        assert_eq!(
            value_as_written("Bearer ${MCP_TOKEN}"),
            "Bearer ${MCP_TOKEN}"
        );
        assert_eq!(value_as_written("${A}${B}"), "${A}${B}");
        assert_eq!(value_as_written("Bearer abc"), MASK);
        assert_eq!(value_as_written("abc ${X}"), "abc ${X}");
        assert_eq!(value_as_written("Bearer abc ${X}"), MASK);
        assert_eq!(value_as_written("abc-${X}"), MASK);
        assert_eq!(value_as_written("${X"), MASK);
        assert_eq!(value_as_written("plain"), MASK);
    }
}
