//! The starter corpus compiled into the binary: the files of the repository's `corpus/`
//! directory (a test checks that this list and the directory agree).

/// `(file stem, contents)` of every starter set.
pub(crate) const FILES: &[(&str, &str)] = &[
    (
        "biochemistry-01",
        include_str!("../../../corpus/biochemistry-01.json"),
    ),
    (
        "biochemistry-02",
        include_str!("../../../corpus/biochemistry-02.json"),
    ),
    (
        "clinical-trials-01",
        include_str!("../../../corpus/clinical-trials-01.json"),
    ),
    (
        "clinical-trials-02",
        include_str!("../../../corpus/clinical-trials-02.json"),
    ),
    (
        "cybersecurity-01",
        include_str!("../../../corpus/cybersecurity-01.json"),
    ),
    (
        "cybersecurity-02",
        include_str!("../../../corpus/cybersecurity-02.json"),
    ),
    (
        "financial-markets-01",
        include_str!("../../../corpus/financial-markets-01.json"),
    ),
    (
        "financial-markets-02",
        include_str!("../../../corpus/financial-markets-02.json"),
    ),
    (
        "food-safety-01",
        include_str!("../../../corpus/food-safety-01.json"),
    ),
    (
        "food-safety-02",
        include_str!("../../../corpus/food-safety-02.json"),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrative::{Corpus, LintConfig, lint, lint_dir};
    use std::path::Path;

    fn corpus_dir() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"))
    }

    #[test]
    fn embedded_list_matches_the_corpus_directory() {
        let on_disk = Corpus::load_dir(corpus_dir()).expect("the corpus directory loads");
        assert_eq!(&on_disk, Corpus::embedded());
        assert_eq!(on_disk.sets().len(), FILES.len());
    }

    #[test]
    fn starter_corpus_has_five_domains_of_two_sets_and_passes_the_linter() {
        let corpus = Corpus::embedded();
        assert!(corpus.domains().len() >= 5, "{:?}", corpus.domains());
        assert!(corpus.sets().len() >= 10);
        let report = lint(corpus, &LintConfig::default());
        assert!(report.passed(), "{:#?}", report.issues);
        assert_eq!(report.baseline_success, 0.0);
        assert!(report.questions >= 90);
        let from_dir = lint_dir(corpus_dir(), &LintConfig::default()).unwrap();
        assert!(from_dir.passed());
    }
}
