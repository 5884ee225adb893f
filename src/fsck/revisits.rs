//! Revisits that must resolve for replay: a revisit's payload must be listed at its
//! `WARC-Refers-To-Target-URI` (else its own URL); and the capture row of a record only
//! a page row names.

use std::collections::HashSet;

use crate::replay::Kind;

use super::expected::Expected;

/// A revisit capture whose original is to be found.
pub(super) struct PendingRevisit {
    pub(super) pack: String,
    pub(super) offset: u64,
    pub(super) url: String,
    /// `WARC-Refers-To-Target-URI` of its record.
    pub(super) target: Option<String>,
    pub(super) digest: Option<String>,
}

/// The revisits of `pending` that resolve to none of `originals` ((URL
/// hash, digest) of the response captures): pywb looks for a capture of the
/// revisit's payload at its `WARC-Refers-To-Target-URI`, else at its own URL
/// (where a revisit that resolves counts as one: a 304 after an
/// identical-payload revisit).
pub(super) fn unresolved(
    mut originals: HashSet<([u8; 8], String)>,
    mut pending: Vec<PendingRevisit>,
) -> Vec<PendingRevisit> {
    loop {
        let before = pending.len();
        pending.retain(|r| {
            let Some(d) = &r.digest else { return true };
            let own = indexer::keys::url_hash(&r.url);
            let found = r
                .target
                .as_deref()
                .is_some_and(|t| originals.contains(&(indexer::keys::url_hash(t), d.clone())))
                || originals.contains(&(own, d.clone()));
            if found {
                originals.insert((own, d.clone()));
            }
            !found
        });
        if pending.len() == before {
            return pending;
        }
    }
}

/// The capture row of a record only a page row (`exp`) names.
pub(super) fn capture_of(
    record: &packer::warc::WarcRecord,
    kind: Kind,
    exp: &Expected,
) -> Option<indexer::Capture> {
    let http = record.http_response().ok();
    Some(indexer::Capture {
        url: exp.url.clone(),
        time: crate::replay::record_date(record)?,
        kind: kind.capture_kind(),
        status: http.as_ref().map_or(0, |h| h.status),
        digest: record
            .payload_digest()
            .map(str::to_string)
            .or_else(|| exp.digest.clone()),
        record_id: exp.record_id.clone(),
        location: exp.location.clone(),
        content_type: http
            .as_ref()
            .map(|h| h.header("content-type").map(str::to_string)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsck::FsckReport;

    fn revisit(url: &str, target: Option<&str>, digest: Option<&str>) -> PendingRevisit {
        PendingRevisit {
            pack: "p.warc.gz".into(),
            offset: 0,
            url: url.into(),
            target: target.map(str::to_string),
            digest: digest.map(str::to_string),
        }
    }

    #[test]
    fn a_revisit_resolves_to_a_listed_capture_of_its_payload_where_replay_looks() {
        let h = indexer::keys::url_hash;
        let originals: HashSet<([u8; 8], String)> = [(h("http://a/"), "sha1:A".to_string())].into();
        let left = unresolved(
            originals,
            vec![
                // Same URL, same payload: resolves.
                revisit("http://a/", None, Some("sha1:A")),
                // URL-agnostic, pointing at the original: resolves.
                revisit("http://b/", Some("http://a/"), Some("sha1:A")),
                // A 304 of b after b's resolved revisit: resolves through it.
                revisit("http://b/", Some("http://b/"), Some("sha1:A")),
                // Pointing at a URL that holds another payload.
                revisit("http://c/", Some("http://c/"), Some("sha1:A")),
                // No listed capture of the payload anywhere.
                revisit("http://a/", None, Some("sha1:B")),
                // No digest: nothing to look for.
                revisit("http://a/", None, None),
            ],
        );
        let left: Vec<(&str, Option<&str>)> = left
            .iter()
            .map(|r| (r.url.as_str(), r.digest.as_deref()))
            .collect();
        assert_eq!(
            left,
            [
                ("http://c/", Some("sha1:A")),
                ("http://a/", Some("sha1:B")),
                ("http://a/", None)
            ]
        );
        let report = FsckReport {
            unresolved_revisits: 1,
            ..Default::default()
        };
        assert!(!report.clean());
        let report = FsckReport {
            unlisted: 2,
            listed_captures: 2,
            ..Default::default()
        };
        assert!(report.clean());
    }
}
