//! Big-endian keys, window first: a window is one range scan and old windows prune by range.

use crate::IdentityId;

/// `t`
pub fn window(t: u64) -> [u8; 8] {
    t.to_be_bytes()
}

/// `t ‖ id`
pub fn window_id(t: u64, id: &IdentityId) -> [u8; 40] {
    let mut k = [0u8; 40];
    k[..8].copy_from_slice(&t.to_be_bytes());
    k[8..].copy_from_slice(&id.0);
    k
}

/// `t ‖ id ‖ j`
pub fn window_id_index(t: u64, id: &IdentityId, j: u32) -> [u8; 44] {
    let mut k = [0u8; 44];
    k[..40].copy_from_slice(&window_id(t, id));
    k[40..].copy_from_slice(&j.to_be_bytes());
    k
}

/// `t ‖ node`
pub fn window_node(t: u64, node: &[u8; 32]) -> [u8; 40] {
    let mut k = [0u8; 40];
    k[..8].copy_from_slice(&t.to_be_bytes());
    k[8..].copy_from_slice(node);
    k
}

/// The identity in a `t ‖ id …` key.
pub fn id_of(key: &[u8]) -> Option<IdentityId> {
    IdentityId::from_slice(key.get(8..40)?)
}

/// The window of a `t …` key.
pub fn t_of(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_by_window_then_identity_then_index() {
        let a = window_id_index(1, &IdentityId([9; 32]), 7);
        let b = window_id_index(2, &IdentityId([0; 32]), 0);
        let c = window_id_index(2, &IdentityId([0; 32]), 1);
        assert!(a < b && b < c);
        assert_eq!(t_of(&b), Some(2));
        assert_eq!(id_of(&a), Some(IdentityId([9; 32])));
        assert!(id_of(&[0; 10]).is_none());
    }
}
