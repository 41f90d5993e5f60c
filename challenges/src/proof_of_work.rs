//! `proof_of_work`: find a nonce whose BLAKE3 hash with the challenge prefix has enough leading
//! zero bits. A baseline family (no language understanding) and the devnet's way to run a whole
//! round trip with no person involved.
//!
//! Prompt data: `{"prefix":"<32 hex>","difficulty_bits":N}`.
//! Answer: `{"nonce":<u64>,"hash":"<64 hex>"}` where `hash = blake3(prefix ‖ nonce as u64 LE)`.

use serde::{Deserialize, Serialize};

use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

/// Most bits a network may demand; beyond this a solve takes hours on one core.
pub const MAX_DIFFICULTY_BITS: u32 = 40;

/// Bits used when a network names the family without a difficulty (tens of milliseconds).
pub const DEFAULT_DIFFICULTY_BITS: u32 = 16;

/// The proof-of-work family.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProofOfWork;

#[derive(Serialize, Deserialize)]
struct Data {
    prefix: String,
    difficulty_bits: u32,
}

#[derive(Serialize, Deserialize)]
struct Answer {
    nonce: u64,
    hash: String,
}

/// The hash of a nonce under a prefix.
pub fn pow_hash(prefix: &[u8; 16], nonce: u64) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(prefix);
    hasher.update(&nonce.to_le_bytes());
    *hasher.finalize().as_bytes()
}

/// Number of leading zero bits of a hash.
pub fn leading_zero_bits(hash: &[u8; 32]) -> u32 {
    let mut bits = 0;
    for byte in hash {
        if *byte == 0 {
            bits += 8;
        } else {
            return bits + byte.leading_zeros();
        }
    }
    bits
}

fn key_parts(key: &AnswerKey) -> Option<([u8; 16], u32)> {
    let prefix: [u8; 16] = key.0.get(..16)?.try_into().ok()?;
    let bits = u32::from_le_bytes(key.0.get(16..20)?.try_into().ok()?);
    Some((prefix, bits))
}

impl Family for ProofOfWork {
    fn script_solvable(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "proof_of_work"
    }

    fn class(&self) -> Class {
        Class::Agent
    }

    fn max_answer_len(&self) -> usize {
        256
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams {
            difficulty: DEFAULT_DIFFICULTY_BITS,
        }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        if params.difficulty > MAX_DIFFICULTY_BITS {
            return Err(format!(
                "difficulty {} bits is above the maximum of {MAX_DIFFICULTY_BITS}",
                params.difficulty
            ));
        }
        Ok(())
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let mut prefix = [0u8; 16];
        seed.derive("pow prefix").stream().fill(&mut prefix);
        let data = Data {
            prefix: hex::encode(prefix),
            difficulty_bits: params.difficulty,
        };
        let mut key = prefix.to_vec();
        key.extend_from_slice(&params.difficulty.to_le_bytes());
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text: format!(
                    "Find a nonce n such that blake3(prefix || n as 8 little-endian bytes) has at least {} leading zero bits. Answer {{\"nonce\": n, \"hash\": \"<hex>\"}}.",
                    params.difficulty
                ),
                data: serde_json::to_vec(&data).unwrap_or_default(),
            },
            key: AnswerKey(key),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        if answer.is_empty() {
            return Err(Reject::MissingAnswer);
        }
        let (prefix, bits) = key_parts(key).ok_or(Reject::InvalidAnswerFormat("corrupt key"))?;
        let answer: Answer = serde_json::from_slice(answer)
            .map_err(|_| Reject::InvalidAnswerFormat(r#"expected {"nonce": u64, "hash": hex}"#))?;
        let mut claimed = [0u8; 32];
        hex::decode_to_slice(&answer.hash, &mut claimed)
            .map_err(|_| Reject::InvalidAnswerFormat("hash must be 64 hex characters"))?;
        let actual = pow_hash(&prefix, answer.nonce);
        if actual != claimed {
            return Err(Reject::HashMismatch);
        }
        if leading_zero_bits(&actual) < bits {
            return Err(Reject::InsufficientDifficulty);
        }
        Ok(())
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        let data: Data = serde_json::from_slice(&prompt.data).ok()?;
        if data.difficulty_bits > MAX_DIFFICULTY_BITS {
            return None;
        }
        let mut prefix = [0u8; 16];
        hex::decode_to_slice(&data.prefix, &mut prefix).ok()?;
        (0..u64::MAX).find_map(|nonce| {
            let hash = pow_hash(&prefix, nonce);
            (leading_zero_bits(&hash) >= data.difficulty_bits).then(|| {
                serde_json::to_vec(&Answer {
                    nonce,
                    hash: hex::encode(hash),
                })
                .unwrap_or_default()
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(bits: u32) -> FamilyParams {
        FamilyParams { difficulty: bits }
    }

    #[test]
    fn solver_answers_verify() {
        let g = ProofOfWork.generate(&Seed([3; 32]), &params(10));
        let answer = ProofOfWork.solve(&g.prompt).expect("solvable");
        assert_eq!(ProofOfWork.verify(&g.key, &answer), Ok(()));
    }

    #[test]
    fn rejections_carry_agentproof_reasons() {
        let g = ProofOfWork.generate(&Seed([4; 32]), &params(12));
        let good: Answer = serde_json::from_slice(&ProofOfWork.solve(&g.prompt).unwrap()).unwrap();
        assert_eq!(ProofOfWork.verify(&g.key, b""), Err(Reject::MissingAnswer));
        assert_eq!(
            ProofOfWork.verify(&g.key, b"nonce=1").unwrap_err().code(),
            "invalid_answer_format"
        );
        let forged = serde_json::to_vec(&Answer {
            nonce: good.nonce + 1,
            hash: good.hash.clone(),
        })
        .unwrap();
        assert_eq!(
            ProofOfWork.verify(&g.key, &forged),
            Err(Reject::HashMismatch)
        );
        // A nonce whose honest hash misses the target.
        let weak = (0..)
            .map(|n| (n, pow_hash(&key_parts(&g.key).unwrap().0, n)))
            .find(|(_, h)| leading_zero_bits(h) < 12)
            .unwrap();
        let weak = serde_json::to_vec(&Answer {
            nonce: weak.0,
            hash: hex::encode(weak.1),
        })
        .unwrap();
        assert_eq!(
            ProofOfWork.verify(&g.key, &weak),
            Err(Reject::InsufficientDifficulty)
        );
    }

    #[test]
    fn answer_for_one_seed_fails_for_another() {
        let a = ProofOfWork.generate(&Seed([5; 32]), &params(8));
        let b = ProofOfWork.generate(&Seed([6; 32]), &params(8));
        let answer = ProofOfWork.solve(&a.prompt).unwrap();
        assert_eq!(
            ProofOfWork.verify(&b.key, &answer),
            Err(Reject::HashMismatch)
        );
    }

    #[test]
    fn leading_zero_bits_counts_across_bytes() {
        let mut h = [0xffu8; 32];
        assert_eq!(leading_zero_bits(&h), 0);
        h[0] = 0;
        h[1] = 0b0001_0000;
        assert_eq!(leading_zero_bits(&h), 11);
        assert_eq!(leading_zero_bits(&[0; 32]), 256);
    }
}
