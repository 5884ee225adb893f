//! The cluster's Thrift endpoint is HBase's own Thrift 1 server in front of a real HBase: checked through the same
//! client crate the indexer uses (`hbase-thrift`, binary protocol, buffered transport).

use std::collections::BTreeMap;

use hbase_thrift::hbase::{
    AlreadyExists, BatchMutation, ColumnDescriptor, HbaseSyncClient, IOError, Mutation,
    THbaseSyncClient, TRowResult, TScan,
};
use testcluster::TestCluster;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};

type Client = HbaseSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

const TABLE: &str = "tc_pages";
const FAMILY_ATTRS: &str = "a";
const FAMILY_INDEX: &str = "i";
const TOPIC_COLUMN: &str = "a:q";
const URL_COLUMN: &str = "i:url";
const SCAN_BATCH: i32 = 100;
/// Keep rows whose `a:q` is exactly `x`; rows without `a:q` are dropped (filterIfMissing).
const FILTER: &str = "SingleColumnValueFilter('a','q',=,'binary:x',true,true)";

/// (row key, a:q, i:url) - a few pages from public sites, keyed like harvest's index rows.
const ROWS: &[(&str, Option<&str>, &str)] = &[
    (
        "00|org.wikipedia.en/wiki/Opinion_poll",
        Some("x"),
        "https://en.wikipedia.org/wiki/Opinion_poll",
    ),
    (
        "01|org.apache.hbase/book.html",
        Some("y"),
        "https://hbase.apache.org/book.html",
    ),
    (
        "02|org.rust-lang.blog/2024/11/28/Rust-1.83.0.html",
        Some("x"),
        "https://blog.rust-lang.org/2024/11/28/Rust-1.83.0.html",
    ),
    (
        "03|org.ietf.www/rfc/rfc9110.html",
        None,
        "https://www.ietf.org/rfc/rfc9110.html",
    ),
];

fn connect(addr: &str) -> Client {
    let mut channel = TTcpChannel::new();
    channel
        .open(addr)
        .unwrap_or_else(|e| panic!("connect to thrift {addr}: {e}"));
    let (read, write) = channel.split().expect("split channel");
    HbaseSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(read), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(write), true),
    )
}

fn family(name: &str) -> ColumnDescriptor {
    ColumnDescriptor {
        name: Some(name.into()),
        max_versions: Some(1),
        compression: Some("NONE".into()),
        in_memory: Some(false),
        bloom_filter_type: Some("ROW".into()),
        bloom_filter_vector_size: None,
        bloom_filter_nb_hashes: None,
        block_cache_enabled: Some(true),
        time_to_live: None,
    }
}

fn put(column: &str, value: &str) -> Mutation {
    Mutation::new(
        false,
        column.as_bytes().to_vec(),
        value.as_bytes().to_vec(),
        true,
    )
}

fn scan_rows(client: &mut Client, filter: Option<&str>) -> Vec<TRowResult> {
    // Every field spelled out: `TScan::default()` sets timestamp Some(0), which HBase reads as the time range
    // [0, 0) - an always-empty scan.
    let scan = TScan {
        start_row: None,
        stop_row: None,
        timestamp: None,
        columns: None,
        caching: Some(SCAN_BATCH),
        filter_string: filter.map(|f| f.as_bytes().to_vec()),
        batch_size: None,
        sort_columns: None,
        reversed: None,
        cache_blocks: None,
    };
    let id = client
        .scanner_open_with_scan(TABLE.into(), scan, BTreeMap::new())
        .expect("scannerOpenWithScan");
    let mut rows = Vec::new();
    loop {
        let batch = client
            .scanner_get_list(id, SCAN_BATCH)
            .expect("scannerGetList");
        if batch.is_empty() {
            break;
        }
        rows.extend(batch);
    }
    client.scanner_close(id).expect("scannerClose");
    rows
}

fn row_keys(rows: &[TRowResult]) -> Vec<String> {
    rows.iter()
        .map(|r| String::from_utf8_lossy(r.row.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

#[test]
fn real_hbase_answers_the_calls_the_indexer_makes() {
    let cluster = TestCluster::shared();
    let mut client = connect(&cluster.thrift);

    client
        .create_table(
            TABLE.into(),
            vec![family(FAMILY_ATTRS), family(FAMILY_INDEX)],
        )
        .expect("createTable");
    assert!(client
        .get_table_names()
        .expect("getTableNames")
        .contains(&TABLE.as_bytes().to_vec()));
    match client.create_table(TABLE.into(), vec![family(FAMILY_ATTRS)]) {
        Err(thrift::Error::User(e)) => assert!(e.downcast_ref::<AlreadyExists>().is_some(), "{e}"),
        other => panic!("second createTable should fail with AlreadyExists, got {other:?}"),
    }

    let batches: Vec<BatchMutation> = ROWS
        .iter()
        .map(|(row, topic, url)| {
            let mut mutations = vec![put(URL_COLUMN, url)];
            if let Some(t) = topic {
                mutations.push(put(TOPIC_COLUMN, t));
            }
            BatchMutation::new(row.as_bytes().to_vec(), mutations)
        })
        .collect();
    client
        .mutate_rows(TABLE.into(), batches, BTreeMap::new())
        .expect("mutateRows");

    let all = scan_rows(&mut client, None);
    assert_eq!(
        row_keys(&all),
        ROWS.iter().map(|r| r.0.to_string()).collect::<Vec<_>>()
    );
    let first = all[0].columns.as_ref().expect("columns");
    assert_eq!(
        first
            .get(URL_COLUMN.as_bytes())
            .and_then(|c| c.value.clone()),
        Some(ROWS[0].2.as_bytes().to_vec())
    );

    let filtered = scan_rows(&mut client, Some(FILTER));
    assert_eq!(
        row_keys(&filtered),
        vec![ROWS[0].0.to_string(), ROWS[2].0.to_string()]
    );

    let regions = client
        .get_table_regions(TABLE.into())
        .expect("getTableRegions");
    assert_eq!(regions.len(), 1, "{regions:?}");
    assert!(
        regions[0]
            .server_name
            .as_ref()
            .is_some_and(|s| !s.is_empty()),
        "{regions:?}"
    );

    // A batch naming an unknown family is refused by the region server.
    let bad = vec![BatchMutation::new(
        b"99|bad".to_vec(),
        vec![put("z:q", "x")],
    )];
    match client.mutate_rows(TABLE.into(), bad, BTreeMap::new()) {
        Err(thrift::Error::User(e)) => assert!(e.downcast_ref::<IOError>().is_some(), "{e}"),
        other => panic!("mutateRows with family z should fail with IOError, got {other:?}"),
    }

    // Rows live in HBase, not in the Thrift server: they survive its restart.
    cluster.restart_thrift().expect("restart_thrift");
    let mut client = connect(&cluster.thrift);
    assert_eq!(row_keys(&scan_rows(&mut client, None)).len(), ROWS.len());
}
