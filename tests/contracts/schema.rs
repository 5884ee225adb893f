//! Answers checked against the schemas of the OpenAPI document, both ways: a field
//! an answer has is one its schema lists (with the type, format and values it
//! allows), a field the schema requires is there, and (over all the answers
//! checked) every field a schema lists was seen in some answer. So the schemas
//! derived from the handlers' types cannot drift from what the server sends.
//!
//! The JSON Schema of the document as `utoipa` writes it: `$ref`, `allOf`,
//! `oneOf`, `type` (a name or a list of names), `enum`, `format: date-time`,
//! `minimum`, `properties`, `required`, `additionalProperties`, `items`.

use std::collections::BTreeSet;

use serde_json::Value;

pub struct Checker<'a> {
    doc: &'a Value,
    /// `Schema.field` (`Schema.field.inner` for an inline object) of every field seen.
    pub seen: BTreeSet<String>,
}

/// The component a `$ref` names, and its name.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> (Option<&'a str>, &'a Value) {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.trim_start_matches("#/components/schemas/");
            (Some(name), &doc["components"]["schemas"][name])
        }
        None => (None, schema),
    }
}

fn kind_is(kind: &str, value: &Value) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

impl<'a> Checker<'a> {
    pub fn new(doc: &'a Value) -> Checker<'a> {
        Checker {
            doc,
            seen: BTreeSet::new(),
        }
    }

    /// The properties of an object schema (its `allOf` parts' merged), each with the
    /// name it is counted under.
    fn properties(&self, owner: &str, schema: &'a Value) -> Vec<(String, &'a Value)> {
        let mut out = Vec::new();
        for part in schema["allOf"].as_array().into_iter().flatten() {
            let (name, part) = resolve(self.doc, part);
            out.extend(self.properties(name.unwrap_or(owner), part));
        }
        for (field, s) in schema["properties"].as_object().into_iter().flatten() {
            out.push((format!("{owner}.{field}"), s));
        }
        out
    }

    fn required(&self, schema: &'a Value) -> Vec<&'a str> {
        let mut out: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for part in schema["allOf"].as_array().into_iter().flatten() {
            out.extend(self.required(resolve(self.doc, part).1));
        }
        out
    }

    /// Adds to `errors` how `value` (at `at`) differs from `schema`; `owner` names the
    /// schema its fields are counted under.
    pub fn check(
        &mut self,
        owner: &str,
        schema: &'a Value,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let (name, schema) = resolve(self.doc, schema);
        let owner = name.unwrap_or(owner);
        if let Some(branches) = schema["oneOf"].as_array() {
            let before = self.seen.clone();
            let fits = branches.iter().any(|b| {
                let mut errs = Vec::new();
                self.check(owner, b, value, at, &mut errs);
                errs.is_empty()
            });
            if !fits {
                self.seen = before;
                errors.push(format!("{at}: {value} fits no branch of {schema}"));
            }
            return;
        }
        let kinds: Vec<&str> = match &schema["type"] {
            Value::String(k) => vec![k.as_str()],
            Value::Array(ks) => ks.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !kinds.is_empty() && !kinds.iter().any(|k| kind_is(k, value)) {
            errors.push(format!("{at}: {value} is not {kinds:?}"));
            return;
        }
        if let Some(values) = schema["enum"].as_array() {
            if !values.contains(value) {
                errors.push(format!("{at}: {value} is not one of {values:?}"));
            }
        }
        if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), value.as_f64()) {
            if n < min {
                errors.push(format!("{at}: {n} is below {min}"));
            }
        }
        if schema["format"] == "date-time" {
            if let Some(t) = value.as_str() {
                if chrono::DateTime::parse_from_rfc3339(t).is_err() {
                    errors.push(format!("{at}: {t:?} is not an RFC 3339 date-time"));
                }
            }
        }
        match value {
            Value::Array(items) if schema["items"].is_object() => {
                for (i, item) in items.iter().enumerate() {
                    self.check(owner, &schema["items"], item, &format!("{at}[{i}]"), errors);
                }
            }
            Value::Object(fields) => self.check_object(owner, schema, fields, at, errors),
            _ => {}
        }
    }

    fn check_object(
        &mut self,
        owner: &str,
        schema: &'a Value,
        fields: &serde_json::Map<String, Value>,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let properties = self.properties(owner, schema);
        if let Some(extra) = schema.get("additionalProperties").filter(|s| s.is_object()) {
            for (k, v) in fields {
                self.check(owner, extra, v, &format!("{at}.{k}"), errors);
            }
            return;
        }
        if properties.is_empty() {
            // A free-form object.
            return;
        }
        for (k, v) in fields {
            let Some((counted, s)) = properties
                .iter()
                .find(|(p, _)| p.rsplit_once('.').is_some_and(|(_, f)| f == k))
            else {
                errors.push(format!("{at}.{k}: the schema ({owner}) has no such field"));
                continue;
            };
            self.seen.insert(counted.clone());
            self.check(counted, s, v, &format!("{at}.{k}"), errors);
        }
        for r in self.required(schema) {
            if !fields.contains_key(r) {
                errors.push(format!("{at}: the required field {r} ({owner}) is missing"));
            }
        }
    }

    /// Every field a schema reachable from `schema` lists, named as [`Checker::seen`]
    /// names them.
    pub fn declared(&self, owner: &str, schema: &'a Value, out: &mut BTreeSet<String>) {
        let (name, schema) = resolve(self.doc, schema);
        let owner = name.unwrap_or(owner);
        for key in ["oneOf", "allOf"] {
            for b in schema[key].as_array().into_iter().flatten() {
                if key == "oneOf" || b.get("$ref").is_some() {
                    self.declared(owner, b, out);
                }
            }
        }
        for (counted, s) in self.properties(owner, schema) {
            if out.insert(counted.clone()) {
                self.declared(&counted, s, out);
            }
        }
        for key in ["items", "additionalProperties"] {
            if schema[key].is_object() {
                self.declared(owner, &schema[key], out);
            }
        }
    }
}
