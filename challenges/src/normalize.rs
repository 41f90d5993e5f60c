//! Answer normalization: Unicode NFKC, full case folding and whitespace trimming.
//!
//! Every text answer is compared after [`normalize_answer`], so `"ＡＢＣ"`, `" abc "` and
//! `"Abc"` are the same answer, full-width digits equal ASCII digits, and `"STRASSE"` equals
//! `"straße"`. Runs of inner whitespace collapse to one space, so `"18.6  uM"` equals
//! `"18.6 uM"`. Nothing else is forgiven: punctuation, digits and word order must match.

use unicode_normalization::UnicodeNormalization;

/// The canonical form of an answer: NFKC, case folded, NFKC again (folding can denormalize),
/// trimmed, inner whitespace runs collapsed to one ASCII space.
pub fn normalize_answer(text: &str) -> String {
    if text.is_ascii() {
        // NFKC leaves ASCII unchanged and full case folding of ASCII is lower-casing.
        return collapse(&text.to_ascii_lowercase());
    }
    let nfkc: String = text.nfkc().collect();
    let folded = caseless::default_case_fold_str(&nfkc);
    let renormalized: String = folded.nfkc().collect();
    collapse(&renormalized)
}

fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Whether `answer` equals any of `variants` after normalization. The variants are normalized
/// here too, so callers may pass them as written in the corpus.
pub fn matches_any<S: AsRef<str>>(variants: &[S], answer: &str) -> bool {
    let answer = normalize_answer(answer);
    !answer.is_empty()
        && variants
            .iter()
            .any(|v| normalize_answer(v.as_ref()) == answer)
}

/// NFKC followed by ASCII upper-casing and trimming: the form the lock families compare in.
pub fn normalize_upper(text: &str) -> String {
    if text.is_ascii() {
        return text.trim().to_ascii_uppercase();
    }
    let nfkc: String = text.nfkc().collect();
    nfkc.trim().to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_and_case_are_forgiven() {
        assert_eq!(normalize_answer("ＡＢＣ"), "abc");
        assert_eq!(normalize_answer("  Abc\t"), "abc");
        assert_eq!(normalize_answer("１８．６"), "18.6");
        assert!(matches_any(&["abc"], "ＡＢＣ"));
        assert!(matches_any(&["PFK1"], " pfk1 "));
        assert!(matches_any(&["18.6 uM"], "18.6   UM"));
    }

    #[test]
    fn full_case_folding_is_applied() {
        assert_eq!(normalize_answer("STRASSE"), normalize_answer("straße"));
        assert!(matches_any(&["LDH-γ"], "ldh-Γ"));
        assert!(matches_any(&["ΣΊΣΥΦΟΣ"], "σίσυφος"));
    }

    #[test]
    fn compatibility_forms_fold() {
        // The ligature "ﬁ" and the micro sign both have compatibility decompositions.
        assert!(matches_any(&["fine"], "ﬁne"));
        assert!(matches_any(&["18.6 μM"], "18.6 µM"));
        assert_eq!(normalize_upper(" ｋｉｔｅ-ａｐｐｌｅ "), "KITE-APPLE");
    }

    #[test]
    fn the_ascii_fast_path_agrees_with_the_full_path() {
        for text in ["  PFK1 ", "a\tB  c", "18.6 uM", "", "MiXeD-Case_42"] {
            let full: String = {
                let nfkc: String = text.nfkc().collect();
                let folded = caseless::default_case_fold_str(&nfkc);
                folded.split_whitespace().collect::<Vec<_>>().join(" ")
            };
            assert_eq!(normalize_answer(text), full, "{text}");
        }
    }

    #[test]
    fn empty_and_different_answers_do_not_match() {
        assert!(!matches_any(&["abc"], "   "));
        assert!(!matches_any(&[""], ""));
        assert!(!matches_any(&["abc"], "abd"));
        assert!(!matches_any(&["a b"], "ab"));
    }
}
