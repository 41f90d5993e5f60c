//! Sentence patterns with `{a}`, `{b}` and `{k}` holes: filled by the generators, matched by
//! the baseline parser, so both read from the same phrase tables.

/// What a matched pattern captured (empty where the pattern has no such hole).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Captures<'t> {
    pub a: &'t str,
    pub b: &'t str,
    pub k: &'t str,
}

/// `pattern` with its holes filled.
pub(crate) fn fill(pattern: &str, a: &str, b: &str, k: &str) -> String {
    pattern
        .replace("{a}", a)
        .replace("{b}", b)
        .replace("{k}", k)
}

/// Splits a pattern into literal text and holes (`Err(name)`).
fn tokens(pattern: &str) -> Vec<Result<&str, char>> {
    let mut out = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let hole = rest.as_bytes().get(open + 1).copied();
        if rest.as_bytes().get(open + 2) == Some(&b'}')
            && let Some(name @ (b'a' | b'b' | b'k')) = hole
        {
            if open > 0 {
                out.push(Ok(&rest[..open]));
            }
            out.push(Err(char::from(name)));
            rest = &rest[open + 3..];
        } else {
            out.push(Ok(&rest[..=open]));
            rest = &rest[open + 1..];
        }
    }
    if !rest.is_empty() {
        out.push(Ok(rest));
    }
    out
}

/// Matches the whole of `text` against `pattern`; each hole takes the shortest non-empty text
/// up to the next literal.
pub(crate) fn capture<'t>(pattern: &str, text: &'t str) -> Option<Captures<'t>> {
    let tokens = tokens(pattern);
    let mut caps = Captures::default();
    let mut pos = 0;
    for (i, token) in tokens.iter().enumerate() {
        match *token {
            Ok(literal) => {
                if !text[pos..].starts_with(literal) {
                    return None;
                }
                pos += literal.len();
            }
            Err(name) => {
                let end = match tokens.get(i + 1) {
                    Some(Ok(next)) => pos + 1 + text.get(pos + 1..)?.find(next)?,
                    _ => text.len(),
                };
                let value = text.get(pos..end)?;
                if value.is_empty() {
                    return None;
                }
                match name {
                    'a' => caps.a = value,
                    'b' => caps.b = value,
                    _ => caps.k = value,
                }
                pos = end;
            }
        }
    }
    (pos == text.len()).then_some(caps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_patterns_capture_their_values_back() {
        let p = "{b} sits {k} seats right of {a}.";
        let s = fill(p, "Ana", "Ben", "2");
        assert_eq!(s, "Ben sits 2 seats right of Ana.");
        let c = capture(p, &s).unwrap();
        assert_eq!((c.a, c.b, c.k), ("Ana", "Ben", "2"));
        assert!(capture(p, "Ben sits two seats left of Ana.").is_none());
        assert!(capture("{a} is taller than {b}.", "Ana is taller than Ben. Extra").is_none());
        assert_eq!(
            capture("Today is {a}.", "Today is Friday.").unwrap().a,
            "Friday"
        );
        assert!(capture("{a}", "").is_none());
        assert!(capture("{a} {", "x {").is_some());
    }
}
