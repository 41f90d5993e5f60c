//! The baseline solver of the lock families (`Family::solve` of `obfuscated_text_lock` and
//! `multi_pass_lock`): the strongest script we can write with the source in hand, because the
//! attacker has it too. It undoes each noise transform exactly (`denoise`), recognises every
//! statement by inverting the generator's own phrase tables (`invert`), reads the step labels
//! with the generator's own label function, and applies the rule with the generator's own
//! [`super::Rule::answer`]. No guessing is involved: its success rate, measured in the tests
//! below and by `hco bench families` / `hco bench attack`, is the family's honest ε_auto.
//!
//! Measured (200 challenges per difficulty from fixed seeds, first try): 100 % at every noise
//! level of `obfuscated_text_lock` (1–3) and every pass count of `multi_pass_lock` (1–4). Both
//! families are labelled baselines (`Family::script_solvable`) and never count as proof of the
//! agent class on their own.

use super::frame::{MULTI_PASS_INTROS, OBFUSCATED_INTROS};
use super::invert;

/// Answers a lock prompt of either family (told apart by the generator's intro lines); `None`
/// when the text is not a prompt the generators write.
pub(crate) fn solve(text: &str) -> Option<String> {
    let intro = text.lines().next()?;
    if OBFUSCATED_INTROS.contains(&intro) {
        invert::obfuscated(text)
    } else if MULTI_PASS_INTROS.contains(&intro) {
        invert::multi_pass(text)
    } else {
        invert::obfuscated(text).or_else(|| invert::multi_pass(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Family, FamilyParams, MultiPassLock, ObfuscatedTextLock, Seed};

    /// First-try successes of the family's baseline over `n` challenges from fixed seeds, and
    /// the prompts it failed.
    fn solved(family: &dyn Family, difficulty: u32, n: u32) -> (u32, Vec<String>) {
        let params = FamilyParams { difficulty };
        let mut failed = Vec::new();
        for i in 0..n {
            let mut seed = [0x4cu8; 32];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            seed[4..8].copy_from_slice(&difficulty.to_le_bytes());
            let g = family.generate(&Seed(seed), &params);
            let ok = family
                .solve(&g.prompt)
                .is_some_and(|a| family.verify(&g.key, &a).is_ok());
            if !ok {
                failed.push(g.prompt.text);
            }
        }
        (n - failed.len() as u32, failed)
    }

    fn assert_solves_every_difficulty(family: &dyn Family, levels: std::ops::RangeInclusive<u32>) {
        for difficulty in levels {
            let (ok, failed) = solved(family, difficulty, 200);
            assert!(
                ok >= 198,
                "{} at difficulty {difficulty}: {ok}/200; first failure:\n{}",
                family.name(),
                failed.first().map_or("", String::as_str)
            );
        }
    }

    #[test]
    fn template_inversion_solves_obfuscated_text_lock_at_every_difficulty() {
        assert_solves_every_difficulty(&ObfuscatedTextLock, crate::obfuscated_text_lock::LEVELS);
    }

    #[test]
    fn template_inversion_solves_multi_pass_lock_at_every_difficulty() {
        assert_solves_every_difficulty(&MultiPassLock, crate::multi_pass_lock::PASSES);
    }

    #[test]
    fn solves_a_paraphrase_under_noise() {
        let text = "Decode the scrambled request and answer it exactly.\n\
                    Words: 0tt3r, r.o.b.i.n, EaGlE, tulip, wren.\n\
                    Keep :: the f3aTHered CREATURES. Of those, keep only the ones containing the \
                    letter 'e'. Sort ThEm 1n r3v3rs3 alphabetical order, Z to A. Answer with the \
                    resulting words in capitals, joined by hyphens.";
        assert_eq!(solve(text), None, "not a template sentence: `Keep the …`");
        let text = text
            .replace("Keep :: the", "Pick out the")
            .replace("CREATURES.", "CREATURES and set the other words aside.");
        assert_eq!(solve(&text).as_deref(), Some("WREN-EAGLE"));
    }
}
