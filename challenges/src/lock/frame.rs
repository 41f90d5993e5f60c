//! The lines around a lock prompt's rule, shared by the generators and the baseline solver
//! that reads them back: each family's intro lines and the multi-pass step labels.

/// The first line of an `obfuscated_text_lock` prompt.
pub(crate) const OBFUSCATED_INTROS: &[&str] = &[
    "Recover the instruction hidden in the noise below and apply it to the list.",
    "The note below is garbled; work out what it asks and do it.",
    "Decode the scrambled request and answer it exactly.",
    "Some of this text is noise. Find the real rule and apply it.",
];

/// The first line of a `multi_pass_lock` prompt.
pub(crate) const MULTI_PASS_INTROS: &[&str] = &[
    "The steps below are shuffled. Put them back in numbered order, apply them to the list, and answer.",
    "Follow the numbered procedure (its steps are listed out of order) on the word list.",
    "A procedure in several passes, jumbled. Run it in the order its labels give.",
];

const ROMAN: &[&str] = &["i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix"];
const ORDINAL: &[&str] = &[
    "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth",
];

/// Label styles (`Step 3:`, `(iii)`, `Third:`); a prompt uses one for all its steps.
pub(crate) const LABEL_STYLES: u64 = 3;

/// Step `n`'s label (from 0) in `style`.
pub(crate) fn label(style: u64, n: usize) -> String {
    match style {
        0 => format!("Step {}:", n + 1),
        1 => format!("({})", ROMAN.get(n).copied().unwrap_or("x")),
        _ => format!("{}:", ORDINAL.get(n).copied().unwrap_or("Last")),
    }
}
