//! Every page filter, defined once: its name as an API parameter and as a command-line
//! flag, what it takes, its help (the CLI's `--help` and the OpenAPI description) and the
//! field of [`FilterSpec`] it fills. The command line (`query`, `stats`, `export`, `dedup`,
//! `reextract`: [`FilterSpec`] is their `clap::Args`), the API's query parameters
//! (`crate::serve::params`) and the OpenAPI document (`crate::serve::openapi`) all read
//! [`FILTERS`]; a new filter is a row here and a field of [`FilterSpec`]. This file imports
//! nothing else of the binary, so the command line's definitions can use it without a
//! circle.

use std::sync::LazyLock;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use serde_json::{json, Value};

/// The filters shared by the command line and the HTTP API, as given: each is defined once,
/// in [`FILTERS`] (the flags, the API parameters and their documentation come from
/// there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterSpec {
    pub sources: Vec<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `UTC`, `+08:00` or an IANA name; empty = UTC.
    pub tz: String,
    pub topics: Vec<String>,
    pub media: Vec<String>,
    /// The publishing site, its own name or host (any of these).
    pub outlets: Vec<String>,
    /// All of these.
    pub keywords: Vec<String>,
    /// At least one of these.
    pub any: Vec<String>,
    /// A text query over headline and text (`indexer::TextQuery`).
    pub text: Option<String>,
    pub min_comments: Option<u64>,
    pub max_comments: Option<u64>,
    pub include_revisits: bool,
    pub collapse: bool,
    /// Provenance of the publish time, any of (`meta`, `text`, ..., `fetch`).
    pub published_from: Vec<String>,
}

/// What a filter takes, and the field of [`FilterSpec`] it fills.
#[derive(Clone, Copy)]
pub enum Field {
    /// Values, repeatable (and comma-separated in the API).
    List(fn(&mut FilterSpec) -> &mut Vec<String>),
    /// One text.
    Text(fn(&mut FilterSpec) -> &mut Option<String>),
    /// One whole number, at least 0.
    Count(fn(&mut FilterSpec) -> &mut Option<u64>),
    /// A switch (`--flag`; `true`/`false` in the API).
    Switch(fn(&mut FilterSpec) -> &mut bool),
    /// The time zone: one text, `UTC` when not given.
    Zone(fn(&mut FilterSpec) -> &mut String),
}

/// One filter.
pub struct FilterDef {
    /// Its API query parameter.
    pub param: &'static str,
    /// Its command-line flag, without `--`.
    pub flag: &'static str,
    /// What `--help` calls its value.
    pub value: &'static str,
    /// What it takes and fills.
    pub field: Field,
    /// What it selects: `--help` and the OpenAPI description.
    pub help: &'static str,
    /// The values it allows, when they are a closed set.
    pub values: Option<fn() -> Vec<&'static str>>,
    /// On the command line, one value may also be a comma-separated list.
    pub commas_on_cli: bool,
}

impl FilterDef {
    const fn new(
        param: &'static str,
        (flag, value): (&'static str, &'static str),
        field: Field,
        help: &'static str,
    ) -> Self {
        FilterDef {
            param,
            flag,
            value,
            field,
            help,
            values: None,
            commas_on_cli: false,
        }
    }

    /// Its OpenAPI schema.
    pub fn schema(&self) -> Value {
        let values = self.values.map(|v| v());
        match self.field {
            Field::List(_) => match values {
                Some(v) => json!({"type": "array", "items": {"type": "string", "enum": v}}),
                None => json!({"type": "array", "items": {"type": "string"}}),
            },
            Field::Text(_) | Field::Zone(_) => json!({"type": "string"}),
            Field::Count(_) => json!({"type": "integer", "minimum": 0}),
            Field::Switch(_) => json!({"type": "boolean"}),
        }
    }

    /// Whether the API takes it several times (or as a comma list).
    pub fn repeatable(&self) -> bool {
        matches!(self.field, Field::List(_))
    }
}

/// The publish-time provenances (`published_from`).
fn published_from_values() -> Vec<&'static str> {
    extract::PublishedFrom::ALL
        .iter()
        .map(|p| p.as_str())
        .collect()
}

/// Every filter, in the order `--help` and the OpenAPI document list them.
pub static FILTERS: &[FilterDef] = &[
    FilterDef::new(
        "source",
        ("source", "SOURCE"),
        Field::List(|f| &mut f.sources),
        "Source (repeatable: any of; default: every source in the index)",
    ),
    FilterDef::new(
        "from",
        ("from", "FROM"),
        Field::Text(|f| &mut f.from),
        "Start, inclusive: YYYY-MM-DD (the start of the day in tz) or an RFC 3339 date-time",
    ),
    FilterDef::new(
        "to",
        ("to", "TO"),
        Field::Text(|f| &mut f.to),
        "End: YYYY-MM-DD is inclusive (the whole day, in tz), an RFC 3339 date-time exclusive",
    ),
    FilterDef::new(
        "tz",
        ("tz", "TZ"),
        Field::Zone(|f| &mut f.tz),
        "Time zone of plain dates and of stats buckets: UTC (default), an offset like +08:00, or an IANA name like Asia/Shanghai",
    ),
    FilterDef::new(
        "topic",
        ("topic", "TOPIC"),
        Field::List(|f| &mut f.topics),
        "Topic (repeatable: any of)",
    ),
    FilterDef::new(
        "media",
        ("media", "MEDIA"),
        Field::List(|f| &mut f.media),
        "Media: the outlet the page names or credits, e.g. a wire agency (repeatable: any of)",
    ),
    FilterDef::new(
        "outlet",
        ("outlet", "OUTLET"),
        Field::List(|f| &mut f.outlets),
        "Publishing site, as it names itself (og:site_name, ...) else its host; never a credited agency (repeatable: any of)",
    ),
    FilterDef::new(
        "keyword",
        ("keyword", "WORDS"),
        Field::List(|f| &mut f.keywords),
        "A word or phrase the headline or text mentions (repeatable: all must); \"trade war\" and \"中美 贸易\" are phrases. Not the page's extracted keywords",
    ),
    FilterDef::new(
        "any",
        ("any", "WORDS"),
        Field::List(|f| &mut f.any),
        "A word or phrase the headline or text mentions (repeatable: at least one must)",
    ),
    FilterDef::new(
        "text",
        ("text", "QUERY"),
        Field::Text(|f| &mut f.text),
        "Words of the headline or text: word, \"a phrase\", a OR b, -excluded, title:word (the headline only); every part must hold",
    ),
    FilterDef::new(
        "min_comments",
        ("min-comments", "N"),
        Field::Count(|f| &mut f.min_comments),
        "Only pages with at least this many comments",
    ),
    FilterDef::new(
        "max_comments",
        ("max-comments", "N"),
        Field::Count(|f| &mut f.max_comments),
        "Only pages with at most this many comments",
    ),
    FilterDef::new(
        "revisits",
        ("include-revisits", ""),
        Field::Switch(|f| &mut f.include_revisits),
        "Also list revisits (repeated captures of a payload seen before)",
    ),
    FilterDef::new(
        "collapse",
        ("collapse", ""),
        Field::Switch(|f| &mut f.collapse),
        "Leave out pages known to nearly duplicate another",
    ),
    FilterDef {
        values: Some(published_from_values),
        commas_on_cli: true,
        ..FilterDef::new(
        "published_from",
        ("published-from", "KIND"),
            Field::List(|f| &mut f.published_from),
            "Only pages whose publish time came from one of these (repeatable or comma-separated): meta, jsonld, time, script, text, url, feed, sitemap, modified (only an update time given), fetch (no publish time, filed under the capture time)",
        )
    },
];

/// The API parameters of the filters.
pub static FILTER_PARAMS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| FILTERS.iter().map(|d| d.param).collect());

/// The filter whose API parameter is `param`.
pub fn by_param(param: &str) -> Option<&'static FilterDef> {
    FILTERS.iter().find(|d| d.param == param)
}

impl Args for FilterSpec {
    fn augment_args(mut cmd: Command) -> Command {
        for d in FILTERS {
            let arg = Arg::new(d.flag).long(d.flag).help(d.help);
            let arg = if d.value.is_empty() {
                arg
            } else {
                arg.value_name(d.value)
            };
            let arg = match d.field {
                Field::List(_) => {
                    let arg = arg.action(ArgAction::Append).num_args(1);
                    if d.commas_on_cli {
                        arg.value_delimiter(',')
                    } else {
                        arg
                    }
                }
                Field::Text(_) => arg.action(ArgAction::Set).num_args(1),
                Field::Count(_) => arg
                    .action(ArgAction::Set)
                    .num_args(1)
                    .value_parser(clap::value_parser!(u64)),
                Field::Switch(_) => arg.action(ArgAction::SetTrue),
                Field::Zone(_) => arg.action(ArgAction::Set).num_args(1).default_value("UTC"),
            };
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for FilterSpec {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut spec = FilterSpec::default();
        spec.update_from_arg_matches(m)?;
        Ok(spec)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for d in FILTERS {
            let text = || m.get_one::<String>(d.flag).cloned();
            match d.field {
                Field::List(f) => {
                    *f(self) = m
                        .get_many::<String>(d.flag)
                        .map(|v| v.cloned().collect())
                        .unwrap_or_default();
                }
                Field::Text(f) => *f(self) = text(),
                Field::Count(f) => *f(self) = m.get_one::<u64>(d.flag).copied(),
                Field::Switch(f) => *f(self) = m.get_flag(d.flag),
                Field::Zone(f) => *f(self) = text().unwrap_or_default(),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        filters: FilterSpec,
    }

    /// Every flag fills its field: the command line gives what the API gives.
    #[test]
    fn each_flag_fills_its_field() {
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "x",
            "--source",
            "a",
            "--source",
            "b",
            "--from",
            "2024-01-01",
            "--to",
            "2024-02-01",
            "--tz",
            "+08:00",
            "--topic",
            "军事",
            "--media",
            "新华社",
            "--outlet",
            "Al Jazeera",
            "--keyword",
            "trade, war",
            "--any",
            "x",
            "--text",
            "title:y",
            "--min-comments",
            "3",
            "--max-comments",
            "9",
            "--include-revisits",
            "--collapse",
            "--published-from",
            "meta,text",
        ])
        .expect("parses");
        let expected = FilterSpec {
            sources: vec!["a".into(), "b".into()],
            from: Some("2024-01-01".into()),
            to: Some("2024-02-01".into()),
            tz: "+08:00".into(),
            topics: vec!["军事".into()],
            media: vec!["新华社".into()],
            outlets: vec!["Al Jazeera".into()],
            keywords: vec!["trade, war".into()],
            any: vec!["x".into()],
            text: Some("title:y".into()),
            min_comments: Some(3),
            max_comments: Some(9),
            include_revisits: true,
            collapse: true,
            published_from: vec!["meta".into(), "text".into()],
        };
        assert_eq!(cli.filters, expected);
        let none = Cli::try_parse_from(["x"]).expect("parses");
        assert_eq!(
            none.filters,
            FilterSpec {
                tz: "UTC".into(),
                ..FilterSpec::default()
            }
        );
        assert!(Cli::try_parse_from(["x", "--min-comments", "-1"]).is_err());
        assert!(Cli::try_parse_from(["x", "--revisits"]).is_err());
    }

    /// Every field of the spec has a filter (a field without one would be set by nobody).
    #[test]
    fn every_field_has_one_filter() {
        let mut spec = FilterSpec::default();
        for d in FILTERS {
            match d.field {
                Field::List(f) => f(&mut spec).push("v".into()),
                Field::Text(f) => *f(&mut spec) = Some("v".into()),
                Field::Count(f) => *f(&mut spec) = Some(1),
                Field::Switch(f) => *f(&mut spec) = true,
                Field::Zone(f) => *f(&mut spec) = "v".into(),
            }
        }
        let FilterSpec {
            sources,
            from,
            to,
            tz,
            topics,
            media,
            outlets,
            keywords,
            any,
            text,
            min_comments,
            max_comments,
            include_revisits,
            collapse,
            published_from,
        } = spec;
        let lists = [
            sources,
            topics,
            media,
            outlets,
            keywords,
            any,
            published_from,
        ];
        assert!(lists.iter().all(|l| l.len() == 1), "{lists:?}");
        assert!([from, to, text].iter().all(Option::is_some));
        assert!(!tz.is_empty() && min_comments.is_some() && max_comments.is_some());
        assert!(include_revisits && collapse);
        let mut params: Vec<&str> = FILTERS.iter().map(|d| d.param).collect();
        params.sort_unstable();
        params.dedup();
        assert_eq!(params.len(), FILTERS.len());
    }
}
