//! Entity tags and `If-None-Match`, for the menu and the embedded pages.

use axum::http::{HeaderMap, HeaderValue, header};
use sha2::{Digest, Sha256};

/// A strong entity tag from the body's digest: equal bodies, equal tags,
/// whichever node or process served them.
pub fn entity_tag(body: &[u8]) -> HeaderValue {
    let digest = Sha256::digest(body);
    let tag = format!("\"{}\"", hex::encode(&digest[..16]));
    HeaderValue::from_str(&tag).unwrap_or_else(|_| HeaderValue::from_static("\"\""))
}

/// `If-None-Match` semantics (RFC 9110 §13.1.2): weak comparison, `*`, lists.
pub fn matches_any(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let etag = etag.to_str().unwrap_or_default();
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_accepts_lists_weak_tags_and_star() {
        let etag = entity_tag(b"{}");
        let tag = etag.to_str().unwrap().to_owned();
        for value in [
            tag.clone(),
            format!("W/{tag}"),
            format!("\"x\", {tag}"),
            "*".into(),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::IF_NONE_MATCH,
                HeaderValue::from_str(&value).unwrap(),
            );
            assert!(matches_any(&headers, &etag), "{value}");
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"other\""));
        assert!(!matches_any(&headers, &etag));
        assert!(!matches_any(&HeaderMap::new(), &etag));
    }
}
