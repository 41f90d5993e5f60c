//! The page a person uses, driven in headless Chromium through chromedriver against a real node
//! process: identity key held by WebCrypto, registration, one challenge of each human family
//! answered through the page's own controls, the verdicts and reason codes it shows, a phone-
//! width layout, and screenshots under `target/browser-artifacts/`.
//!
//! The test knows the right answers because it holds the node's key file: it derives the
//! window secret and regenerates the challenge exactly as the issuer did.

use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::{Class, Family, Generated, Registry};
use hco_oracle::{IdentityId, NetworkParams, secret};
use serde_json::{Value, json};

use crate::support::{Browser, Single, get, post};

pub(crate) const ENTER: &str = "\u{E007}";

/// The human policy of the test nodes: `steps` steps (a single family fills the drawn ones, or
/// names itself for presence) and one spare.
fn policy(steps: usize, step: &str) -> String {
    let list = vec![format!("\"{step}\""); steps].join(", ");
    format!("[network.policy.human]\nsteps = [{list}]\nspares = 1\n")
}

/// A node whose human identities get only `family` in `steps` steps, with that family's
/// deadline. The human-speed floor is off here (the page's flow is under test, not speed).
pub(crate) fn node_with(family: &str, deadline: &str, steps: usize) -> Single {
    let step = if family == "presence" {
        family
    } else {
        "cognitive"
    };
    Single::start(&format!(
        "[network]\nwindow = \"1h\"\ngrace = \"1m\"\n{}\
         [[network.families]]\nname = \"{family}\"\ndeadline = \"{deadline}\"\ndifficulty = {}\nmin_solve = \"0s\"\n",
        policy(steps, step),
        Registry::builtin()
            .get(family)
            .unwrap_or_else(|| panic!("`{family}` is not in the registry"))
            .default_params()
            .difficulty
    ))
}

/// Regenerates challenge `(id, t, j)`, issued as `family`, as the node's issuer did.
pub(crate) fn regenerate(
    node: &Single,
    id: &str,
    t: u64,
    j: u32,
    family: &str,
) -> (Generated, std::sync::Arc<dyn Family>) {
    regenerate_at(
        &node.dir.path().join("node.key"),
        &node.url,
        id,
        t,
        j,
        family,
    )
}

/// Regenerates challenge `(id, t, j)` as the issuer whose key file is `issuer_key` did; `url`
/// is any node of the network.
pub(crate) fn regenerate_at(
    issuer_key: &std::path::Path,
    url: &str,
    id: &str,
    t: u64,
    j: u32,
    family: &str,
) -> (Generated, std::sync::Arc<dyn Family>) {
    let file: Value = serde_json::from_slice(&std::fs::read(issuer_key).unwrap()).unwrap();
    let seed: [u8; 32] = hex::decode(file["secret_key"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let w_t = secret::window_secret(&secret::node_secret(&SigningKey::from_bytes(&seed)), t);
    let params: NetworkParams =
        serde_json::from_value(get(url, "/v1/params").unwrap()["params"].clone()).unwrap();
    let registry = Registry::builtin();
    let registered = get(url, &format!("/v1/identities/{id}")).unwrap();
    let profile = hco_oracle::Profile {
        class: Class::Human,
        visual_opt_out: registered["visual_opt_out"] == true,
    };
    let id: IdentityId = id.parse().unwrap();
    let (config, generated) =
        hco_oracle::derive_challenge(&params, &registry, &w_t, profile, &id, t, j, family).unwrap();
    (generated, registry.get(&config.name).unwrap().clone())
}

/// Opens the page and waits until it has loaded its state.
pub(crate) fn open(b: &Browser, node: &Single) {
    open_at(b, &node.url);
}

/// Opens the page at `url`.
fn open_at(b: &Browser, url: &str) {
    b.goto(url);
    let start = Instant::now();
    while b.script("return document.body.dataset.ready || ''", json!([])) != "true" {
        let error = b.script(
            "return document.getElementById('error').textContent",
            json!([]),
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the page did not load: {error}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn wait_text(b: &Browser, css: &str, ok: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let text = b.text(css);
        if ok(&text) {
            return text;
        }
        let error = b.script(
            "return document.getElementById('error').textContent",
            json!([]),
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{css} shows `{text}`; page error: `{error}`"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Creates an identity in the page (or imports `key`), registers it, returns its id.
pub(crate) fn identity_and_register(b: &Browser, key: Option<&SigningKey>) -> String {
    match key {
        Some(key) => {
            b.click("#import-details summary");
            b.fill("#import-key", &hex::encode(key.to_bytes()));
            b.click("#import");
        }
        None => b.click("#create"),
    }
    let id = wait_text(b, "#identity-id", |t| t.len() == 64);
    wait_text(b, "#status", |t| t == "not registered");
    b.click("#register:not([disabled])");
    wait_text(b, "#status", |t| t.starts_with("pending"));
    id
}

/// The index of the next challenge, as the page shows it.
fn next_j(b: &Browser) -> u32 {
    let text = wait_text(b, "#next-step", |t| t.starts_with("challenge "));
    text["challenge ".len()..].parse().unwrap()
}

/// Asks for the next challenge; returns its index and the regenerated challenge.
pub(crate) fn get_challenge(
    b: &Browser,
    node: &Single,
    id: &str,
) -> (u32, Generated, std::sync::Arc<dyn Family>) {
    let j = next_j(b);
    b.script(
        "document.getElementById('challenge').dataset.family = ''",
        json!([]),
    );
    b.click("#get:not([disabled])");
    b.wait_for("#challenge");
    let start = Instant::now();
    let family = loop {
        let family = b.script(
            "return document.getElementById('challenge').dataset.family || ''",
            json!([]),
        );
        let family = family.as_str().unwrap_or("").to_owned();
        if !family.is_empty() {
            break family;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no challenge shown"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let t: u64 = b.text("#window-t").parse().unwrap();
    let (generated, family) = regenerate(node, id, t, j, &family);
    assert_eq!(
        b.script(
            "return document.getElementById('prompt-text').textContent",
            json!([])
        ),
        generated.prompt.text,
        "the page shows the prompt the issuer generated"
    );
    (j, generated, family)
}

/// Sends the typed answer and returns the verdict code the page shows.
pub(crate) fn send_text(b: &Browser, answer: &str) -> String {
    b.fill("#answer", answer);
    b.click("#send");
    verdict(b)
}

pub(crate) fn verdict(b: &Browser) -> String {
    wait_text(b, "#verdict-code", |t| !t.is_empty())
}

pub(crate) fn reference(generated: &Generated, family: &dyn Family) -> String {
    String::from_utf8(family.reference_answer(&generated.key).unwrap()).unwrap()
}

/// The page's BLAKE3 and signing digests agree with the Rust ones, byte for byte.
fn check_digests(b: &Browser) {
    let lengths = [
        0usize, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 2049, 3072, 5000,
    ];
    let js = b.script_async(
        "const done = arguments[arguments.length - 1];
         Promise.all([import('/static/blake3.js'), import('/static/protocol.js')]).then(([b3, p]) => {
           const input = (n) => Uint8Array.from({ length: n }, (_, i) => i % 251);
           done({
             hash: arguments[0].map((n) => p.toHex(b3.hash(input(n)))),
             derived: arguments[0].map((n) => p.toHex(b3.deriveKey('hco test v1', input(n)))),
             signed: p.toHex(p.digest('hco register v1', [input(1), input(32), input(0), input(700)])),
           });
         }).catch((e) => done({ error: String(e) }));",
        json!([lengths]),
    );
    assert!(js.get("error").is_none(), "{js}");
    for (i, n) in lengths.iter().enumerate() {
        let input: Vec<u8> = (0..*n).map(|i| (i % 251) as u8).collect();
        assert_eq!(
            js["hash"][i],
            blake3::hash(&input).to_hex().as_str(),
            "hash of {n} bytes"
        );
        assert_eq!(
            js["derived"][i],
            hex::encode(blake3::derive_key("hco test v1", &input)),
            "derive_key of {n} bytes"
        );
    }
    let input = |n: usize| (0..n).map(|i| (i % 251) as u8).collect::<Vec<u8>>();
    let rust = hco_oracle::sign::digest(
        "hco register v1",
        &[&input(1), &input(32), &input(0), &input(700)],
    );
    assert_eq!(js["signed"], hex::encode(rust.0));
}

/// At 390 px wide nothing scrolls sideways and every control stays inside the screen.
pub(crate) fn check_narrow(b: &Browser, name: &str) {
    b.resize(390, 1400);
    let layout = b.script(
        "const w = document.documentElement.clientWidth;
         const wide = [...document.querySelectorAll('button, input, textarea, img, #arena')]
           .filter((e) => e.offsetParent && e.getBoundingClientRect().right > w + 1)
           .map((e) => e.id || e.tagName);
         return { w, scroll: document.documentElement.scrollWidth, wide };",
        json!([]),
    );
    assert!(layout["w"].as_u64().unwrap() <= 390, "{layout}");
    assert!(
        layout["scroll"].as_u64() <= layout["w"].as_u64(),
        "the page scrolls sideways on a phone: {layout}"
    );
    assert_eq!(layout["wide"], json!([]), "{layout}");
    screenshot(b, name);
    b.resize(1000, 1400);
}

#[test]
fn devnet_browser_arithmetic_round_trip_and_rejections() {
    let b = Browser::start();
    let node = node_with("arithmetic_reasoning", "60s", 1);
    open(&b, &node);
    check_digests(&b);

    // An imported key shows the id Rust computes for it.
    let key = SigningKey::from_bytes(&[7; 32]);
    let id = identity_and_register(&b, Some(&key));
    assert_eq!(id, hex::encode(key.verifying_key().to_bytes()));

    let (j, generated, family) = get_challenge(&b, &node, &id);
    assert_eq!(j, 0);
    let right = reference(&generated, family.as_ref());
    assert_eq!(
        b.script(
            "return document.getElementById('answer').getAttribute('inputmode')",
            json!([])
        ),
        "numeric"
    );
    let wrong = (right.parse::<i64>().unwrap() + 1).to_string();
    assert_eq!(send_text(&b, &wrong), "answer_mismatch");
    screenshot(&b, "arithmetic_reasoning_wrong");
    // The first answer is final: the right one afterwards, signed by the same key, is refused.
    let t: u64 = b.text("#window-t").parse().unwrap();
    let (status, challenge) = post(
        &node.url,
        "/v1/challenges",
        &hco_oracle::SignedRequest::new(&key, t, 0),
    );
    assert_eq!(status, 200, "{challenge}");
    let signed: hco_oracle::SignedChallenge =
        serde_json::from_value(challenge["challenge"].clone()).unwrap();
    let again = hco_oracle::Response::new(&key, signed, right.clone().into_bytes());
    let (status, body) = post(&node.url, "/v1/responses", &again);
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("already_answered"))
    );

    // The spare: the next challenge of the sequence, answered right.
    let (j, generated, family) = get_challenge(&b, &node, &id);
    assert_eq!(j, 1);
    assert_eq!(
        send_text(&b, &reference(&generated, family.as_ref())),
        "accepted"
    );
    screenshot(&b, "arithmetic_reasoning");
    wait_text(&b, "#status", |t| t.starts_with("active"));
    wait_text(&b, "#next-step", |t| t.starts_with("nothing"));
    check_narrow(&b, "arithmetic_reasoning_phone");
}

#[test]
fn devnet_browser_late_answer_is_expired() {
    let b = Browser::start();
    let node = node_with("arithmetic_reasoning", "2s", 1);
    open(&b, &node);
    let id = identity_and_register(&b, None);
    let (_, generated, family) = get_challenge(&b, &node, &id);
    wait_text(&b, "#countdown", |t| t == "time is up");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        send_text(&b, &reference(&generated, family.as_ref())),
        "challenge_expired"
    );
    screenshot(&b, "arithmetic_reasoning_expired");
}

#[test]
fn devnet_browser_human_families() {
    let b = Browser::start();
    for name in ["interactive_reasoning", "visual_match"] {
        let steps = 1;
        let node = node_with(name, "60s", steps);
        open(&b, &node);
        let id = identity_and_register(&b, None);
        for _ in 0..steps {
            let (_, generated, family) = get_challenge(&b, &node, &id);
            let data: Value = serde_json::from_slice(&generated.prompt.data).unwrap();
            let shot = match data["mode"].as_str() {
                Some(mode) => format!("{name}_{mode}"),
                None => name.to_owned(),
            };
            let answer = reference(&generated, family.as_ref());
            match name {
                "interactive_reasoning" => play_interactive(&b, &answer, &shot),
                _ => {
                    // visual_match: the letters typed into the field (lower case is fine).
                    b.fill("#answer", &answer.to_ascii_lowercase());
                    screenshot(&b, &shot);
                    check_narrow(&b, &format!("{shot}_phone"));
                    b.click("#send");
                }
            }
            assert_eq!(verdict(&b), "accepted", "{shot}");
            screenshot(&b, &format!("{shot}_accepted"));
        }
    }
}

/// Marks picture point `(x, y)` as a click on the scene image, where a person would click.
pub(crate) fn click_scene(b: &Browser, x: &str, y: &str) {
    b.script(
        "const img = document.getElementById('scene'); const r = img.getBoundingClientRect();\
         const k = img.clientWidth / img.naturalWidth;\
         img.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: r.left + arguments[0] * k, clientY: r.top + arguments[1] * k }));",
        json!([x.parse::<f64>().unwrap(), y.parse::<f64>().unwrap()]),
    );
}

/// Plays both stages of interactive_reasoning from the reference answer `x,y|x,y;x,y…`, with
/// a person's pauses: one click, Send, the second picture, each shape of the kind, Send.
fn play_interactive(b: &Browser, answer: &str, shot: &str) {
    let (first, second) = answer.split_once('|').unwrap();
    std::thread::sleep(Duration::from_millis(900));
    let (x, y) = first.split_once(',').unwrap();
    click_scene(b, x, y);
    screenshot(b, &format!("{shot}_stage1"));
    b.click("#send");
    wait_text(b, "#prompt-text", |t| t.starts_with("New picture"));
    std::thread::sleep(Duration::from_millis(700));
    for c in second.split(';') {
        let (x, y) = c.split_once(',').unwrap();
        click_scene(b, x, y);
        std::thread::sleep(Duration::from_millis(300));
    }
    screenshot(b, &format!("{shot}_stage2"));
    b.click("#send");
}

pub(crate) fn screenshot(b: &Browser, name: &str) {
    b.script(
        "document.getElementById('challenge-h').scrollIntoView({ block: 'start' })",
        json!([]),
    );
    b.screenshot(name);
}

/// The page at `localhost` (WebAuthn refuses IP addresses as relying-party ids).
pub(crate) fn open_localhost(b: &Browser, node: &Single) {
    open_at(b, &node.url.replace("127.0.0.1", "localhost"));
}

/// Adds a WebDriver virtual authenticator (CTAP2 over USB, with user verification); returns its id.
pub(crate) fn virtual_authenticator(b: &Browser) -> String {
    let id = b.command(
        "POST",
        "/webauthn/authenticator",
        json!({
            "protocol": "ctap2",
            "transport": "usb",
            "hasResidentKey": false,
            "hasUserVerification": true,
            "isUserConsenting": true,
            "isUserVerified": true,
        }),
    );
    id.as_str().unwrap().to_owned()
}

/// Enrols a passkey through the page; returns the virtual authenticator's credentials.
pub(crate) fn enrol_passkey(b: &Browser, authenticator: &str) -> Value {
    b.click("#enrol:not([disabled])");
    wait_text(b, "#passkey-status", |t| t == "1 enrolled");
    b.command(
        "GET",
        &format!("/webauthn/authenticator/{authenticator}/credentials"),
        Value::Null,
    )
}

/// Records the body of every `POST /v1/responses` the page sends, in `window.sentResponses`.
fn record_responses(b: &Browser) {
    b.script(
        "window.sentResponses = [];
         const send = window.fetch;
         window.fetch = (url, init) => {
           if (url === '/v1/responses') window.sentResponses.push(init.body);
           return send(url, init);
         };",
        json!([]),
    );
}

/// Makes the page's next assertions arrive with the user-present flag cleared, as from an
/// authenticator that was not touched. (A real authenticator signs its flags, so the node reads
/// the flag before the signature: the assertion is refused for the missing presence.)
fn clear_user_presence(b: &Browser) {
    b.script(
        "const get = navigator.credentials.get.bind(navigator.credentials);
         navigator.credentials.get = async (options) => {
           const cred = await get(options);
           const data = new Uint8Array(cred.response.authenticatorData.slice(0));
           data[32] &= ~0x01;
           const response = {
             authenticatorData: data.buffer,
             clientDataJSON: cred.response.clientDataJSON,
             signature: cred.response.signature,
             userHandle: cred.response.userHandle,
           };
           return { id: cred.id, rawId: cred.rawId, type: cred.type, response };
         };",
        json!([]),
    );
}

#[test]
fn devnet_browser_presence_with_a_virtual_authenticator() {
    let b = Browser::start();
    let authenticator = virtual_authenticator(&b);
    let node = node_with("presence", "60s", 1);
    open_localhost(&b, &node);
    let id = identity_and_register(&b, None);
    screenshot_section(&b, "passkey-h", "presence_enrol");
    let credentials = enrol_passkey(&b, &authenticator);
    assert_eq!(credentials.as_array().unwrap().len(), 1, "{credentials}");
    let stored = get(&node.url, &format!("/v1/identities/{id}/passkeys")).unwrap();
    assert_eq!(stored["passkeys"].as_array().unwrap().len(), 1, "{stored}");

    // Presence missing: refused, and final for that challenge.
    record_responses(&b);
    get_challenge(&b, &node, &id);
    screenshot(&b, "presence");
    check_narrow(&b, "presence_phone");
    clear_user_presence(&b);
    b.click("#presence-go:not([disabled])");
    assert_eq!(verdict(&b), "user_presence_missing");
    screenshot(&b, "presence_user_presence_missing");

    // The spare try, with the authenticator as it is: accepted.
    b.script("delete navigator.credentials.get", json!([]));
    let (j, _, _) = get_challenge(&b, &node, &id);
    assert_eq!(j, 1);
    b.click("#presence-go:not([disabled])");
    wait_text(&b, "#verdict-code", |t| t == "accepted");
    screenshot(&b, "presence_accepted");

    // The accepted assertion sent again, byte for byte: a replay.
    let replayed = b.script_async(
        "const [done] = arguments;
         const body = window.sentResponses[window.sentResponses.length - 1];
         fetch('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body })
           .then((r) => r.json()).then((j) => done(j.code || j.verdict));",
        json!([]),
    );
    assert_eq!(replayed, "already_answered");
}

#[test]
fn devnet_browser_presence_late_assertion_is_expired() {
    let b = Browser::start();
    let authenticator = virtual_authenticator(&b);
    let node = node_with("presence", "2s", 1);
    open_localhost(&b, &node);
    let id = identity_and_register(&b, None);
    enrol_passkey(&b, &authenticator);
    get_challenge(&b, &node, &id);
    wait_text(&b, "#countdown", |t| t == "time is up");
    std::thread::sleep(Duration::from_millis(300));
    b.click("#presence-go:not([disabled])");
    assert_eq!(verdict(&b), "challenge_expired");
    screenshot(&b, "presence_expired");
}

/// A screenshot of one section of the page.
fn screenshot_section(b: &Browser, heading: &str, name: &str) {
    b.script(
        "document.getElementById(arguments[0]).scrollIntoView({ block: 'start' })",
        json!([heading]),
    );
    b.screenshot(name);
}

#[test]
fn devnet_browser_visual_opt_out_gets_only_non_visual_challenges() {
    let b = Browser::start();
    let node = Single::start(&format!(
        "[network]\nwindow = \"1h\"\ngrace = \"1m\"\n{}\
         [[network.families]]\nname = \"visual_match\"\ndeadline = \"60s\"\ndifficulty = 5\n\
         [[network.families]]\nname = \"attention\"\ndeadline = \"60s\"\ndifficulty = 2\n\
         [[network.families]]\nname = \"interactive_reasoning\"\ndeadline = \"60s\"\ndifficulty = 2\nmin_solve = \"0s\"\n\
         [[network.families]]\nname = \"arithmetic_reasoning\"\ndeadline = \"60s\"\ndifficulty = 2\nmin_solve = \"0s\"\n",
        policy(6, "cognitive")
    ));
    open(&b, &node);
    b.click("#create");
    let id = wait_text(&b, "#identity-id", |t| t.len() == 64);
    wait_text(&b, "#status", |t| t == "not registered");
    b.click("#visual-opt-out");
    b.click("#register:not([disabled])");
    wait_text(&b, "#status", |t| t.contains("no visual challenges"));
    let registered = get(&node.url, &format!("/v1/identities/{id}")).unwrap();
    assert_eq!(registered["visual_opt_out"], true, "{registered}");
    for j in 0..6 {
        let (_, generated, family) = get_challenge(&b, &node, &id);
        // Every human family but arithmetic is visual (interactive_reasoning is pictures).
        assert_eq!(generated.prompt.family, "arithmetic_reasoning", "j = {j}");
        // Each step answered, so the next one opens.
        let answer = reference(&generated, family.as_ref());
        assert_eq!(send_text(&b, &answer), "accepted", "j = {j}");
    }
    screenshot(&b, "visual_opt_out");
}

/// The AAGUID of Chromium's WebDriver virtual authenticator.
pub(crate) const CHROMIUM_VIRTUAL_AAGUID: &str = "01020304-0506-0708-0102-030405060708";

#[test]
fn devnet_browser_strict_presence_keeps_an_honest_person_active() {
    // A production-shaped presence policy: strict attestation against a CA (here the test CA
    // of Chromium's virtual authenticator), its AAGUID allow-listed, user verification
    // required, no zero counters; presence first, then a drawn step.
    let ca = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../challenges/src/presence/chromium_virtual_ca.pem"
    );
    let b = Browser::start();
    let authenticator = virtual_authenticator(&b);
    let node = Single::start(&format!(
        "[network]\nwindow = \"1h\"\ngrace = \"1m\"\n\
         [network.policy.human]\nsteps = [\"presence\", \"cognitive\"]\nspares = 1\n\
         [network.presence]\nattestation = \"strict\"\nattestation_ca_files = [\"{ca}\"]\n\
         aaguids = [\"{CHROMIUM_VIRTUAL_AAGUID}\"]\nuser_verification = \"required\"\n\
         allow_zero_counter = false\n\
         [[network.families]]\nname = \"presence\"\ndeadline = \"60s\"\ndifficulty = 1\nmin_solve = \"0s\"\n\
         [[network.families]]\nname = \"arithmetic_reasoning\"\ndeadline = \"60s\"\ndifficulty = 3\nmin_solve = \"0s\"\n"
    ));
    let status = get(&node.url, "/healthz").unwrap();
    assert_eq!(
        status["presence"]["software_authenticators_accepted"], false,
        "{status}"
    );
    open_localhost(&b, &node);
    let id = identity_and_register(&b, None);
    enrol_passkey(&b, &authenticator);

    let (j, _, _) = get_challenge(&b, &node, &id);
    assert_eq!(j, 0);
    b.click("#presence-go:not([disabled])");
    wait_text(&b, "#verdict-code", |t| t == "accepted");
    let (j, generated, family) = get_challenge(&b, &node, &id);
    assert_eq!(
        (j, generated.prompt.family.as_str()),
        (1, "arithmetic_reasoning")
    );
    assert_eq!(
        send_text(&b, &reference(&generated, family.as_ref())),
        "accepted"
    );
    wait_text(&b, "#status", |t| t.starts_with("active"));
    screenshot(&b, "presence_strict_active");
}
