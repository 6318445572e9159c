//! A JSON Schema checker for the subset report.schema.json uses: type
//! (one or several), const, enum, required, properties,
//! additionalProperties: false, items, minItems, minimum, maximum and local
//! `$ref`s into `$defs`. Any other keyword is an error, so the schema
//! cannot lean on something this checker silently ignores.

use serde_json::Value;

const ANNOTATIONS: [&str; 5] = ["$schema", "$id", "title", "description", "$defs"];

/// Every violation of `schema` by `value`, as "path: problem" lines.
pub fn check(schema: &Value, value: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    walk(schema, schema, value, "$", &mut errs);
    errs
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => panic!("unknown type {other} in the schema"),
    }
}

fn walk(root: &Value, s: &Value, v: &Value, path: &str, errs: &mut Vec<String>) {
    let Some(obj) = s.as_object() else { panic!("schema at {path} is not an object") };
    if let Some(r) = obj.get("$ref") {
        let r = r.as_str().expect("$ref is a string");
        let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unsupported $ref {r}"));
        let target = root.get("$defs").and_then(|d| d.get(name)).unwrap_or_else(|| panic!("no $defs/{name}"));
        walk(root, target, v, path, errs);
    }
    for (k, rule) in obj {
        match k.as_str() {
            "$ref" | "properties" => {}
            k if ANNOTATIONS.contains(&k) => {}
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().map(|t| t.as_str().expect("type name")).collect(),
                    _ => panic!("bad type at {path}"),
                };
                if !types.iter().any(|t| type_ok(t, v)) {
                    errs.push(format!("{path}: {v} is not of type {types:?}"));
                    return;
                }
            }
            "const" => {
                if v != rule {
                    errs.push(format!("{path}: {v} is not {rule}"));
                }
            }
            "enum" => {
                if !rule.as_array().expect("enum array").contains(v) {
                    errs.push(format!("{path}: {v} not in {rule}"));
                }
            }
            "required" => {
                if let Some(o) = v.as_object() {
                    for name in rule.as_array().expect("required array") {
                        let name = name.as_str().expect("required name");
                        if !o.contains_key(name) {
                            errs.push(format!("{path}: missing {name}"));
                        }
                    }
                }
            }
            "additionalProperties" => {
                assert_eq!(rule, &Value::Bool(false), "only additionalProperties: false is supported");
                if let Some(o) = v.as_object() {
                    let props = obj.get("properties").and_then(Value::as_object);
                    for key in o.keys() {
                        if !props.is_some_and(|p| p.contains_key(key)) {
                            errs.push(format!("{path}: unexpected property {key}"));
                        }
                    }
                }
            }
            "items" => {
                if let Some(a) = v.as_array() {
                    for (i, item) in a.iter().enumerate() {
                        walk(root, rule, item, &format!("{path}[{i}]"), errs);
                    }
                }
            }
            "minItems" => {
                if let Some(a) = v.as_array() {
                    if (a.len() as u64) < rule.as_u64().expect("minItems") {
                        errs.push(format!("{path}: fewer than {rule} items"));
                    }
                }
            }
            "minimum" | "maximum" => {
                if let (Some(x), Some(lim)) = (v.as_f64(), rule.as_f64()) {
                    if (k == "minimum" && x < lim) || (k == "maximum" && x > lim) {
                        errs.push(format!("{path}: {x} breaks {k} {lim}"));
                    }
                }
            }
            other => panic!("schema keyword {other} at {path} is not supported by this checker"),
        }
    }
    if let (Some(props), Some(o)) = (obj.get("properties").and_then(Value::as_object), v.as_object()) {
        for (name, sub) in props {
            if let Some(x) = o.get(name) {
                walk(root, sub, x, &format!("{path}.{name}"), errs);
            }
        }
    }
}
