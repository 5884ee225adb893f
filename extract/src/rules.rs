//! The shape every attribute's rule table shares: a [`Rule`] is a named source
//! of a value, [`decide`] takes the first that gives one, and a [`Decision`]
//! records which rule decided an attribute.

/// The rule that decided one attribute of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `title`, `published`, `media`, `outlet` or `author`.
    pub attribute: &'static str,
    /// The rule's name, then the corrections made to its value; `none` when
    /// no rule gave a value.
    pub rule: String,
}

impl Decision {
    pub(crate) fn new(attribute: &'static str, rule: Option<String>) -> Self {
        Decision {
            attribute,
            rule: rule.unwrap_or_else(|| "none".to_string()),
        }
    }
}

/// One source of an attribute's value, by name: the rule tables of
/// [`crate::attributes`] list them in order, and [`decide`] takes the first that gives a
/// value.
pub(crate) type Rule<'a> = (&'static str, Box<dyn Fn() -> Option<String> + 'a>);

/// The first rule that gives a value, with the rule's name.
pub(crate) fn decide(rules: &[Rule<'_>]) -> Option<(String, &'static str)> {
    rules
        .iter()
        .find_map(|(name, rule)| rule().map(|v| (v, *name)))
}
