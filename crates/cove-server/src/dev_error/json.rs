//! The error as JSON, for API clients:
//! `{"error": {"message", "file", "line", "column", "source", "detail"}}`.

use serde_json::{json, Value};

use super::Report;

/// The body for `report`. `file`, `line` and `column` are null when the
/// error names no place; `source` is empty when its file cannot be shown.
pub(crate) fn body(report: &Report<'_>) -> Vec<u8> {
    let place = report.primary();
    let source: Vec<Value> = place
        .and_then(|p| p.source.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|l| json!({ "line": l.number, "text": l.text }))
        .collect();
    let doc = json!({
        "error": {
            "message": report.message,
            "file": place.map(|p| &p.at.file),
            "line": place.map(|p| p.at.line),
            "column": place.and_then(|p| p.at.column),
            "source": source,
            "detail": report.detail,
            "method": report.method,
            "path": report.path,
        }
    });
    let mut out = doc.to_string().into_bytes();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::super::excerpt::Line;
    use super::super::Place;
    use super::*;
    use cove_core::location::Location;

    #[test]
    fn names_the_innermost_place_with_its_lines() {
        let at = |file: &str, line, column| Location {
            file: file.into(),
            line,
            column,
        };
        let report = Report {
            method: "POST",
            path: "/x",
            detail: "app.js:8: template.render: templates/p.html:2:6: bad \"op\"",
            message: "bad \"op\"",
            places: vec![
                Place {
                    at: at("app.js", 8, None),
                    source: None,
                },
                Place {
                    at: at("templates/p.html", 2, Some(6)),
                    source: Some(vec![Line {
                        number: 2,
                        text: "{{ x < \"s\" }}".into(),
                    }]),
                },
            ],
        };
        let v: Value = serde_json::from_slice(&body(&report)).unwrap();
        assert_eq!(
            v,
            json!({"error": {
                "message": "bad \"op\"",
                "file": "templates/p.html", "line": 2, "column": 6,
                "source": [{"line": 2, "text": "{{ x < \"s\" }}"}],
                "detail": "app.js:8: template.render: templates/p.html:2:6: bad \"op\"",
                "method": "POST", "path": "/x",
            }})
        );
    }

    #[test]
    fn an_error_without_a_place_has_null_fields() {
        let report = Report {
            method: "GET",
            path: "/",
            detail: "table: 0x1",
            message: "table: 0x1",
            places: vec![],
        };
        let v: Value = serde_json::from_slice(&body(&report)).unwrap();
        assert_eq!(v["error"]["file"], Value::Null);
        assert_eq!(v["error"]["line"], Value::Null);
        assert_eq!(v["error"]["source"], json!([]));
        assert_eq!(v["error"]["message"], "table: 0x1");
    }
}
