//! The error page a browser gets: one self-contained document (inline
//! style, no script, nothing fetched), every piece of text escaped.

use std::fmt::Write;

use super::{Place, Report};

/// The page's own Content-Security-Policy: its inline style, nothing else.
pub(crate) const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

const STYLE: &str = "\
body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1f2328;background:#f6f8fa}\
header{background:#b42318;color:#fff;padding:20px 28px}\
header p{margin:0;opacity:.85;font-family:ui-monospace,monospace}\
h1{margin:6px 0 0;font-size:21px;font-weight:600;white-space:pre-wrap;word-break:break-word}\
main{padding:8px 28px 28px}\
h2{font:600 14px ui-monospace,monospace;margin:22px 0 6px}\
pre{margin:0;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:8px 0;\
overflow-x:auto;font:13px/1.5 ui-monospace,monospace;tab-size:4}\
pre span{display:block;padding:0 14px 0 0}\
pre i{display:inline-block;min-width:3.5em;padding-right:12px;text-align:right;color:#8c959f;\
font-style:normal;user-select:none}\
pre .hit{background:#ffebe9;box-shadow:inset 4px 0 #cf222e}\
pre .hit i{color:#cf222e;font-weight:600}\
.none{color:#656d76;font-style:italic}\
.detail{padding:8px 14px;white-space:pre-wrap;word-break:break-word}\
footer{color:#656d76;font-size:13px;padding:0 28px 24px}";

/// The whole page for `report`.
pub(crate) fn page(report: &Report<'_>) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">");
    let _ = write!(
        out,
        "<title>500 · {}</title><style>{STYLE}</style></head><body>",
        escape(report.message)
    );
    let _ = write!(
        out,
        "<header><p>500 Internal Server Error · {} {}</p><h1>{}</h1>",
        escape(report.method),
        escape(report.path),
        escape(report.message)
    );
    if let Some(place) = report.primary() {
        let _ = write!(out, "<p>at {}</p>", escape(&place.at.to_string()));
    }
    out.push_str("</header><main>");
    // Innermost first: the template line before the handler line that
    // rendered it.
    for place in report.places.iter().rev() {
        source(&mut out, place);
    }
    out.push_str("<h2>Error</h2><pre class=\"detail\">");
    out.push_str(&escape(report.detail));
    out.push_str(
        "</pre></main><footer>Shown by <code>cove dev</code> only; the app served \
        without <code>dev</code> answers <code>Internal Server Error</code> and logs the error.\
        </footer></body></html>\n",
    );
    out
}

/// A place and its lines, the failing one marked.
fn source(out: &mut String, place: &Place) {
    let _ = write!(out, "<h2>{}</h2>", escape(&place.at.to_string()));
    let Some(lines) = &place.source else {
        out.push_str("<p class=\"none\">(source not available)</p>");
        return;
    };
    out.push_str("<pre>");
    for line in lines {
        let class = if line.number == place.at.line {
            " class=\"hit\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<span{class}><i>{}</i>{}</span>",
            line.number,
            escape(&line.text)
        );
    }
    out.push_str("</pre>");
}

/// `text` safe in HTML text and in quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::excerpt::Line;
    use super::*;
    use cove_core::location::Location;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert('x' & "y")</script>"#),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;"
        );
        assert_eq!(escape("plain é"), "plain é");
    }

    #[test]
    fn page_escapes_everything_and_marks_the_line() {
        let report = Report {
            method: "GET",
            path: "/<x>",
            detail: "app.lua:2: <b>boom</b>",
            message: "<b>boom</b>",
            places: vec![Place {
                at: Location {
                    file: "app.lua".into(),
                    line: 2,
                    column: None,
                },
                source: Some(vec![
                    Line {
                        number: 1,
                        text: "-- <i>".into(),
                    },
                    Line {
                        number: 2,
                        text: "error(\"<b>boom</b>\")".into(),
                    },
                ]),
            }],
        };
        let page = page(&report);
        assert!(!page.contains("<b>") && !page.contains("<x>") && !page.contains("-- <i>"));
        assert!(page.contains("GET /&lt;x&gt;"), "{page}");
        assert!(page.contains("<h1>&lt;b&gt;boom&lt;/b&gt;</h1>"), "{page}");
        assert!(page.contains("<p>at app.lua:2</p>"), "{page}");
        assert!(
            page.contains(
                "<span class=\"hit\"><i>2</i>error(&quot;&lt;b&gt;boom&lt;/b&gt;&quot;)</span>"
            ),
            "{page}"
        );
        assert!(page.contains("<span><i>1</i>-- &lt;i&gt;</span>"), "{page}");
        assert!(
            !page.contains("src=") && !page.contains("href="),
            "nothing fetched"
        );
    }
}
