//! Query-string parameters of the API: repeatable values, unknown names
//! refused, every error naming its parameter.

use std::collections::BTreeMap;

use crate::filters::defs::{by_param, Field, FILTERS};
use crate::filters::{FilterSpec, ParamError};

/// The filter parameters every query route takes ([`crate::filters::defs::FILTERS`]).
pub use crate::filters::defs::FILTER_PARAMS;
/// Extra parameters of `/api/search`.
pub const SEARCH_PARAMS: &[&str] = &["sort", "limit", "cursor"];
/// Extra parameters of `/api/stats*`.
pub const STATS_PARAMS: &[&str] = &["interval", "group_by"];
/// Parameters of `/api/topics`.
pub const TOPICS_PARAMS: &[&str] = &["source"];
/// Parameters of `/api/runs`.
pub const RUNS_PARAMS: &[&str] = &["job", "limit"];
/// Query parameters of `POST /api/uploads`.
pub const UPLOAD_PARAMS: &[&str] = &["name"];

/// Default and largest `limit` of `/api/search` and `/api/runs`.
pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 200;

/// Parsed parameters: name -> values in order (repeatable ones may also be
/// comma-separated).
#[derive(Debug, Default)]
pub struct Params {
    values: BTreeMap<String, Vec<String>>,
}

impl Params {
    /// Parse `raw` (the query string), accepting only names in `allowed`.
    pub fn parse(raw: Option<&str>, allowed: &[&[&str]]) -> Result<Params, ParamError> {
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (k, v) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            let name = k.into_owned();
            if !allowed.iter().any(|set| set.contains(&name.as_str())) {
                let mut known: Vec<&str> = allowed.iter().flat_map(|s| s.iter().copied()).collect();
                known.sort_unstable();
                return Err(ParamError::new(
                    &name,
                    format!("unknown parameter (known: {})", known.join(", ")),
                ));
            }
            let entry = values.entry(name.clone()).or_default();
            if by_param(&name).is_some_and(|d| d.repeatable()) {
                entry.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
            } else {
                if !entry.is_empty() {
                    return Err(ParamError::new(&name, "given more than once"));
                }
                entry.push(v.into_owned());
            }
        }
        Ok(Params { values })
    }

    /// All values of a repeatable parameter.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.values.get(name).cloned().unwrap_or_default()
    }

    /// The single value of a parameter, if given and not empty.
    pub fn one(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, ParamError> {
        self.one(name)
            .map(|v| {
                v.parse::<T>().map_err(|_| {
                    ParamError::new(name, format!("{v:?} is not a non-negative whole number"))
                })
            })
            .transpose()
    }

    pub fn flag(&self, name: &str) -> Result<bool, ParamError> {
        match self.one(name) {
            None => Ok(false),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(v) => Err(ParamError::new(
                name,
                format!("{v:?}: expected true or false"),
            )),
        }
    }

    /// The filters of this request.
    pub fn filters(&self) -> Result<FilterSpec, ParamError> {
        let mut spec = FilterSpec::default();
        for d in FILTERS {
            let name = d.param;
            match d.field {
                Field::List(f) => *f(&mut spec) = self.list(name),
                Field::Text(f) => *f(&mut spec) = self.one(name).map(str::to_string),
                Field::Count(f) => *f(&mut spec) = self.number(name)?,
                Field::Switch(f) => *f(&mut spec) = self.flag(name)?,
                Field::Zone(f) => *f(&mut spec) = self.one(name).unwrap_or("").to_string(),
            }
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeatable_values_accumulate_and_split_on_commas() {
        let p = Params::parse(
            Some("topic=a&topic=b,c&keyword=%E5%86%9B%E4%BA%8B&limit=5"),
            &[&FILTER_PARAMS[..], SEARCH_PARAMS],
        )
        .unwrap();
        assert_eq!(p.list("topic"), ["a", "b", "c"]);
        assert_eq!(p.list("keyword"), ["军事"]);
        assert_eq!(p.number::<usize>("limit").unwrap(), Some(5));
    }

    #[test]
    fn unknown_and_repeated_single_parameters_are_named() {
        let e = Params::parse(Some("topics=a"), &[&FILTER_PARAMS[..]]).unwrap_err();
        assert_eq!(e.param, "topics");
        let e = Params::parse(
            Some("from=2017-01-01&from=2017-01-02"),
            &[&FILTER_PARAMS[..]],
        )
        .unwrap_err();
        assert_eq!(e.param, "from");
        let p = Params::parse(Some("min_comments=-3"), &[&FILTER_PARAMS[..]]).unwrap();
        assert_eq!(p.filters().unwrap_err().param, "min_comments");
        let p = Params::parse(Some("collapse=maybe"), &[&FILTER_PARAMS[..]]).unwrap();
        assert_eq!(p.filters().unwrap_err().param, "collapse");
    }
}
