//! The narrative corpus a node runs its agent class on: the operator's (`[agent] corpus_dir`) or
//! the starter corpus compiled into the binary. The per-window `narrative_chain` family and the
//! admission game both draw from it, so a configured private corpus is the answer key of both.
//!
//! The starter corpus is public (it ships in the source and the binary): anyone can answer its
//! questions by lookup. A node whose configuration sets `allow_starter_corpus = false` (as
//! `configs/prod.toml` does) refuses to start an agent class on a corpus that holds any of the
//! starter's narratives, and says how to make a private one.
//!
//! Sets are handed to windows by the network's set schedule (`[network.narrative]`, see
//! [`hco_challenges::narrative::SetSchedule`]). Its `reuse` (starting the schedule over) is
//! refused unless every set is public already: a private corpus never shows a set twice.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Context, bail};
use hco_challenges::narrative::{Corpus, NarrativeChain, RetiredSets, ScheduleParams, SetSchedule};
use hco_oracle::NarrativeParams;

use crate::api::{AgentCorpusView, CorpusScheduleView};
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
    /// Which sets each window uses.
    pub schedule: SetSchedule,
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
        let schedule = SetSchedule::new(&corpus, &retired, config.network.narrative);
        let this = Self {
            public_sets: public_sets(&corpus),
            corpus: Arc::new(corpus),
            retired,
            in_use,
            schedule,
        };
        this.check_reuse()?;
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

    /// Refuses `reuse` on a corpus holding any private set: reuse would show its answers in a
    /// second window.
    fn check_reuse(&self) -> anyhow::Result<()> {
        let all_public = self.public_sets == self.corpus.sets().len();
        if self.in_use && self.params().reuse && !all_public {
            bail!(
                "`[network.narrative] reuse = true` would show the sets of this private corpus \
                 in more than one window, leaking their answers. Set `reuse = false` and \
                 `start_window` to the first window the agent class runs on this corpus \
                 (reuse is only for the public starter corpus)"
            );
        }
        Ok(())
    }

    fn params(&self) -> &ScheduleParams {
        self.schedule.params()
    }

    /// The per-window family over this corpus.
    pub fn family(&self) -> NarrativeChain {
        NarrativeChain::new(self.corpus.clone(), self.retired.clone(), *self.params())
    }

    /// What the network parameters commit to about this corpus.
    pub fn narrative_params(&self) -> NarrativeParams {
        NarrativeParams::of(&self.corpus, &self.retired, *self.params())
    }

    /// What the node's status view says about it in window `t`.
    pub fn view(&self, t: u64) -> AgentCorpusView {
        let s = &self.schedule;
        AgentCorpusView {
            in_use: self.in_use,
            sets: self.corpus.sets().len(),
            retired: self
                .corpus
                .sets()
                .iter()
                .filter(|s| self.retired.contains(&s.id))
                .count(),
            public_sets: self.public_sets,
            public_answer_key: self.public_sets > 0,
            schedule: CorpusScheduleView {
                start_window: s.params().start_window,
                sets_per_window: s.params().sets_per_window,
                reuse: s.params().reuse,
                windows: s.windows(),
                end_window: (!s.params().reuse).then(|| s.end_window()),
                windows_remaining: s.windows_left(t),
                sets_this_window: s.slice(t).map_or(0, <[String]>::len),
            },
        }
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
        c.network.narrative.reuse = corpus_dir.is_none();
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
        let view = allowed.view(3);
        assert!(view.public_answer_key);
        assert!(view.schedule.reuse, "the starter corpus is reused");
        assert_eq!(view.schedule.windows_remaining, None);
        assert_eq!(view.schedule.sets_this_window, 2);
    }

    #[test]
    fn renaming_starter_sets_does_not_make_them_private() {
        let dir = tempfile::tempdir().unwrap();
        renamed_starter(dir.path());
        let refused = AgentCorpus::load(&config(false, Some(dir.path().into()))).unwrap_err();
        assert!(format!("{refused:#}").contains("are in the public starter corpus"));
    }

    /// A private corpus of `n` sets in `dir`.
    fn private_corpus(dir: &std::path::Path, n: usize) {
        for set in Corpus::embedded().sets().iter().take(n) {
            let mut s = set.clone();
            s.id = format!("private-{}", s.id);
            for p in &mut s.parts {
                p.narrative = format!("{} (Private edition, revised.)", p.narrative);
            }
            std::fs::write(
                dir.join(format!("{}.json", s.id)),
                serde_json::to_string(&s).unwrap(),
            )
            .unwrap();
        }
    }

    #[test]
    fn a_private_corpus_is_never_reused_and_its_schedule_is_in_the_status() {
        let dir = tempfile::tempdir().unwrap();
        private_corpus(dir.path(), 6);
        let mut c = config(false, Some(dir.path().into()));
        c.network.narrative.reuse = true;
        let refused = AgentCorpus::load(&c).unwrap_err();
        assert!(
            format!("{refused:#}").contains("reuse = false"),
            "{refused:#}"
        );
        c.network.narrative = ScheduleParams {
            start_window: 10,
            sets_per_window: 2,
            reuse: false,
        };
        let loaded = AgentCorpus::load(&c).unwrap();
        let view = loaded.view(11).schedule;
        assert_eq!(view.windows, 3);
        assert_eq!(view.end_window, Some(13));
        assert_eq!(view.windows_remaining, Some(2));
        assert_eq!(view.sets_this_window, 2);
        assert_eq!(loaded.view(13).schedule.sets_this_window, 0);
        // The parameters commit to the corpus: another corpus gives another digest.
        let other = AgentCorpus::load(&config(true, None)).unwrap();
        assert_ne!(
            loaded.narrative_params().corpus_root,
            other.narrative_params().corpus_root
        );
    }

    #[test]
    fn a_private_corpus_is_accepted_and_feeds_the_family() {
        let dir = tempfile::tempdir().unwrap();
        private_corpus(dir.path(), 3);
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
