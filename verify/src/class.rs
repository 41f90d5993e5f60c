//! The class an identity is active as: a person or an agent.

use alloc::format;
use alloc::string::String;
use core::str::FromStr;

/// Which kind of identity a challenge family is meant for, and which kind an identity was
/// active as: its JSON name is `human` or `agent`; in a certified Merkle leaf it is one byte
/// ([`Class::leaf_byte`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Class {
    /// A person: challenges cheap for humans and hard for automation under the deadline.
    Human,
    /// A capable AI agent: challenges that need language understanding under a budget humans miss.
    Agent,
}

impl Class {
    /// The stable lower-case name (`human`, `agent`): the JSON name and the bytes signed in a
    /// registration.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Human => "human",
            Class::Agent => "agent",
        }
    }

    /// The byte a window's Merkle leaf commits to after the identity's key: 0 human, 1 agent.
    pub fn leaf_byte(self) -> u8 {
        match self {
            Class::Human => 0,
            Class::Agent => 1,
        }
    }
}

impl FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "human" => Ok(Class::Human),
            "agent" => Ok(Class::Agent),
            other => Err(format!("unknown class `{other}`: use `human` or `agent`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_bytes_are_stable() {
        for (class, name, byte) in [(Class::Human, "human", 0), (Class::Agent, "agent", 1)] {
            assert_eq!(class.as_str(), name);
            assert_eq!(name.parse::<Class>(), Ok(class));
            assert_eq!(class.leaf_byte(), byte);
            #[cfg(feature = "serde")]
            {
                let json = serde_json::to_string(&class).unwrap();
                assert_eq!(json, alloc::format!("\"{name}\""));
                assert_eq!(serde_json::from_str::<Class>(&json).unwrap(), class);
            }
        }
        assert!("Human".parse::<Class>().is_err());
        assert!(Class::Human < Class::Agent);
    }
}
