//! A person at the page through a production-shaped ceremony: a global slot with a cognitive
//! step, then three touch prompts on the beats that end the slot (each answered within a 5 s
//! reaction window), with strict attestation. The page sounds each prompt's cue and asks the
//! browser for the passkey itself; the "person" (Chromium's virtual authenticator behind a
//! 1.5 s reaction) touches after the cue, as a person at the page would.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::browser::{
    CHROMIUM_VIRTUAL_AAGUID, enrol_passkey, identity_and_register, open_localhost, reference,
    regenerate, send_text, virtual_authenticator, wait_text,
};
use crate::support::{Browser, Single, get};

/// A person's reaction to the cue: the time from the prompt's opening to the touch.
const REACTION_MS: u64 = 1_500;

#[test]
fn devnet_browser_touch_prompts_keep_an_honest_person_active() {
    let ca = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../challenges/src/presence/chromium_virtual_ca.pem"
    );
    let b = Browser::start();
    let authenticator = virtual_authenticator(&b);
    let node = Single::start(&format!(
        "[network]\nwindow = \"60s\"\ngrace = \"10s\"\nslot_mode = \"global\"\nslot = \"40s\"\n\
         prompt_jitter = \"1s\"\n\
         [network.policy.human]\nsteps = [\"cognitive\", \"presence\", \"presence\", \"presence\"]\nspares = 1\n\
         [network.presence]\nattestation = \"strict\"\nattestation_ca_files = [\"{ca}\"]\n\
         aaguids = [\"{CHROMIUM_VIRTUAL_AAGUID}\"]\nuser_verification = \"required\"\n\
         allow_zero_counter = false\n\
         [[network.families]]\nname = \"presence\"\ndeadline = \"5s\"\ndifficulty = 1\nmin_solve = \"500ms\"\n\
         [[network.families]]\nname = \"arithmetic_reasoning\"\ndeadline = \"8s\"\ndifficulty = 3\nmin_solve = \"0s\"\n"
    ));
    open_localhost(&b, &node);
    let id = identity_and_register(&b, None);
    enrol_passkey(&b, &authenticator);
    // The person's reaction: every assertion the page asks for comes 1.5 s later.
    b.script(
        &format!(
            "const get = navigator.credentials.get.bind(navigator.credentials);
             navigator.credentials.get = (options) =>
               new Promise((r) => setTimeout(r, {REACTION_MS})).then(() => get(options));"
        ),
        json!([]),
    );

    // Wait for a slot this identity can play from its first beat.
    let start = Instant::now();
    let t = loop {
        let w = get(&node.url, &format!("/v1/windows/current?id={id}")).unwrap();
        let now = w["now"].as_u64().unwrap();
        let slot_start = w["slot"]["start"].as_u64().unwrap();
        // Clicked 2 s before the slot, the page waits for it by itself.
        if now + 2_000 < slot_start {
            std::thread::sleep(Duration::from_millis(slot_start - now - 2_000));
            break w["t"].as_u64().unwrap();
        }
        assert!(start.elapsed() < Duration::from_secs(90), "no slot came");
        std::thread::sleep(Duration::from_millis(500));
    };
    // One click: the page asks for each step as it opens from then on. The cognitive step,
    // answered by the person; then the prompts, each touched 1.5 s after its cue.
    b.click("#get:not([disabled])");
    let family = wait_family_of(&b, 0);
    let (generated, family) = regenerate(&node, &id, t, 0, &family);
    assert_eq!(
        send_text(&b, &reference(&generated, family.as_ref())),
        "accepted"
    );
    for j in 1..4 {
        let code = wait_verdict_of(&b, j);
        assert_eq!(code, "accepted", "prompt {j}");
    }
    wait_text(&b, "#status", |s| s.starts_with("active"));

    // The node issued every prompt on its beat and each answer inside its reaction window.
    let w = get(&node.url, &format!("/v1/windows/current?id={id}")).unwrap();
    assert_eq!(w["identity"]["steps_passed"], 4, "{w}");
}

/// The verdict the page shows for challenge `j` (read from the sent response's reply).
fn wait_verdict_of(b: &Browser, j: u32) -> String {
    let start = Instant::now();
    loop {
        let seen = b.script(
            "const m = document.getElementById('verdict-message').textContent;
             return [document.getElementById('verdict-code').textContent, m];",
            json!([]),
        );
        let code = seen[0].as_str().unwrap_or("");
        let message = seen[1].as_str().unwrap_or("");
        if code == "accepted" && message.starts_with(&format!("Challenge {j} ")) {
            return code.to_owned();
        }
        if !code.is_empty() && !["accepted", "step_not_open"].contains(&code) {
            return code.to_owned();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no verdict for prompt {j}: `{code}` `{message}`"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The family of challenge `j` once the page shows it.
fn wait_family_of(b: &Browser, j: u32) -> String {
    let start = Instant::now();
    loop {
        let family = b.script(
            "const f = document.getElementById('challenge');
             return f.hidden ? '' : (f.dataset.family || '');",
            json!([]),
        );
        let family = family.as_str().unwrap_or("");
        if !family.is_empty() && family != "presence" {
            return family.to_owned();
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "challenge {j} did not appear"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
