//! One runtime's test results, recorded as the cases run: per file, per
//! case its outcome, duration and failed requests. Hull's text (§9.3) is one
//! rendering, printed as each result comes in so a long suite shows its
//! progress; `cove test --json` renders the same records at the end.

use std::fmt;
use std::time::{Duration, Instant};

use super::Trail;

/// A request of a failing case whose scripts raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRequest {
    pub method: String,
    /// With its `?query`, as the test asked for it.
    pub path: String,
    pub status: u16,
    /// What the scripts raised, first to last (`app.lua:7: boom`).
    pub errors: Vec<String>,
}

/// `GET /x → 500, handler error: app.lua:7: boom`.
impl fmt::Display for FailedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} → {}, handler error: {}",
            self.method,
            self.path,
            self.status,
            self.errors.join("\n")
        )
    }
}

/// Why a case (or a file's loading) failed.
#[derive(Debug, Clone)]
pub struct Failure {
    /// As the runtime reported it: `tests/test_app.lua:12: test.eq failed…`.
    pub error: String,
    /// The last few of the case's failed requests…
    pub requests: Vec<FailedRequest>,
    /// …and how many before them are left out.
    pub earlier_requests: usize,
}

#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub duration: Duration,
    /// `None` when the case passed.
    pub failure: Option<Failure>,
}

#[derive(Debug, Clone)]
pub struct FileResult {
    /// Relative to the app directory: `tests/test_app.lua`.
    pub name: String,
    /// The file did not load; it then has no cases and counts as one failure.
    pub load_error: Option<Failure>,
    pub cases: Vec<CaseResult>,
}

/// One runtime's results.
#[derive(Debug, Default)]
pub struct Suite {
    pub files: Vec<FileResult>,
    /// The running case's failed requests, recorded with it if it fails.
    pub trail: Trail,
    /// Print Hull's text as results come in.
    print: bool,
}

impl Suite {
    /// A suite that prints Hull's text as it goes (`cove test`).
    pub fn printing() -> Suite {
        Suite {
            print: true,
            ..Suite::default()
        }
    }

    /// A test file starts.
    pub fn file(&mut self, name: &str) {
        self.trail.clear();
        self.files.push(FileResult {
            name: name.to_string(),
            load_error: None,
            cases: Vec::new(),
        });
        self.show(&format!("\n--- {name} ---\n"));
    }

    /// Run a case, timing it.
    pub fn timed(&mut self, name: &str, run: impl FnOnce() -> Result<(), String>) {
        let started = Instant::now();
        let outcome = run();
        self.case(name, outcome, started.elapsed());
    }

    /// A case's result, with the requests whose handler raised if it failed.
    pub fn case(&mut self, name: &str, outcome: Result<(), String>, duration: Duration) {
        let failure = self.failure(outcome.err());
        let case = CaseResult {
            name: name.to_string(),
            duration,
            failure,
        };
        self.show(&case.text());
        self.current().cases.push(case);
    }

    /// The current file failed to load (or the test API could not be set
    /// up, before any file): one failed test.
    pub fn load_error(&mut self, error: &str) {
        let failure = self.failure(Some(error.to_string()));
        let text = failure.as_ref().map(load_error_text).unwrap_or_default();
        self.show(&text);
        self.current().load_error = failure;
    }

    pub fn passed(&self) -> usize {
        self.cases().filter(|c| c.failure.is_none()).count()
    }

    /// Failed cases plus files that failed to load.
    pub fn failed(&self) -> usize {
        let cases = self.cases().filter(|c| c.failure.is_some()).count();
        cases + self.files.iter().filter(|f| f.load_error.is_some()).count()
    }

    /// `N/M tests passed[, K failed]`.
    pub fn summary(&self) -> String {
        let (passed, failed) = (self.passed(), self.failed());
        let total = passed + failed;
        if failed == 0 {
            format!("{passed}/{total} tests passed")
        } else {
            format!("{passed}/{total} tests passed, {failed} failed")
        }
    }

    fn cases(&self) -> impl Iterator<Item = &CaseResult> {
        self.files.iter().flat_map(|f| &f.cases)
    }

    /// The file being run; an unnamed one when setup failed before any.
    fn current(&mut self) -> &mut FileResult {
        if self.files.is_empty() {
            self.files.push(FileResult {
                name: String::new(),
                load_error: None,
                cases: Vec::new(),
            });
        }
        let last = self.files.len() - 1;
        &mut self.files[last]
    }

    /// Takes the trail either way: a passing case's requests are forgotten.
    fn failure(&self, error: Option<String>) -> Option<Failure> {
        let (requests, earlier_requests) = self.trail.take();
        error.map(|error| Failure {
            error,
            requests,
            earlier_requests,
        })
    }

    fn show(&self, text: &str) {
        if self.print {
            print!("{text}");
        }
    }
}

impl CaseResult {
    /// `  PASS  name`, or `  FAIL  name` and the failure indented.
    pub fn text(&self) -> String {
        match &self.failure {
            None => format!("  PASS  {}\n", self.name),
            Some(failure) => format!("  FAIL  {}\n{}", self.name, failure.indented()),
        }
    }
}

fn load_error_text(failure: &Failure) -> String {
    format!("  ERROR  the file failed to load\n{}", failure.indented())
}

impl Failure {
    /// The error's lines indented by four, then the failed requests (their
    /// continuation lines by six).
    fn indented(&self) -> String {
        let mut out = String::new();
        let mut indent = |text: &str, more: &str| {
            for (i, line) in text.lines().enumerate() {
                out.push_str(if i == 0 { "    " } else { more });
                out.push_str(line);
                out.push('\n');
            }
        };
        indent(&self.error, "    ");
        if self.earlier_requests > 0 {
            let more = self.earlier_requests;
            indent(&format!("… {more} earlier failed request(s)"), "      ");
        }
        for request in &self.requests {
            indent(&request.to_string(), "      ");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raised(path: &str, errors: &[&str]) -> FailedRequest {
        FailedRequest {
            method: "GET".into(),
            path: path.into(),
            status: 500,
            errors: errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    /// The text the case added.
    fn case_text(s: &mut Suite, name: &str, outcome: Result<(), String>) -> String {
        s.case(name, outcome, Duration::ZERO);
        s.files[0].cases.last().expect("a case").text()
    }

    #[test]
    fn a_failing_case_names_the_requests_whose_handler_raised() {
        let mut s = Suite::default();
        s.file("t.lua");
        let note = |s: &Suite, r: FailedRequest| s.trail.0.borrow_mut().push(r);
        note(&s, raised("/x", &["app.lua:7: boom"]));
        // A passing case prints nothing extra, and its requests are forgotten.
        assert_eq!(case_text(&mut s, "passes", Ok(())), "  PASS  passes\n");
        note(&s, raised("/x", &["app.lua:7: boom", "more"]));
        assert_eq!(
            case_text(&mut s, "fails", Err("t.lua:2: test.eq failed\n  expected: 1".into())),
            "  FAIL  fails\n    t.lua:2: test.eq failed\n      expected: 1\n    GET /x → 500, handler error: app.lua:7: boom\n      more\n"
        );
        for i in 0..5 {
            note(&s, raised(&format!("/{i}"), &["e"]));
        }
        let text = case_text(&mut s, "many", Err("no".into()));
        assert_eq!(
            text,
            "  FAIL  many\n    no\n    … 2 earlier failed request(s)\n    GET /2 → 500, handler error: e\n    GET /3 → 500, handler error: e\n    GET /4 → 500, handler error: e\n"
        );
        let many = s.files[0].cases[2].failure.as_ref().expect("failed");
        assert_eq!((many.requests.len(), many.earlier_requests), (3, 2));
        assert_eq!(
            case_text(&mut s, "clean", Err("no".into())),
            "  FAIL  clean\n    no\n"
        );
        assert_eq!(s.summary(), "1/4 tests passed, 3 failed");
    }

    #[test]
    fn results_are_recorded_per_file_and_a_load_error_counts_as_a_failure() {
        let mut s = Suite::default();
        s.file("tests/test_a.lua");
        s.timed("a", || Ok(()));
        s.case("b", Err("x".into()), Duration::from_millis(2));
        assert_eq!(s.summary(), "1/2 tests passed, 1 failed");
        s.file("tests/test_b.lua");
        s.load_error("tests/test_b.lua:3: syntax");
        assert_eq!((s.passed(), s.failed()), (1, 2));
        let names: Vec<&str> = s.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["tests/test_a.lua", "tests/test_b.lua"]);
        assert_eq!(s.files[0].cases[1].duration, Duration::from_millis(2));
        assert!(s.files[1].cases.is_empty());
        let loaded = s.files[1].load_error.as_ref().expect("load error");
        assert_eq!(
            load_error_text(loaded),
            "  ERROR  the file failed to load\n    tests/test_b.lua:3: syntax\n"
        );
    }

    #[test]
    fn a_setup_failure_before_any_file_is_recorded_unnamed() {
        let mut s = Suite::default();
        s.load_error("cannot install test");
        assert_eq!(s.files[0].name, "");
        assert_eq!(s.summary(), "0/1 tests passed, 1 failed");
    }
}
