//! A person links a wallet at the page: the page builds the statement, signs it with the
//! identity key WebCrypto holds, asks the wallet (an EIP-1193 provider) for its `personal_sign`
//! of the same text, and posts both. The wallet here is a stand-in whose signature the test
//! makes with a secp256k1 key, as a wallet extension would; without a wallet the page says so.

use std::time::{Duration, Instant};

use hco_oracle::Digest;
use hco_oracle::link::AccountLink;
use serde_json::json;

use crate::browser::{identity_and_register, open, wait_text};
use crate::links::{personal_sign, wallet};
use crate::support::{Browser, Single, get};

#[test]
fn devnet_browser_links_a_wallet_signed_by_both_keys() {
    let b = Browser::start();
    let node = Single::start("[network]\ndevelopment = true\n");
    open(&b, &node);
    let id = identity_and_register(&b, None);

    // No wallet in this browser: the page says how else to link.
    b.click("#link:not([disabled])");
    wait_text(&b, "#error", |t| t.starts_with("no_wallet"));
    assert!(
        !b.script(
            "return document.getElementById('link-no-wallet').hidden",
            json!([])
        )
        .as_bool()
        .unwrap()
    );

    // A wallet on chain 1 whose signature the test makes when the page asks for it.
    let (key, account) = wallet(7);
    let address = account.trim_start_matches("eip155:1:");
    b.script(
        "const address = arguments[0];
         window.ethereum = { request: async ({ method, params }) => {
           if (method === 'eth_requestAccounts') return [address.toUpperCase().replace('0X', '0x')];
           if (method === 'eth_chainId') return '0x1';
           if (method === 'personal_sign') {
             window.toSign = params;
             return new Promise((resolve) => { window.signed = resolve; });
           }
           throw new Error(`unsupported: ${method}`);
         } };",
        json!([address]),
    );
    b.click("#link:not([disabled])");
    let start = Instant::now();
    let params = loop {
        let p = b.script("return window.toSign || null", json!([]));
        if !p.is_null() {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the page never asked the wallet"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // What the wallet is asked to sign is the statement, byte for byte, with the account in
    // canonical (lower-case) form, the network's digest and the current window.
    let text = String::from_utf8(
        hex::decode(params[0].as_str().unwrap().trim_start_matches("0x")).unwrap(),
    )
    .unwrap();
    assert_eq!(params[1].as_str().unwrap().to_lowercase(), address);
    let digest: Digest = get(&node.url, "/v1/params").unwrap()["digest"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let t = get(&node.url, "/v1/windows/current").unwrap()["t"]
        .as_u64()
        .unwrap();
    let expected = |t: u64| {
        AccountLink::new(digest, id.parse().unwrap(), &account, t)
            .unwrap()
            .text()
    };
    let from_window = (t.saturating_sub(1)..=t)
        .find(|w| expected(*w) == text)
        .unwrap_or_else(|| panic!("the page asked the wallet to sign {text:?}"));
    b.script(
        "window.signed(arguments[0])",
        json!([personal_sign(&key, &text)]),
    );

    // The node recorded it: both signatures held.
    let shown = wait_text(&b, "#link-status", |t| t.starts_with("eip155:"));
    assert_eq!(shown, format!("{account} from window {from_window}"));
    assert_eq!(b.text("#error"), "");
}
