//! What app code can reach: no io/os/load, require confined to the app dir.

use serde_json::json;

use crate::util::Server;

fn server() -> Server {
    Server::fixture("sandbox", &[])
}

#[test]
fn unsafe_globals_are_nil() {
    let v = server().get("/globals").json();
    assert_eq!(
        v,
        json!({
            "io": "nil", "os": "nil", "load": "nil", "dofile": "nil",
            "loadfile": "nil", "debug": "nil", "package": "nil",
            "string_dump": "nil", "require": "function",
        })
    );
}

#[test]
fn require_loads_app_modules_relative_to_the_requirer() {
    assert_eq!(server().get("/util").json(), json!({"shout": "HI!"}));
}

#[test]
fn require_cannot_leave_the_app_dir() {
    let v = server().get("/outside").json();
    assert_eq!(v["ok"], false, "{v}");
    assert!(!v["err"].as_str().unwrap().contains("escaped"), "{v}");
}

#[test]
fn require_json_returns_decoded_data() {
    assert_eq!(
        server().get("/data").json(),
        json!({"name": "cove", "numbers": [1, 2, 3], "nested": {"ok": true}})
    );
}
