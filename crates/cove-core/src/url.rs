//! URLs as they may be shown: in logs and error messages a database's or a
//! store's URL keeps its user, host and path, never its password.

/// `url` without its password (and its query, which may hold one:
/// `?password=…`), for messages.
pub fn redact_url(url: &str) -> String {
    let url = url.split('?').next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = match authority.rsplit_once('@') {
        None => authority.to_string(),
        Some((user, host)) => match user.split_once(':').map_or(user, |(name, _)| name) {
            "" => host.to_string(),
            name => format!("{name}@{host}"),
        },
    };
    format!("{scheme}://{host}{path}")
}

#[cfg(test)]
mod tests {
    use super::redact_url as redact;

    #[test]
    fn urls_are_shown_without_passwords() {
        assert_eq!(redact("redis://:pw@h:6379/0"), "redis://h:6379/0");
        assert_eq!(redact("redis://user:pw@h:6379/0"), "redis://user@h:6379/0");
        assert_eq!(
            redact("redis://h:6379/0?protocol=resp2"),
            "redis://h:6379/0"
        );
        assert_eq!(redact("redis://h"), "redis://h");
        assert_eq!(redact("redis://u:p@ss@h/1"), "redis://u@h/1");
        assert_eq!(
            redact("redis+unix:///run/redis.sock?pass=pw"),
            "redis+unix:///run/redis.sock"
        );
        assert_eq!(
            redact("postgres://app:s3cret@db.internal:5432/app"),
            "postgres://app@db.internal:5432/app"
        );
        assert_eq!(
            redact("postgres://app@db/app?password=s3cret"),
            "postgres://app@db/app"
        );
    }
}
