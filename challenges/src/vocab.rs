//! The word vocabulary of the lock families: about six hundred words in two dozen semantic
//! categories, each category with several descriptions used as paraphrases in prompts.
//!
//! The data lives in `data/vocabulary.txt` and is compiled into the binary. Selections in the
//! lock families are by meaning ("keep the feathered creatures"), but the descriptions and the
//! words are this closed, public list: a script that holds it maps every paraphrase back to its
//! category (the lock families' baseline solvers do), so it hides nothing from such a script.

use std::sync::OnceLock;

const DATA: &str = include_str!("../data/vocabulary.txt");

/// One semantic category.
#[derive(Debug, Clone)]
pub struct Category {
    /// The category's short name (`mammal`, `vehicle`, …).
    pub name: &'static str,
    /// Plural descriptions, the first being the plain one (`mammals`).
    pub descriptions: Vec<&'static str>,
    /// The member words, lowercase ASCII, four letters or more.
    pub words: Vec<&'static str>,
}

/// Every category.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// The categories in file order.
    pub categories: Vec<Category>,
}

impl Vocabulary {
    /// The index of the category a word belongs to.
    pub fn category_of(&self, word: &str) -> Option<usize> {
        self.categories.iter().position(|c| c.words.contains(&word))
    }

    /// Number of words in all categories.
    pub fn word_count(&self) -> usize {
        self.categories.iter().map(|c| c.words.len()).sum()
    }

    /// Every word with its category index.
    pub fn words(&self) -> impl Iterator<Item = (usize, &'static str)> + '_ {
        self.categories
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.words.iter().map(move |w| (i, *w)))
    }
}

fn parse(data: &'static str) -> Vocabulary {
    let mut categories: Vec<Category> = Vec::new();
    for line in data.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('@') {
            let (name, descriptions) = header.split_once('|').unwrap_or((header, ""));
            categories.push(Category {
                name: name.trim(),
                descriptions: descriptions
                    .split(';')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .collect(),
                words: Vec::new(),
            });
        } else if let Some(current) = categories.last_mut() {
            current.words.extend(line.split_whitespace());
        }
    }
    Vocabulary { categories }
}

/// The compiled-in vocabulary.
pub fn vocabulary() -> &'static Vocabulary {
    static VOCABULARY: OnceLock<Vocabulary> = OnceLock::new();
    VOCABULARY.get_or_init(|| parse(DATA))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn vocabulary_is_large_clean_and_unambiguous() {
        let v = vocabulary();
        assert!(v.categories.len() >= 20, "{}", v.categories.len());
        assert!(v.word_count() >= 500, "{}", v.word_count());
        let mut seen = BTreeSet::new();
        for c in &v.categories {
            assert!(c.descriptions.len() >= 3, "{} needs paraphrases", c.name);
            assert!(c.words.len() >= 15, "{} is too small", c.name);
            for w in &c.words {
                assert!(w.len() >= 4, "{w} is shorter than four letters");
                assert!(w.bytes().all(|b| b.is_ascii_lowercase()), "{w}");
                assert!(seen.insert(*w), "{w} is listed twice");
            }
        }
        assert_eq!(v.category_of("penguin"), v.category_of("eagle"));
        assert_ne!(v.category_of("penguin"), v.category_of("otter"));
        assert_eq!(v.category_of("zzzz"), None);
    }
}
