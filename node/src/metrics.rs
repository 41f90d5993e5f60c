//! Prometheus metrics: one registry built at start and passed explicitly to each component.
//! Label values come only from fixed sets (reason codes, topics, queues) or from the configured
//! families: a family name read from a client's message is counted under `other` unless the
//! network enables it, so nobody can grow the number of series.

use std::sync::RwLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

/// Bucket bounds (seconds) of the gossip delay histogram: fine around the 200 ms goal of a
/// committee on one site.
pub const GOSSIP_DELAY_BUCKETS: [f64; 18] = [
    0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.5, 1.0, 2.0,
    5.0, 10.0,
];
use prometheus_client::registry::Registry;

/// Labels of a family-scoped counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FamilyLabel {
    /// The challenge family.
    pub family: String,
}

/// Labels of a rejection.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RejectLabel {
    /// The stable reason code.
    pub reason: String,
    /// The family, or `none` when unknown.
    pub family: String,
}

/// Labels of a gossip validation result.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GossipLabel {
    /// registry, acceptance, summary, reveal.
    pub topic: String,
    /// accept, reject or ignore.
    pub result: String,
}

/// Labels of evidence against a committee member.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EvidenceLabel {
    /// One of [`hco_oracle::EVIDENCE_KINDS`].
    pub kind: String,
    /// The member accused (a committee key: bounded).
    pub accused: String,
}

/// Labels of a dropped message.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DropLabel {
    /// Where it was dropped.
    pub queue: String,
}

/// Every metric of the node.
pub struct Metrics {
    /// Challenges issued.
    pub issued: Family<FamilyLabel, Counter>,
    /// Responses accepted.
    pub accepted: Family<FamilyLabel, Counter>,
    /// Requests and responses rejected, by reason and family.
    pub rejected: Family<RejectLabel, Counter>,
    /// Answers judged wrong (or too fast) and recorded as final, by family.
    pub answered_wrong: Family<FamilyLabel, Counter>,
    /// Seconds from receipt of a response to its durable verdict.
    pub verify_latency: Histogram,
    /// Responses per verification batch (each batch is one batched signature check and one
    /// durable flush).
    pub verify_batch_size: Histogram,
    /// Seconds from a peer's receipt of a response to this node recording its acceptance from
    /// gossip (on this node's clock against the issuer's: skew between them adds to it).
    pub gossip_acceptance_delay: Histogram,
    /// Seconds from this node's network task handing up a message of acceptances to its
    /// verdict: this node's share of the gossip delay (the rest is the issuer and the network).
    pub gossip_acceptance_handling: Histogram,
    /// Identities active in the last summarized window.
    pub active_identities: Gauge,
    /// Registrations written, from this node's clients and relayed by peers (one that was
    /// already held counts again).
    pub registrations: Counter,
    /// The last window summarized.
    pub last_summarized_window: Gauge,
    /// The last window with a certificate.
    pub last_certified_window: Gauge,
    /// Connected peers.
    pub peers: Gauge,
    /// Gossip messages validated, by topic and result.
    pub gossip: Family<GossipLabel, Counter>,
    /// Messages and requests dropped: a bounded queue was full, or a peer's request refused.
    pub dropped: Family<DropLabel, Counter>,
    /// Peers disconnected and blocked for misbehaviour.
    pub peers_banned: Counter,
    /// Audit findings in revealed windows.
    pub audit_findings: Counter,
    /// Evidence against committee members in summarized windows, by kind and member.
    pub evidence: Family<EvidenceLabel, Counter>,
    /// Identities removed because they were never active.
    pub identities_pruned: Counter,
    /// Windows from the current one on that still have fresh narrative sets (-1: the schedule
    /// reuses the public starter corpus, no limit).
    pub narrative_windows_remaining: Gauge,
    /// The configured families: the only `family` label values besides `none` and `other`.
    families: RwLock<Vec<String>>,
}

/// The `family` label of a family that is not configured.
pub const OTHER_FAMILY: &str = "other";

impl Metrics {
    /// Creates the metrics and registers them under `hco_`.
    pub fn new(registry: &mut Registry) -> Self {
        let m = Self {
            issued: Family::default(),
            accepted: Family::default(),
            rejected: Family::default(),
            answered_wrong: Family::default(),
            verify_latency: Histogram::new(exponential_buckets(0.0005, 2.0, 14)),
            verify_batch_size: Histogram::new(exponential_buckets(1.0, 2.0, 10)),
            gossip_acceptance_delay: Histogram::new(GOSSIP_DELAY_BUCKETS.iter().copied()),
            gossip_acceptance_handling: Histogram::new(GOSSIP_DELAY_BUCKETS.iter().copied()),
            active_identities: Gauge::default(),
            registrations: Counter::default(),
            last_summarized_window: Gauge::default(),
            last_certified_window: Gauge::default(),
            peers: Gauge::default(),
            gossip: Family::default(),
            dropped: Family::default(),
            peers_banned: Counter::default(),
            audit_findings: Counter::default(),
            evidence: Family::default(),
            identities_pruned: Counter::default(),
            narrative_windows_remaining: Gauge::default(),
            families: RwLock::new(Vec::new()),
        };
        let r = registry.sub_registry_with_prefix("hco");
        r.register("challenges_issued", "Challenges issued", m.issued.clone());
        r.register(
            "responses_accepted",
            "Responses accepted",
            m.accepted.clone(),
        );
        r.register(
            "rejections",
            "Requests and responses rejected, by reason code and family",
            m.rejected.clone(),
        );
        r.register(
            "answers_final_wrong",
            "Answers judged wrong or too fast, recorded as the final answer to their challenge",
            m.answered_wrong.clone(),
        );
        r.register(
            "verify_latency_seconds",
            "Time from receipt of a response to its durable verdict",
            m.verify_latency.clone(),
        );
        r.register(
            "verify_batch_size",
            "Responses per verification batch (one batched signature check, one durable flush)",
            m.verify_batch_size.clone(),
        );
        r.register(
            "gossip_acceptance_delay_seconds",
            "Time from a peer's receipt of a response to this node recording the acceptance from gossip",
            m.gossip_acceptance_delay.clone(),
        );
        r.register(
            "gossip_acceptance_handling_seconds",
            "Time from this node's network task handing up a message of acceptances to its verdict",
            m.gossip_acceptance_handling.clone(),
        );
        r.register(
            "registrations",
            "Registrations written, from this node's clients and relayed by peers",
            m.registrations.clone(),
        );
        r.register(
            "active_identities",
            "Identities active in the last summarized window",
            m.active_identities.clone(),
        );
        r.register(
            "last_summarized_window",
            "The last window this node summarized",
            m.last_summarized_window.clone(),
        );
        r.register(
            "last_certified_window",
            "The last window with a quorum certificate",
            m.last_certified_window.clone(),
        );
        r.register("peers", "Connected libp2p peers", m.peers.clone());
        r.register(
            "gossip_validations",
            "Gossip messages validated, by topic and result",
            m.gossip.clone(),
        );
        r.register(
            "dropped_messages",
            "Messages and requests dropped: a bounded queue was full, or (queue rpc_*) a peer's request was refused",
            m.dropped.clone(),
        );
        r.register(
            "peers_banned",
            "Peers disconnected and blocked for misbehaviour",
            m.peers_banned.clone(),
        );
        r.register(
            "audit_findings",
            "Acceptances found invalid when auditing revealed windows",
            m.audit_findings.clone(),
        );
        r.register(
            "evidence",
            "Evidence against committee members (failed audits, broken commitments, double reveals or summaries), counted when stored",
            m.evidence.clone(),
        );
        r.register(
            "identities_pruned",
            "Identities removed because they were never active",
            m.identities_pruned.clone(),
        );
        r.register(
            "narrative_windows_remaining",
            "Windows from the current one on with fresh narrative sets (-1: no limit, the public starter corpus reused)",
            m.narrative_windows_remaining.clone(),
        );
        m
    }

    /// Counts a piece of evidence (once, when it is stored).
    pub fn record_evidence(&self, e: &hco_oracle::Evidence) {
        if matches!(e, hco_oracle::Evidence::FailedAudit { .. }) {
            self.audit_findings.inc();
        }
        self.evidence
            .get_or_create(&EvidenceLabel {
                kind: e.kind().into(),
                accused: e.accused().to_string(),
            })
            .inc();
    }

    /// Creates the known series at zero, so dashboards and alerts see them before the first
    /// event (an empty family is not exported at all).
    pub fn preregister(&self, families: &[&str]) {
        if let Ok(mut known) = self.families.write() {
            known.extend(families.iter().map(|f| (*f).to_owned()));
        }
        for family in families {
            let _ = self.issued.get_or_create(&FamilyLabel {
                family: (*family).into(),
            });
            let _ = self.accepted.get_or_create(&FamilyLabel {
                family: (*family).into(),
            });
            let _ = self.answered_wrong.get_or_create(&FamilyLabel {
                family: (*family).into(),
            });
        }
        for reason in hco_oracle::Reason::all_codes() {
            let _ = self.rejected.get_or_create(&RejectLabel {
                reason: reason.into(),
                family: "none".into(),
            });
        }
        for topic in crate::network::protocol::Topic::ALL.map(|t| t.label()) {
            for result in ["accept", "reject", "ignore"] {
                let _ = self.gossip.get_or_create(&GossipLabel {
                    topic: topic.into(),
                    result: result.into(),
                });
            }
        }
        for queue in ["publish", "events", "gossip", "rpc", "verify"] {
            let _ = self.dropped.get_or_create(&DropLabel {
                queue: queue.into(),
            });
        }
    }

    /// The `family` label for a family name from a message: itself when configured, else
    /// [`OTHER_FAMILY`].
    pub fn family_label(&self, family: &str) -> String {
        let known = self
            .families
            .read()
            .is_ok_and(|known| known.iter().any(|f| f == family));
        if known { family } else { OTHER_FAMILY }.to_owned()
    }

    /// Counts a rejection; `family` may come from the client (it is mapped to a fixed label).
    pub fn reject(&self, reason: &str, family: Option<&str>) {
        let family = match family {
            Some(f) => self.family_label(f),
            None => "none".to_owned(),
        };
        self.rejected
            .get_or_create(&RejectLabel {
                reason: reason.into(),
                family,
            })
            .inc();
    }

    /// Counts a dropped message.
    pub fn drop_in(&self, queue: &str) {
        self.drop_many(queue, 1);
    }

    /// Counts `n` messages dropped at `queue`.
    pub fn drop_many(&self, queue: &str, n: u64) {
        self.dropped
            .get_or_create(&DropLabel {
                queue: queue.into(),
            })
            .inc_by(n);
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::text::encode;

    use super::*;

    #[test]
    fn a_client_chosen_family_name_is_counted_under_other() {
        let mut registry = Registry::default();
        let metrics = Metrics::new(&mut registry);
        metrics.preregister(&["proof_of_work"]);
        metrics.reject("answer_mismatch", Some("proof_of_work"));
        for i in 0..1000 {
            metrics.reject("bad_challenge_signature", Some(&format!("junk{i}")));
        }
        metrics.reject("bad_challenge_signature", Some("other"));
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert!(text.contains(
            r#"hco_rejections_total{reason="answer_mismatch",family="proof_of_work"} 1"#
        ));
        assert!(text.contains(
            r#"hco_rejections_total{reason="bad_challenge_signature",family="other"} 1001"#
        ));
        assert!(!text.contains("junk"), "no series per client-chosen name");
    }

    #[test]
    fn no_series_tells_which_part_of_a_wrong_answer_was_right() {
        let mut registry = Registry::default();
        let metrics = Metrics::new(&mut registry);
        metrics.preregister(&["narrative_chain"]);
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert!(text.contains(r#"hco_answers_final_wrong_total{family="narrative_chain"} 0"#));
        for word in ["part", "verdict"] {
            assert!(
                !text.contains(&format!("{word}=")),
                "{word} label in {text}"
            );
        }
    }
}
