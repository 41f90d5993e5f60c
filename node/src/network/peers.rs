//! Who may stay connected: committee members must run this node's protocol and network
//! parameters; any other peer is an observer (any libp2p implementation) that may read gossip,
//! and is refused only when it advertises parameters other than ours.
//!
//! The only thing checked is what every libp2p implementation can set: the `params=<digest>`
//! token of the identify agent string. The identify protocol version (fixed by some
//! implementations, e.g. js-libp2p) is required of committee members only.

use super::behaviour::PROTOCOL_VERSION;

/// Why a peer was refused at identify: the check that failed and what the peer sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Stable name of the failed check.
    pub check: &'static str,
    /// What was expected and what the peer sent.
    pub why: String,
}

/// The network parameter digest a peer advertises: the token after `params=` in its agent
/// string, up to the next space.
pub fn advertised_params(agent_version: &str) -> Option<&str> {
    let (_, rest) = agent_version.split_once("params=")?;
    Some(rest.split_whitespace().next().unwrap_or(""))
}

/// Checks a peer's identify information against this node's parameter digest.
pub fn check_identify(
    is_member: bool,
    protocol_version: &str,
    agent_version: &str,
    our_params: &str,
) -> Result<(), Refusal> {
    match advertised_params(agent_version) {
        Some(theirs) if theirs != our_params => {
            return Err(Refusal {
                check: "params_mismatch",
                why: format!("advertises params={theirs}, this network runs params={our_params}"),
            });
        }
        None if is_member => {
            return Err(Refusal {
                check: "params_missing",
                why: format!(
                    "a committee member must advertise params={our_params} in its agent string"
                ),
            });
        }
        _ => {}
    }
    if is_member && protocol_version != PROTOCOL_VERSION {
        return Err(Refusal {
            check: "protocol_version",
            why: format!(
                "a committee member must run {PROTOCOL_VERSION}, it runs `{protocol_version}`"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "ab12";

    #[test]
    fn the_digest_is_the_token_after_params() {
        assert_eq!(advertised_params("hco/0.1.0 params=ab12"), Some("ab12"));
        assert_eq!(advertised_params("x params=ab12 (linux)"), Some("ab12"));
        assert_eq!(advertised_params("js-libp2p/3.3.0 UserAgent=node"), None);
        assert_eq!(advertised_params("params="), Some(""));
    }

    #[test]
    fn an_observer_of_any_implementation_is_admitted() {
        assert!(check_identify(false, "ipfs/0.1.0", "js-libp2p/3.3.0", OURS).is_ok());
        assert!(check_identify(false, "", "", OURS).is_ok());
        assert!(check_identify(false, "ipfs/0.1.0", "js params=ab12", OURS).is_ok());
    }

    #[test]
    fn other_parameters_are_refused_with_the_check_named() {
        let r = check_identify(false, PROTOCOL_VERSION, "hco/0.1.0 params=ff", OURS).unwrap_err();
        assert_eq!(r.check, "params_mismatch");
        assert!(r.why.contains("params=ff"), "{}", r.why);
    }

    #[test]
    fn members_must_advertise_the_protocol_and_the_parameters() {
        assert!(check_identify(true, PROTOCOL_VERSION, "hco/0.1.0 params=ab12", OURS).is_ok());
        let missing = check_identify(true, PROTOCOL_VERSION, "hco/0.1.0", OURS).unwrap_err();
        assert_eq!(missing.check, "params_missing");
        let version = check_identify(true, "ipfs/0.1.0", "hco params=ab12", OURS).unwrap_err();
        assert_eq!(version.check, "protocol_version");
    }
}
