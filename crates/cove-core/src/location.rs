//! The places a script error names. Both runtimes report an error as one
//! line, `file:line: message`, and an error that passed through a template
//! names the template's place too (`app.lua:7: template.render:
//! templates/p.html:2:6: …`). This is the one place that reads them back.

/// A place in an app file: `app.lua:12`, `templates/p.html:2:6`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// As the error names it: relative to the app directory.
    pub file: String,
    /// 1-based.
    pub line: usize,
    pub column: Option<usize>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(col) = self.column {
            write!(f, ":{col}")?;
        }
        Ok(())
    }
}

/// An error message taken apart.
#[derive(Debug, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Outermost first: the handler's line, then the template's.
    pub locations: Vec<Location>,
    /// What follows the last place (`TypeError: x is not a function`); the
    /// whole text when it names none.
    pub message: &'a str,
}

/// Read the places off the front of `text`. They come first, separated by
/// `: `, possibly with a function name between them (`template.render`);
/// the first segment that is neither (it has a space in it) ends them.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut locations = Vec::new();
    let mut message = text;
    let mut rest = text;
    while let Some((head, tail)) = rest.split_once(": ") {
        if let Some(loc) = location(head) {
            locations.push(loc);
            message = tail;
        } else if head.is_empty() || head.contains(char::is_whitespace) {
            break;
        }
        rest = tail;
    }
    Parsed { locations, message }
}

/// `file:line` or `file:line:column`; the file has no whitespace.
fn location(head: &str) -> Option<Location> {
    let (before, last) = head.rsplit_once(':')?;
    let last = number(last)?;
    let (file, line, column) = match before.rsplit_once(':') {
        Some((file, line)) if number(line).is_some() => (file, number(line)?, Some(last)),
        _ => (before, last, None),
    };
    if file.is_empty() || file.contains(char::is_whitespace) {
        return None;
    }
    Some(Location {
        file: file.to_string(),
        line,
        column,
    })
}

fn number(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: usize, column: Option<usize>) -> Location {
        Location {
            file: file.into(),
            line,
            column,
        }
    }

    #[test]
    fn reads_the_leading_place() {
        let p = parse("app.lua:4: boom <b>");
        assert_eq!(p.locations, vec![at("app.lua", 4, None)]);
        assert_eq!(p.message, "boom <b>");
        let p = parse("lib/x.js:2: TypeError: in lib: deep");
        assert_eq!(p.locations, vec![at("lib/x.js", 2, None)]);
        assert_eq!(p.message, "TypeError: in lib: deep");
    }

    #[test]
    fn reads_a_template_place_behind_the_handler_line() {
        let p = parse(
            "app.js:8: template.render: templates/p.html:2:6: cannot compare: a number < a string",
        );
        assert_eq!(
            p.locations,
            vec![at("app.js", 8, None), at("templates/p.html", 2, Some(6))]
        );
        assert_eq!(p.message, "cannot compare: a number < a string");
        assert_eq!(p.locations[1].to_string(), "templates/p.html:2:6");
    }

    #[test]
    fn stops_at_the_message() {
        // "template not found" has a space: what follows is the message,
        // even where it looks like a place.
        let p = parse("app.lua:7: template.render: template not found: x.html: a.lua:3: y");
        assert_eq!(p.locations, vec![at("app.lua", 7, None)]);
        assert_eq!(
            p.message,
            "template.render: template not found: x.html: a.lua:3: y"
        );
    }

    #[test]
    fn a_message_without_a_place_is_kept_whole() {
        for text in [
            "table: 0x200004d1f80",
            "uncaught exception: [object Object]",
            "took 12:30: too long",
            "",
            "a:b: c",
            ":3: c",
        ] {
            let p = parse(text);
            assert_eq!(p.locations, vec![], "{text}");
            assert_eq!(p.message, text);
        }
    }
}
