//! Signing and verification (`hco_verify::sign`, re-exported: one implementation for the node
//! and every light verifier). Every signature covers a 32-byte BLAKE3 digest derived under a
//! domain string, so a signature made for one message type is never valid for another.
//!
//! The signed bytes are spelled out field by field (not the binary codec), so a client in any
//! language — a browser page, a chain contract — can rebuild them:
//! `digest = BLAKE3.derive_key(domain, concat(len_u64_le(part) ‖ part for part in parts))`,
//! integers big-endian, keys and digests raw 32 bytes, strings UTF-8:
//!
//! | message | domain | parts |
//! |---|---|---|
//! | registration | `hco register v1` | version u8, id, class (`human`/`agent`), created_at u64, visual_opt_out u8 (0/1), then pow_nonce u64 only when present |
//! | passkey enrolment | `hco passkey enrolment v1` | version u8, id, created_at u64, credential (the JSON text) |
//! | challenge request | `hco challenge request v1` | version u8, id, t u64, j u32 |
//! | challenge id | `hco challenge id v1` | version u8, issuer, id, t u64, j u32, family, issued_at u64, deadline u64, prompt_digest, then the witness's node and signature only when present |
//! | beat witness | `hco beat witness v2` | node, t u64, at u64 |
//! | response | `hco response v1` | challenge id, answer |
//! | window summary | `hco window summary v2` | version u8, t u64, root, count u64, links_root, params digest |
//! | account link | `hco account link v1` | the statement's text (`hco_verify::link`); the account signs the same text with EIP-191 |
//! | reveal | `hco reveal v2` | version u8, t u64, node, secret, next-window commitment |
//! | admission-game session start | `hco admission start v1` | node, identity, window u64, nonce |

pub use hco_verify::sign::{digest, public_key, sign, verify, verify_many, verify_many_parsed};
