//! What closes a window: the members' summaries, its certificate and the issuers' reveals.

use super::{FirstWrite, Ledger, LedgerError, decode, first_write, keys};
use crate::{Digest, NodeId, SignedReveal, SignedSummary, WindowCertificate, codec};

impl Ledger {
    /// Stores a node's summary of window `t` (the first one it sent is kept).
    pub fn put_summary(&self, s: &SignedSummary) -> Result<(), LedgerError> {
        let key = keys::window_node(s.summary.t, &s.signer.0);
        self.summaries
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(s)))?
            .ok();
        Ok(())
    }

    /// The summaries received for window `t`.
    pub fn summaries(&self, t: u64) -> Result<Vec<SignedSummary>, LedgerError> {
        self.summaries
            .scan_prefix(keys::window(t))
            .map(|r| decode("summaries", &r?.1))
            .collect()
    }

    /// Stores the certificate of a window unless one is held: the first certificate of a
    /// window is kept. One of another summary is returned as [`FirstWrite::Conflict`]; one of
    /// the same summary (other signers) is a [`FirstWrite::Duplicate`].
    pub fn put_certificate(
        &self,
        cert: &WindowCertificate,
    ) -> Result<FirstWrite<WindowCertificate>, LedgerError> {
        let key = keys::window(cert.summary.t);
        first_write::put_first(&self.certs, "certs", &key, cert, |held, new| {
            held.summary == new.summary
        })
    }

    /// The certificate of window `t`.
    pub fn certificate(&self, t: u64) -> Result<Option<WindowCertificate>, LedgerError> {
        self.certs
            .get(keys::window(t))?
            .map(|v| decode("certs", &v))
            .transpose()
    }

    /// The root certified for window `t`, or [`Digest::ZERO`] when there is none.
    pub fn certified_root(&self, t: u64) -> Result<Digest, LedgerError> {
        Ok(self
            .certificate(t)?
            .map(|c| c.summary.root)
            .unwrap_or(Digest::ZERO))
    }

    /// Stores a member's reveal of a window unless one is held: the first is kept (a
    /// different one is returned as [`FirstWrite::Conflict`], evidence of equivocation).
    pub fn put_reveal(&self, r: &SignedReveal) -> Result<FirstWrite<SignedReveal>, LedgerError> {
        let key = keys::window_node(r.reveal.t, &r.reveal.node.0);
        first_write::put_first(&self.reveals, "reveals", &key, r, |_, _| false)
    }

    /// The reveals of window `t`.
    pub fn reveals(&self, t: u64) -> Result<Vec<SignedReveal>, LedgerError> {
        self.reveals
            .scan_prefix(keys::window(t))
            .map(|r| decode("reveals", &r?.1))
            .collect()
    }

    /// The reveal of `node` for window `t`.
    pub fn reveal(&self, t: u64, node: &NodeId) -> Result<Option<SignedReveal>, LedgerError> {
        self.reveals
            .get(keys::window_node(t, &node.0))?
            .map(|v| decode("reveals", &v))
            .transpose()
    }
}
