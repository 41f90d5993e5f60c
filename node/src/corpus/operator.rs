//! The narrative corpus a node runs its agent class on: the operator's (`[agent] corpus_dir`) or
//! the starter corpus compiled into the binary. The per-window `narrative_chain` family and the
//! admission game both draw from it, so a configured private corpus is the answer key of both.
//!
//! The starter corpus is public (it ships in the source and the binary): anyone can answer its
//! questions by lookup. A node whose configuration sets `allow_starter_corpus = false` (as
//! `configs/prod.toml` does) refuses to start an agent class on a corpus that holds any of the
//! starter's narratives, and says how to make a private one.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Context, bail};
use hco_challenges::narrative::{Corpus, NarrativeChain, RetiredSets};
use serde_json::{Value, json};

use crate::config::Config;

/// The per-window family's registry name.
const NARRATIVE_CHAIN: &str = "narrative_chain";

/// The corpus of this node's agent class, with what `/v1/windows/current` says about it.
#[derive(Debug, Clone)]
pub struct AgentCorpus {
    /// The sets.
    pub corpus: Arc<Corpus>,
    /// Sets the operator retired (`[agent] retired_sets`).
    pub retired: RetiredSets,
    /// Sets of this corpus whose narratives are in the public starter corpus.
    pub public_sets: usize,
    /// Whether the agent class runs at all (the admission game, or `narrative_chain` among the
    /// network's families).
    pub in_use: bool,
}

impl AgentCorpus {
    /// Loads the configured corpus and checks it against the configuration's rule for the
    /// public starter corpus.
    pub fn load(config: &Config) -> anyhow::Result<Self> {
        let a = &config.agent;
        let corpus = match &a.corpus_dir {
            Some(dir) => Corpus::load_dir(dir)
                .with_context(|| format!("agent.corpus_dir {}", dir.display()))?,
            None => Corpus::embedded().clone(),
        };
        let retired = match &a.retired_sets {
            Some(path) => RetiredSets::parse(
                &std::fs::read_to_string(path)
                    .with_context(|| format!("agent.retired_sets {}", path.display()))?,
            ),
            None => RetiredSets::default(),
        };
        let in_use = a.enabled
            || config
                .network
                .families
                .iter()
                .any(|f| f.name == NARRATIVE_CHAIN);
        let this = Self {
            public_sets: public_sets(&corpus),
            corpus: Arc::new(corpus),
            retired,
            in_use,
        };
        if this.in_use && this.public_sets > 0 {
            let what = match &a.corpus_dir {
                None => "the public starter corpus compiled into the binary".to_owned(),
                Some(dir) => format!(
                    "{} ({} of its {} sets are in the public starter corpus)",
                    dir.display(),
                    this.public_sets,
                    this.corpus.sets().len()
                ),
            };
            if !a.allow_starter_corpus {
                bail!(
                    "the agent class would run on {what}, whose answers anyone can look up. \
                     Generate a private corpus (`hco corpus generate --out DIR …`), keep it off \
                     public storage, and set `[agent] corpus_dir = \"DIR\"`; or disable the agent \
                     class (`[agent] enabled = false` and no `narrative_chain` family)"
                );
            }
            tracing::warn!(
                "the agent class runs on {what}: its answer key is public, so it admits any \
                 script that reads it (allowed by `[agent] allow_starter_corpus`; for development only)"
            );
        }
        Ok(this)
    }

    /// The per-window family over this corpus.
    pub fn family(&self) -> NarrativeChain {
        NarrativeChain::new(self.corpus.clone(), self.retired.clone())
    }

    /// What the node's status view says about it.
    pub fn view(&self) -> Value {
        json!({
            "in_use": self.in_use,
            "sets": self.corpus.sets().len(),
            "retired": self.corpus.sets().iter().filter(|s| self.retired.contains(&s.id)).count(),
            "public_sets": self.public_sets,
            "public_answer_key": self.public_sets > 0,
        })
    }
}

/// Whitespace-insensitive text of a narrative, for comparing corpora.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How many sets of `corpus` share a narrative with the starter corpus (renaming or reordering a
/// starter set does not make it private).
fn public_sets(corpus: &Corpus) -> usize {
    let starter: HashSet<String> = Corpus::embedded()
        .sets()
        .iter()
        .flat_map(|s| s.parts.iter().map(|p| fold(&p.narrative)))
        .collect();
    corpus
        .sets()
        .iter()
        .filter(|s| {
            s.parts
                .iter()
                .any(|p| starter.contains(&fold(&p.narrative)))
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allow: bool, corpus_dir: Option<std::path::PathBuf>) -> Config {
        let mut c = Config::default();
        c.agent.enabled = true;
        c.agent.allow_starter_corpus = allow;
        c.agent.corpus_dir = corpus_dir;
        c
    }

    /// A copy of the starter corpus with every set renamed: still public.
    fn renamed_starter(dir: &std::path::Path) {
        for set in Corpus::embedded().sets() {
            let mut s = set.clone();
            s.id = format!("renamed-{}", s.id);
            let path = dir.join(format!("{}.json", s.id));
            std::fs::write(path, serde_json::to_string(&s).unwrap()).unwrap();
        }
    }

    #[test]
    fn the_starter_corpus_is_refused_unless_allowed() {
        let refused = AgentCorpus::load(&config(false, None)).unwrap_err();
        assert!(
            format!("{refused:#}").contains("hco corpus generate"),
            "{refused:#}"
        );
        let allowed = AgentCorpus::load(&config(true, None)).unwrap();
        assert_eq!(allowed.public_sets, Corpus::embedded().sets().len());
        assert_eq!(allowed.view()["public_answer_key"], true);
    }

    #[test]
    fn renaming_starter_sets_does_not_make_them_private() {
        let dir = tempfile::tempdir().unwrap();
        renamed_starter(dir.path());
        let refused = AgentCorpus::load(&config(false, Some(dir.path().into()))).unwrap_err();
        assert!(format!("{refused:#}").contains("are in the public starter corpus"));
    }

    #[test]
    fn a_private_corpus_is_accepted_and_feeds_the_family() {
        let dir = tempfile::tempdir().unwrap();
        for set in Corpus::embedded().sets().iter().take(3) {
            let mut s = set.clone();
            s.id = format!("private-{}", s.id);
            for p in &mut s.parts {
                p.narrative = format!("{} (Private edition, revised.)", p.narrative);
            }
            std::fs::write(
                dir.path().join(format!("{}.json", s.id)),
                serde_json::to_string(&s).unwrap(),
            )
            .unwrap();
        }
        let loaded = AgentCorpus::load(&config(false, Some(dir.path().into()))).unwrap();
        assert_eq!(loaded.public_sets, 0);
        assert_eq!(loaded.family().corpus().sets().len(), 3);
        assert!(
            loaded
                .family()
                .corpus()
                .sets()
                .iter()
                .all(|s| s.id.starts_with("private-"))
        );
    }

    #[test]
    fn without_an_agent_class_the_corpus_is_not_checked() {
        let mut c = config(false, None);
        c.agent.enabled = false;
        c.network.families.retain(|f| f.name != NARRATIVE_CHAIN);
        let loaded = AgentCorpus::load(&c).unwrap();
        assert!(!loaded.in_use);
    }
}
