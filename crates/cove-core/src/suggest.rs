//! "Did you mean …?" for names a user mistyped: modules, commands.

/// The candidate most like `name`, if any is close enough to be a likely typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        // 0.8 catches a dropped, added or swapped letter in names this short
        // without offering unrelated ones.
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// What to append to "no such <thing>: <name>": `; did you mean x? (<label>: a, b, …)`,
/// the suggestion only when one is close, the list always.
pub fn hint<'a>(name: &str, known: impl IntoIterator<Item = &'a str>, label: &str) -> String {
    let mut known: Vec<&str> = known.into_iter().collect();
    known.sort_unstable();
    known.dedup();
    let guess = match closest(name, known.iter().copied()) {
        Some(c) => format!("; did you mean {c}?"),
        None => String::new(),
    };
    format!("{guess} ({label}: {})", known.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULES: [&str; 4] = ["hull:time", "hull:app", "hull.validate", "hull.cookie"];

    #[test]
    fn suggests_a_near_name_only() {
        assert_eq!(closest("hull:times", MODULES), Some("hull:time"));
        assert_eq!(closest("hull.validator", MODULES), Some("hull.validate"));
        assert_eq!(closest("zzz", MODULES), None);
    }

    #[test]
    fn lists_what_is_known() {
        assert_eq!(
            hint("hull:apps", ["hull:db", "hull:app", "hull:app"], "modules"),
            "; did you mean hull:app? (modules: hull:app, hull:db)"
        );
        assert_eq!(hint("qqq", ["test"], "commands"), " (commands: test)");
    }
}
