//! Errors of the HBase store: which Thrift errors mean a broken connection,
//! HBase's message taken out of a Thrift error, and the store's own errors.

use hbase_thrift::hbase::{AlreadyExists, IOError, IllegalArgument};

use crate::error::Error;

/// Prefix of the message of a Thrift "unknown method" reply.
pub(super) const UNKNOWN_METHOD: &str = "unknown thrift method";
/// Name used in errors.
pub(super) const SERVICE: &str = "HBase Thrift server";

/// Whether a Thrift error means the connection is unusable (retry on a new one).
pub(super) fn is_transport(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::Transport(_) | thrift::Error::Protocol(_))
}

/// A readable message for a Thrift error (user exceptions carry HBase's text).
pub(super) fn describe(e: &thrift::Error) -> String {
    if let thrift::Error::Application(a) = e {
        if a.kind == thrift::ApplicationErrorKind::UnknownMethod {
            return format!("{UNKNOWN_METHOD}: {}", a.message);
        }
    }
    if let thrift::Error::User(u) = e {
        if let Some(io) = u.downcast_ref::<IOError>() {
            return format!("IOError: {}", io.message.as_deref().unwrap_or(""));
        }
        if let Some(ia) = u.downcast_ref::<IllegalArgument>() {
            return format!("IllegalArgument: {}", ia.message.as_deref().unwrap_or(""));
        }
        if let Some(ae) = u.downcast_ref::<AlreadyExists>() {
            return format!("AlreadyExists: {}", ae.message.as_deref().unwrap_or(""));
        }
    }
    e.to_string()
}

/// A Thrift error with HBase's message extracted, usable as an error source.
#[derive(Debug)]
pub(super) struct ThriftError(pub(super) String);

impl std::fmt::Display for ThriftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ThriftError {}

pub(super) fn backend(context: impl Into<String>, e: &thrift::Error) -> Error {
    Error::backend(context, ThriftError(describe(e)))
}

pub(super) fn poisoned() -> Error {
    Error::Invalid("hbase store lock poisoned by a panicking thread".into())
}
