//! The text query language: words, "phrases", `OR`, `-exclusion`, `title:`.
//!
//! A query is a list of clauses that must all hold. A clause is one term, or
//! terms joined by `OR` (one of them holds), or a term with a leading `-`
//! (it must not hold). A term is a word or a quoted phrase, optionally
//! preceded by `title:` (the headline only; otherwise the headline or the
//! text). Words are segmented with the tokenizer the pages were indexed with
//! ([`tokens::for_each_token`]): a word that is cut into several tokens
//! (`e-mail`) is a phrase of them, and stop words fall out. A word or phrase
//! written in Chinese characters only (two or more) is looked for as those
//! characters side by side in the text, not as words: `比增` finds `同比增长`,
//! which jieba cuts `同比 增长`, and `中美 贸易` is `中美贸易`.
//! Positions in errors count characters from 1.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Most tokens one query may hold: a longer query is refused, not run.
pub const MAX_QUERY_TOKENS: usize = 64;
/// Most characters of a query.
pub const MAX_QUERY_CHARS: usize = 2_000;

/// Where a term is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TextField {
    /// The headline or the text.
    Any,
    /// The headline only.
    Title,
}

/// A word (one token) or a phrase (tokens in a row); a word or phrase written in
/// Chinese characters only is the run of those characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Term {
    /// Where to look.
    pub field: TextField,
    /// The tokens, in order (one: a word).
    pub tokens: Vec<String>,
    /// The characters of a term of two or more Chinese characters (whitespace between
    /// them left out): it occurs where they stand side by side in the text, whatever
    /// words the sentence is cut into (`比增` in `同比增长`), not where its tokens do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub han: Option<String>,
}

impl Term {
    /// Whether nothing is left to look for (stop words only).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty() && self.han.is_none()
    }

    /// How many words the term counts for against [`MAX_QUERY_TOKENS`].
    fn size(&self) -> usize {
        self.tokens.len().max(usize::from(self.han.is_some()))
    }

    /// Whether a text holds the term, given its tokens and its runs of Chinese
    /// characters ([`tokens::han_runs`]).
    fn occurs_in(&self, tokens: &[&str], han: &str) -> bool {
        match &self.han {
            Some(chars) => han.contains(chars.as_str()),
            None => contains_run(
                tokens,
                &self.tokens.iter().map(String::as_str).collect::<Vec<_>>(),
            ),
        }
    }
}

/// What the reference [`TextQuery::matches`] reads of one field of a page.
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldText<'a> {
    /// Its tokens, in order.
    pub tokens: &'a [&'a str],
    /// Its runs of Chinese characters ([`tokens::han_runs`]).
    pub han: &'a str,
}

/// One condition of a [`TextQuery`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Clause {
    /// At least one of these terms occurs.
    AnyOf(Vec<Term>),
    /// This term does not occur.
    Not(Term),
}

/// A parsed text query: every clause holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TextQuery {
    /// The clauses, in the order written.
    pub clauses: Vec<Clause>,
}

impl TextQuery {
    /// Parses the query language (see the module documentation). Errors name
    /// the character position; a query left with nothing to look for (empty,
    /// or only stop words) and one over [`MAX_QUERY_TOKENS`] tokens are refused.
    pub fn parse(text: &str) -> Result<TextQuery> {
        if text.chars().count() > MAX_QUERY_CHARS {
            return Err(bad(
                MAX_QUERY_CHARS + 1,
                format!("a text query has at most {MAX_QUERY_CHARS} characters"),
            ));
        }
        let items = lex(text)?;
        let mut clauses: Vec<Clause> = Vec::new();
        let mut i = 0;
        let mut tokens = 0usize;
        let mut dropped_at: Option<usize> = None;
        while i < items.len() {
            let item = &items[i];
            match &item.kind {
                Kind::Or => return Err(bad(item.at, "OR needs a term on each side".into())),
                Kind::Term { negated, term } => {
                    if *negated {
                        if items.get(i + 1).is_some_and(|n| matches!(n.kind, Kind::Or)) {
                            return Err(bad(
                                item.at,
                                "an excluded term cannot be part of an OR".into(),
                            ));
                        }
                        tokens += term.size();
                        if term.is_empty() {
                            dropped_at.get_or_insert(item.at);
                        } else {
                            clauses.push(Clause::Not(term.clone()));
                        }
                        i += 1;
                        continue;
                    }
                    let mut group = vec![term.clone()];
                    let mut j = i + 1;
                    while items.get(j).is_some_and(|n| matches!(n.kind, Kind::Or)) {
                        let or_at = items[j].at;
                        match items.get(j + 1).map(|n| &n.kind) {
                            Some(Kind::Term {
                                negated: false,
                                term,
                            }) => group.push(term.clone()),
                            Some(Kind::Term { negated: true, .. }) => {
                                return Err(bad(
                                    items[j + 1].at,
                                    "an excluded term cannot be part of an OR".into(),
                                ))
                            }
                            _ => return Err(bad(or_at, "OR needs a term on each side".into())),
                        }
                        j += 2;
                    }
                    tokens += group.iter().map(Term::size).sum::<usize>();
                    // A stop word alone says nothing: `the OR war` is `war`. A group whose
                    // every term fell out is no condition at all.
                    let before = group.len();
                    group.retain(|t| !t.is_empty());
                    if group.len() < before {
                        dropped_at.get_or_insert(item.at);
                    }
                    if !group.is_empty() {
                        clauses.push(Clause::AnyOf(group));
                    }
                    i = j;
                }
            }
            if tokens > MAX_QUERY_TOKENS {
                return Err(bad(
                    item.at,
                    format!("a text query has at most {MAX_QUERY_TOKENS} words"),
                ));
            }
        }
        if !clauses.iter().any(|c| matches!(c, Clause::AnyOf(_))) {
            let at = dropped_at.unwrap_or(1);
            return Err(bad(
                at,
                if clauses.is_empty() && dropped_at.is_some() {
                    "only stop words (too common to search for)".into()
                } else if clauses.is_empty() {
                    "empty text query".into()
                } else {
                    "a text query needs a word to look for, not only exclusions".into()
                },
            ));
        }
        Ok(TextQuery { clauses })
    }

    /// Every page must hold all of these words or phrases (`--keyword`).
    pub fn all_of(words: &[String]) -> Result<Option<TextQuery>> {
        let mut clauses = Vec::new();
        for w in words {
            let t = phrase(w, TextField::Any);
            if !t.is_empty() {
                clauses.push(Clause::AnyOf(vec![t]));
            }
        }
        Ok((!clauses.is_empty()).then_some(TextQuery { clauses }))
    }

    /// The words and phrases of the query that a hit holds (not those of
    /// exclusions): what a snippet marks.
    pub fn wanted(&self) -> Vec<&Term> {
        self.clauses
            .iter()
            .flat_map(|c| match c {
                Clause::AnyOf(t) => t.iter().collect(),
                Clause::Not(_) => Vec::new(),
            })
            .collect()
    }

    /// Whether a text holds the query, given what is indexed of its headline and
    /// of its body: the reference the index is checked against.
    pub fn matches(&self, title: FieldText<'_>, body: FieldText<'_>) -> bool {
        let holds = |t: &Term| {
            t.occurs_in(title.tokens, title.han)
                || (t.field == TextField::Any && t.occurs_in(body.tokens, body.han))
        };
        self.clauses.iter().all(|c| match c {
            Clause::AnyOf(terms) => terms.iter().any(holds),
            Clause::Not(t) => !holds(t),
        })
    }
}

/// Whether `run` occurs in `tokens` as consecutive tokens.
fn contains_run(tokens: &[&str], run: &[&str]) -> bool {
    !run.is_empty()
        && tokens.len() >= run.len()
        && tokens.windows(run.len()).any(|w| {
            w.iter()
                .zip(run)
                .all(|(a, b)| indexed_forms(a).any(|f| f == *b))
        })
}

/// A word or phrase as a term: its tokens, and its characters when it is written in
/// Chinese characters only and has two or more.
fn phrase(text: &str, field: TextField) -> Term {
    let han = tokens::is_han_word(text)
        .then(|| {
            text.chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
        })
        .filter(|h| h.chars().count() >= 2);
    Term {
        field,
        tokens: tokens::tokenize(text),
        han,
    }
}

fn bad(position: usize, reason: String) -> Error {
    Error::BadText { position, reason }
}

struct Item {
    /// Character position (from 1) where the item starts.
    at: usize,
    kind: Kind,
}

enum Kind {
    Or,
    Term { negated: bool, term: Term },
}

/// Splits a query into terms and `OR`s.
fn lex(text: &str) -> Result<Vec<Item>> {
    let chars: Vec<char> = text.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let at = i + 1;
        let mut negated = false;
        if chars[i] == '-' {
            negated = true;
            i += 1;
            if i >= chars.len() || chars[i].is_whitespace() {
                return Err(bad(
                    at,
                    "'-' must stand right before the term it excludes".into(),
                ));
            }
        }
        let mut field = TextField::Any;
        let rest: String = chars[i..].iter().take(6).collect();
        if rest.eq_ignore_ascii_case("title:") {
            field = TextField::Title;
            i += 6;
            if i >= chars.len() || chars[i].is_whitespace() {
                return Err(bad(
                    at,
                    "title: must stand right before a word or a phrase".into(),
                ));
            }
        }
        let body: String;
        if chars[i] == '"' {
            let open = i + 1;
            let close = chars[open..]
                .iter()
                .position(|&c| c == '"')
                .ok_or_else(|| bad(open, "the quote is not closed".into()))?;
            body = chars[open..open + close].iter().collect();
            i = open + close + 1;
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '"' {
                i += 1;
            }
            body = chars[start..i].iter().collect();
            if !negated && field == TextField::Any && body == "OR" {
                items.push(Item { at, kind: Kind::Or });
                continue;
            }
        }
        items.push(Item {
            at,
            kind: Kind::Term {
                negated,
                term: phrase(&body, field),
            },
        });
    }
    Ok(items)
}

/// What a token of a text is indexed as, at its position: itself, and for an English
/// possessive (`trump's`, `trump’s`) also the word without its `'s` (what Elasticsearch's
/// English possessive stemmer keeps), so `trump` finds `Trump's`.
pub fn indexed_forms(token: &str) -> impl Iterator<Item = &str> {
    let stem = token
        .strip_suffix("'s")
        .or_else(|| token.strip_suffix("\u{2019}s"))
        .filter(|s| s.chars().count() > 1);
    std::iter::once(token).chain(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &Term) -> Vec<&str> {
        t.tokens.iter().map(String::as_str).collect()
    }

    #[test]
    fn words_phrases_or_and_exclusions() {
        let q = TextQuery::parse(r#"trade "trade war" OR tariffs -china title:Trump"#).unwrap();
        assert_eq!(q.clauses.len(), 4);
        let Clause::AnyOf(first) = &q.clauses[0] else {
            panic!("{q:?}")
        };
        assert_eq!(words(&first[0]), ["trade"]);
        let Clause::AnyOf(group) = &q.clauses[1] else {
            panic!("{q:?}")
        };
        assert_eq!(group.len(), 2);
        assert_eq!(words(&group[0]), ["trade", "war"]);
        assert_eq!(words(&group[1]), ["tariffs"]);
        assert!(matches!(&q.clauses[2], Clause::Not(t) if words(t) == ["china"]));
        assert!(
            matches!(&q.clauses[3], Clause::AnyOf(t) if t[0].field == TextField::Title && words(&t[0]) == ["trump"])
        );
    }

    #[test]
    fn chinese_words_are_segmented_like_pages() {
        let q = TextQuery::parse("中美贸易").unwrap();
        let Clause::AnyOf(t) = &q.clauses[0] else {
            panic!("{q:?}")
        };
        assert_eq!(t[0].tokens, tokens::tokenize("中美贸易"));
        assert_eq!(t[0].han.as_deref(), Some("中美贸易"));
        let q = TextQuery::parse(r#""中美 贸易" 华为p60 美"#).unwrap();
        let han: Vec<Option<&str>> = q.wanted().iter().map(|t| t.han.as_deref()).collect();
        assert_eq!(
            han,
            [Some("中美贸易"), None, None],
            "one character is a word"
        );
    }

    #[test]
    fn errors_name_the_position() {
        let err = |q: &str| match TextQuery::parse(q) {
            Err(Error::BadText { position, reason }) => (position, reason),
            other => panic!("{q:?}: {other:?}"),
        };
        assert_eq!(err(r#"war "trade"#).0, 5, "the opening quote");
        assert_eq!(err("OR war").0, 1);
        assert_eq!(err("war OR").0, 5);
        assert_eq!(err("war - peace").0, 5);
        assert_eq!(err("war OR -peace").0, 8);
        assert!(err("the of and").1.contains("stop words"));
        assert!(err("   ").1.contains("empty"));
        assert!(err("-war").1.contains("only exclusions"));
        let long = vec!["word"; MAX_QUERY_TOKENS + 1].join(" ");
        assert!(err(&long).1.contains("at most"));
        let huge = "x".repeat(MAX_QUERY_CHARS + 1);
        assert!(err(&huge).1.contains("characters"));
    }

    #[test]
    fn the_reference_matches_runs_of_tokens() {
        let body = |tokens| FieldText { tokens, han: "" };
        let none = FieldText::default();
        let q = TextQuery::parse(r#""trade war" -peace"#).unwrap();
        assert!(q.matches(none, body(&["the", "trade", "war", "began"])));
        assert!(!q.matches(none, body(&["trade", "and", "war"])));
        assert!(!q.matches(body(&["peace"]), body(&["trade", "war"])));
        let t = TextQuery::parse("title:war").unwrap();
        assert!(!t.matches(none, body(&["war"])));
        assert!(t.matches(body(&["war"]), none));
        let p = TextQuery::parse("trump").unwrap();
        assert!(p.matches(none, body(&["trump's"])));
        assert!(p.matches(none, body(&["trump\u{2019}s"])));
        assert!(!TextQuery::parse("trump's")
            .unwrap()
            .matches(none, body(&["trump"])));
    }

    #[test]
    fn the_reference_finds_chinese_terms_as_written() {
        let body = |han| FieldText { tokens: &[], han };
        let q = TextQuery::parse("比增 -外交").unwrap();
        assert!(q.matches(FieldText::default(), body("同比增长\n")));
        assert!(
            !q.matches(FieldText::default(), body("同比\n增长\n")),
            "not across runs"
        );
        assert!(!q.matches(FieldText::default(), body("同比增长\n外交部\n")));
        let stop = TextQuery::parse("我们").unwrap();
        assert!(
            stop.matches(FieldText::default(), body("我们的\n")),
            "searchable though a stop word"
        );
    }
}
