//! The cluster's `hdfs_url` is the NameNode HBase's mini cluster started (HBase's own files live on it), and a
//! client on this machine can write and read through its DataNode: checked with hdfs-native, the packer's client.

use std::io::Write;

use hdfs_native::sync::ClientBuilder;
use hdfs_native::WriteOptions;
use testcluster::TestCluster;

/// Folder the contract promises on the cluster's HDFS.
const HBASE_DIR: &str = "/hbase";
const FILE: &str = "/harvest-tc/readme-copies.bin";
/// More than one HDFS packet (64 KiB) and one write buffer, so the DataNode pipeline is really used.
const MIN_LEN: usize = 3 << 20;
const RANGE_OFFSET: usize = 1_000_003;
const RANGE_LEN: usize = 4096;

/// Real text for the file: this crate's README, repeated until the file is [`MIN_LEN`] long.
fn payload() -> Vec<u8> {
    let readme = include_bytes!("../README.md");
    let mut data = Vec::with_capacity(MIN_LEN + readme.len());
    while data.len() < MIN_LEN {
        data.extend_from_slice(readme);
    }
    data
}

#[test]
fn hdfs_native_writes_and_reads_through_the_datanode() {
    let cluster = TestCluster::shared();
    let client = ClientBuilder::new()
        .with_url(cluster.hdfs_url.as_str())
        .build()
        .unwrap_or_else(|e| panic!("client for {}: {e}", cluster.hdfs_url));

    let hbase = client.get_file_info(HBASE_DIR).expect("stat /hbase");
    assert!(hbase.isdir, "{HBASE_DIR} is not a folder");

    let data = payload();
    let mut writer = client
        .create(FILE, WriteOptions::default().create_parent(true))
        .expect("create");
    writer.write_all(&data).expect("write");
    writer.close().expect("close");

    let status = client.get_file_info(FILE).expect("stat file");
    assert_eq!(status.length, data.len());
    let reader = client.read(FILE).expect("open for read");
    let range = reader
        .read_range(RANGE_OFFSET, RANGE_LEN)
        .expect("read_range");
    assert_eq!(&range[..], &data[RANGE_OFFSET..RANGE_OFFSET + RANGE_LEN]);
    assert!(client.delete(FILE, false).expect("delete"));
}
