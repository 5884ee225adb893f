//! A small client for HBase's Thrift 2 service (`THBaseService`), used only for
//! what the Thrift 1 interface cannot do: creating a table pre-split at given
//! row keys (one region per salt bucket), and telling a Thrift 1 server from a
//! Thrift 2 one.
//!
//! The `hbase-thrift` crate speaks Thrift 1 only, so the two calls are written
//! here directly on the `thrift` crate's binary protocol (strict, unframed
//! buffered transport: what `hbase thrift2` serves by default). The field ids
//! and types follow `hbase-thrift/src/main/resources/.../thrift2/hbase.thrift`
//! of HBase 2.6.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier,
    TMessageIdentifier, TMessageType, TOutputProtocol, TStructIdentifier, TType,
};
use thrift::transport::{TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel};

use crate::error::{Error, Result};

const SERVICE: &str = "HBase Thrift 2 server";
/// HBase's namespace for tables named without one.
const DEFAULT_NAMESPACE: &str = "default";
/// Versions kept per cell (harvest rewrites whole rows; history lives in packs).
const MAX_VERSIONS: i32 = 1;
/// `TBloomFilterType.ROW` and `TCompressionAlgorithm.NONE` of the IDL.
const BLOOM_ROW: i32 = 1;
const COMPRESSION_NONE: i32 = 2;
/// Marker in the server's error text when the table is already there.
const TABLE_EXISTS: &str = "TableExistsException";

/// Which interface a HBase Thrift server speaks (`TThriftServerType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerType {
    /// Thrift 1 (`Hbase` service): what [`crate::HbaseStore`] talks to.
    One,
    /// Thrift 2 (`THBaseService`): what [`Thrift2Admin`] talks to.
    Two,
    /// A value this client does not know.
    Other(i32),
}

impl ServerType {
    pub(crate) fn from_wire(v: i32) -> ServerType {
        match v {
            1 => ServerType::One,
            2 => ServerType::Two,
            o => ServerType::Other(o),
        }
    }
}

impl std::fmt::Display for ServerType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerType::One => write!(f, "thrift 1"),
            ServerType::Two => write!(f, "thrift 2"),
            ServerType::Other(v) => write!(f, "unknown server type {v}"),
        }
    }
}

type In = TBinaryInputProtocol<TBufferedReadTransport<thrift::transport::ReadHalf<TTcpChannel>>>;
type Out =
    TBinaryOutputProtocol<TBufferedWriteTransport<thrift::transport::WriteHalf<TTcpChannel>>>;

/// Administrative calls on a HBase Thrift 2 server. Each call opens its own
/// connection (they are rare: one per table creation and per `cluster check`).
#[derive(Debug, Clone)]
pub struct Thrift2Admin {
    addr: String,
    socket: SocketAddr,
    connect_timeout: Duration,
    call_timeout: Duration,
}

impl Thrift2Admin {
    /// Resolves `addr` (`host:port`) and checks that a Thrift 2 server answers
    /// there (a Thrift 1 server on that port is a clear configuration error).
    pub fn connect(
        addr: &str,
        connect_timeout: Duration,
        call_timeout: Duration,
    ) -> Result<Thrift2Admin> {
        let socket = resolve(addr, SERVICE)?;
        let admin = Thrift2Admin {
            addr: addr.to_owned(),
            socket,
            connect_timeout,
            call_timeout,
        };
        match admin.server_type()? {
            ServerType::Two => Ok(admin),
            other => Err(Error::Invalid(format!(
                "{addr} is a {other} server; [index] thrift2 must name HBase's Thrift 2 server \
                 (`hbase thrift2 start`), [index] thrift the Thrift 1 one"
            ))),
        }
    }

    /// The address this admin talks to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// `getThriftServerType()`. Thrift 1 servers of HBase 2.x answer it too.
    pub fn server_type(&self) -> Result<ServerType> {
        let (mut i, mut o) = self.open()?;
        self.send(&mut o, "getThriftServerType", |_| Ok(()))?;
        let mut value = None;
        self.receive(&mut i, "getThriftServerType", |i, field| match field {
            (0, TType::I32) => {
                value = Some(i.read_i32()?);
                Ok(true)
            }
            _ => Ok(false),
        })?;
        value
            .map(ServerType::from_wire)
            .ok_or_else(|| self.protocol("getThriftServerType returned no value"))
    }

    /// `createTable(desc, splitKeys)`: a table in the default namespace with
    /// the given families (one version, ROW bloom filter, no compression),
    /// split before each of `split_keys`. `Ok(false)` if it already existed.
    pub fn create_table(
        &self,
        name: &str,
        families: &[String],
        split_keys: &[Vec<u8>],
    ) -> Result<bool> {
        let (mut i, mut o) = self.open()?;
        self.send(&mut o, "createTable", |o| {
            // 1: required TTableDescriptor desc
            o.write_field_begin(&TFieldIdentifier::new("desc", TType::Struct, 1))?;
            o.write_struct_begin(&TStructIdentifier::new("TTableDescriptor"))?;
            // 1: required TTableName tableName
            o.write_field_begin(&TFieldIdentifier::new("tableName", TType::Struct, 1))?;
            o.write_struct_begin(&TStructIdentifier::new("TTableName"))?;
            o.write_field_begin(&TFieldIdentifier::new("ns", TType::String, 1))?;
            o.write_bytes(DEFAULT_NAMESPACE.as_bytes())?;
            o.write_field_end()?;
            o.write_field_begin(&TFieldIdentifier::new("qualifier", TType::String, 2))?;
            o.write_bytes(name.as_bytes())?;
            o.write_field_end()?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_field_end()?;
            // 2: optional list<TColumnFamilyDescriptor> columns
            o.write_field_begin(&TFieldIdentifier::new("columns", TType::List, 2))?;
            o.write_list_begin(&TListIdentifier::new(TType::Struct, families.len() as i32))?;
            for family in families {
                o.write_struct_begin(&TStructIdentifier::new("TColumnFamilyDescriptor"))?;
                o.write_field_begin(&TFieldIdentifier::new("name", TType::String, 1))?;
                o.write_bytes(family.as_bytes())?;
                o.write_field_end()?;
                o.write_field_begin(&TFieldIdentifier::new("bloomnFilterType", TType::I32, 5))?;
                o.write_i32(BLOOM_ROW)?;
                o.write_field_end()?;
                o.write_field_begin(&TFieldIdentifier::new("compressionType", TType::I32, 6))?;
                o.write_i32(COMPRESSION_NONE)?;
                o.write_field_end()?;
                o.write_field_begin(&TFieldIdentifier::new("maxVersions", TType::I32, 10))?;
                o.write_i32(MAX_VERSIONS)?;
                o.write_field_end()?;
                o.write_field_stop()?;
                o.write_struct_end()?;
            }
            o.write_list_end()?;
            o.write_field_end()?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_field_end()?;
            // 2: optional list<binary> splitKeys
            o.write_field_begin(&TFieldIdentifier::new("splitKeys", TType::List, 2))?;
            o.write_list_begin(&TListIdentifier::new(
                TType::String,
                split_keys.len() as i32,
            ))?;
            for key in split_keys {
                o.write_bytes(key)?;
            }
            o.write_list_end()?;
            o.write_field_end()
        })?;
        let mut io_error: Option<String> = None;
        self.receive(&mut i, "createTable", |i, field| match field {
            // throws (1: TIOError io)
            (1, TType::Struct) => {
                io_error = Some(read_io_error(i)?);
                Ok(true)
            }
            _ => Ok(false),
        })?;
        match io_error {
            None => {
                tracing::info!(
                    table = name,
                    regions = split_keys.len() + 1,
                    "hbase table created pre-split"
                );
                Ok(true)
            }
            Some(m) if m.contains(TABLE_EXISTS) => Ok(false),
            Some(m) => Err(Error::backend(
                format!("createTable {name} on {SERVICE} {}", self.addr),
                ServerMessage(m),
            )),
        }
    }

    fn open(&self) -> Result<(In, Out)> {
        let unavailable = |e: std::io::Error| Error::Unavailable {
            service: SERVICE,
            addr: self.addr.clone(),
            attempts: 1,
            source: Box::new(e),
        };
        let stream =
            TcpStream::connect_timeout(&self.socket, self.connect_timeout).map_err(unavailable)?;
        stream
            .set_read_timeout(Some(self.call_timeout))
            .and_then(|()| stream.set_write_timeout(Some(self.call_timeout)))
            .map_err(unavailable)?;
        let (r, w) = TTcpChannel::with_stream(stream)
            .split()
            .map_err(|e| self.thrift("split channel", e))?;
        Ok((
            TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
            TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
        ))
    }

    /// Writes one call: message header, the `{method}_args` struct whose fields
    /// `args` writes, and flushes.
    fn send(
        &self,
        o: &mut Out,
        method: &str,
        args: impl FnOnce(&mut Out) -> thrift::Result<()>,
    ) -> Result<()> {
        let write = |o: &mut Out| -> thrift::Result<()> {
            o.write_message_begin(&TMessageIdentifier::new(method, TMessageType::Call, 1))?;
            o.write_struct_begin(&TStructIdentifier::new(format!("{method}_args")))?;
            args(o)?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_message_end()?;
            o.flush()
        };
        write(o).map_err(|e| self.thrift(method, e))
    }

    /// Reads one reply; `field` gets each result field `(id, type)` and returns
    /// whether it consumed the value (otherwise it is skipped).
    fn receive(
        &self,
        i: &mut In,
        method: &str,
        mut field: impl FnMut(&mut In, (i16, TType)) -> thrift::Result<bool>,
    ) -> Result<()> {
        let mut read = |i: &mut In| -> thrift::Result<()> {
            let header = i.read_message_begin()?;
            if header.message_type == TMessageType::Exception {
                let e = thrift::Error::read_application_error_from_in_protocol(i)?;
                i.read_message_end()?;
                return Err(thrift::Error::Application(e));
            }
            i.read_struct_begin()?;
            loop {
                let f = i.read_field_begin()?;
                if f.field_type == TType::Stop {
                    break;
                }
                let id = f.id.unwrap_or(-1);
                if !field(i, (id, f.field_type))? {
                    i.skip(f.field_type)?;
                }
                i.read_field_end()?;
            }
            i.read_struct_end()?;
            i.read_message_end()
        };
        read(i).map_err(|e| self.thrift(method, e))
    }

    fn thrift(&self, what: &str, e: thrift::Error) -> Error {
        match e {
            thrift::Error::Transport(_) => Error::Unavailable {
                service: SERVICE,
                addr: self.addr.clone(),
                attempts: 1,
                source: Box::new(e),
            },
            other => Error::backend(format!("{what} on {SERVICE} {}", self.addr), other),
        }
    }

    fn protocol(&self, what: &str) -> Error {
        Error::backend(
            format!("{SERVICE} {}", self.addr),
            ServerMessage(what.to_owned()),
        )
    }
}

/// The first socket address of `addr` (`host:port`); a name that does not
/// resolve is [`Error::Unavailable`] naming `service`.
pub(crate) fn resolve(addr: &str, service: &'static str) -> Result<SocketAddr> {
    addr.to_socket_addrs()
        .map_err(|e| Error::Unavailable {
            service,
            addr: addr.to_owned(),
            attempts: 0,
            source: Box::new(e),
        })?
        .next()
        .ok_or_else(|| Error::Invalid(format!("address {addr:?} resolves to nothing")))
}

/// An error text the server sent (a `TIOError` message) or a malformed reply.
#[derive(Debug)]
struct ServerMessage(String);

impl std::fmt::Display for ServerMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServerMessage {}

/// Reads a `TIOError { 1: optional string message, 2: optional bool canRetry }`.
fn read_io_error(i: &mut In) -> thrift::Result<String> {
    let mut message = String::new();
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        if f.field_type == TType::Stop {
            break;
        }
        match (f.id, f.field_type) {
            (Some(1), TType::String) => message = i.read_string()?,
            (_, t) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    if message.is_empty() {
        message = "TIOError without a message".to_owned();
    }
    Ok(message)
}

/// Split keys that give one region per salt bucket: the bucket bytes `1..n`.
pub fn bucket_split_keys(buckets: u8) -> Vec<Vec<u8>> {
    (1..buckets.max(1)).map(|b| vec![b]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keys_match_bucket_regions() {
        let keys = bucket_split_keys(4);
        assert_eq!(keys, vec![vec![1], vec![2], vec![3]]);
        let regions = crate::store::bucket_regions(4);
        for (key, region) in keys.iter().zip(regions.iter().skip(1)) {
            assert_eq!(&region.start, key);
        }
        assert!(bucket_split_keys(1).is_empty());
    }

    #[test]
    fn refused_admin_connection_is_unavailable() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        drop(listener);
        let started = std::time::Instant::now();
        let err = Thrift2Admin::connect(&addr, Duration::from_secs(2), Duration::from_secs(2))
            .expect_err("nothing listens there");
        assert!(matches!(err, Error::Unavailable { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}
