//! Families by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{
    ArithmeticReasoning, Attention, Family, InteractiveReasoning, MultiPassLock, NarrativeChain,
    ObfuscatedTextLock, ProofOfWork, SemanticMathLock, VisualMatch,
};

/// The families a node knows, by their stable names.
#[derive(Clone)]
pub struct Registry {
    families: BTreeMap<&'static str, Arc<dyn Family>>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Self {
        Self {
            families: BTreeMap::new(),
        }
    }

    /// Every family this crate implements.
    pub fn builtin() -> Self {
        let mut registry = Self::empty();
        registry.insert(ProofOfWork);
        registry.insert(ArithmeticReasoning);
        registry.insert(ObfuscatedTextLock);
        registry.insert(MultiPassLock);
        registry.insert(SemanticMathLock);
        registry.insert(NarrativeChain::embedded());
        registry.insert(VisualMatch);
        registry.insert(InteractiveReasoning);
        registry.insert(Attention);
        registry.insert(crate::presence::PresenceFamily::default());
        registry
    }

    /// Adds a family, replacing one of the same name.
    pub fn insert(&mut self, family: impl Family) {
        self.families.insert(family.name(), Arc::new(family));
    }

    /// The family of that name, if known.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Family>> {
        self.families.get(name)
    }

    /// All family names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.families.keys().copied()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
