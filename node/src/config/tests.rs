//! The shipped configurations load, and each section refuses what it must.

use super::*;
use hco_oracle::NodeId;

fn shipped() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("devnet")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn every_shipped_config_loads_and_its_parameters_validate() {
    let paths = shipped();
    assert!(paths.len() >= 6, "{paths:?}");
    for path in paths {
        let config = Config::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        let me = match config.network.committee.first() {
            Some(first) => first.parse().unwrap(),
            None => NodeId([7; 32]),
        };
        let params = config
            .network
            .params(me)
            .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        params
            .validate(&hco_challenges::Registry::builtin())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        config
            .network
            .refuse_baseline_only()
            .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    }
}

/// Production with the lock families as the agent class's only families (`narrative_chain`
/// dropped): a script passes every agent step, so the node refuses to start, naming the
/// class and the families, unless the config says it is a development network.
#[test]
fn an_agent_policy_of_baselines_alone_is_refused_outside_development() {
    let prod = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/prod.toml");
    let shipped = Config::load(&prod).unwrap();
    shipped.network.refuse_baseline_only().unwrap();
    let locks = [
        "obfuscated_text_lock",
        "multi_pass_lock",
        "semantic_math_lock",
    ];
    for steps in [["cognitive"], ["multi_pass_lock"]] {
        let mut c = shipped.clone();
        c.network.families.retain(|f| f.name != "narrative_chain");
        c.network.families.extend(locks.map(|name| FamilySection {
            name: name.into(),
            deadline: Duration::from_secs(45),
            difficulty: 1,
            min_solve: None,
        }));
        c.network.policy.agent.steps = steps.map(|s| s.to_string().into()).to_vec();
        // The parameters themselves are valid: only the start-time check refuses them.
        let mut network = c.network.clone();
        network.committee.clear();
        let params = network.params(NodeId([7; 32])).unwrap();
        params
            .validate(&hco_challenges::Registry::builtin())
            .unwrap();
        let err = format!("{:#}", c.network.refuse_baseline_only().unwrap_err());
        assert!(
            err.contains("network.policy.agent")
                && err.contains("agent class")
                && err.contains("multi_pass_lock")
                && err.contains("development = true"),
            "{steps:?}: {err}"
        );
        // A named step takes that family only; a drawn one any of the three.
        let drawn = locks.iter().filter(|l| err.contains(*l)).count();
        assert_eq!(drawn, if steps[0] == "cognitive" { 3 } else { 1 }, "{err}");
        c.network.development = true;
        c.network.refuse_baseline_only().unwrap();
    }
    // Without any agent family the class is not served at all: nothing to refuse.
    let mut c = shipped.clone();
    c.network.families.retain(|f| f.name != "narrative_chain");
    c.network.policy.agent.steps = vec!["cognitive".to_string().into()];
    c.network.refuse_baseline_only().unwrap();
}

#[test]
fn devnet_configs_agree_on_the_network() {
    let digests: std::collections::BTreeSet<_> = (0..4)
        .map(|i| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../configs/devnet/node{i}.toml"));
            let c = Config::load(&path).unwrap();
            c.network
                .params(c.network.committee[i].parse().unwrap())
                .unwrap()
                .digest()
        })
        .collect();
    assert_eq!(digests.len(), 1, "devnet nodes would refuse each other");
}

#[test]
fn unknown_fields_and_bad_values_are_errors_that_name_them() {
    let err = toml::from_str::<Config>("[http]\nlisen = \"x\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("lisen"), "{err}");
    let c: Config = toml::from_str("[network]\nwindow = \"0s\"").unwrap();
    let err = c
        .network
        .params(NodeId([7; 32]))
        .unwrap()
        .validate(&hco_challenges::Registry::builtin())
        .unwrap_err();
    assert_eq!(err.field, "window_ms");
}

#[test]
fn the_metrics_listener_is_off_unless_configured() {
    let off = |text: &str| toml::from_str::<Config>(text).unwrap().metrics.listen;
    assert_eq!(off(""), None);
    assert_eq!(off("[metrics]\nlisten = \"\"\n"), None);
    assert_eq!(
        off("[metrics]\nlisten = \"127.0.0.1:9464\"\n"),
        Some(([127, 0, 0, 1], 9464).into())
    );
    let err = toml::from_str::<Config>("[metrics]\nlisten = \"nowhere\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("listen"), "{err}");
    assert!(toml::from_str::<Config>("[metrics]\npath = \"/m\"\n").is_err());
    // What `save` writes reads back the same, on or off.
    for listen in [None, Some(([127, 0, 0, 1], 9464).into())] {
        let mut c = Config::default();
        c.metrics.listen = listen;
        let back: Config = toml::from_str(&toml::to_string_pretty(&c).unwrap()).unwrap();
        assert_eq!(back.metrics.listen, listen);
    }
}

#[test]
fn a_client_nice_beyond_the_systems_range_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.toml");
    std::fs::write(&path, "[node]\nclient_nice = 20\n").unwrap();
    let err = format!("{:#}", Config::load(&path).unwrap_err());
    assert!(err.contains("node.client_nice"), "{err}");
    std::fs::write(&path, "[node]\nclient_nice = 19\n").unwrap();
    assert_eq!(Config::load(&path).unwrap().node.client_nice, 19);
    std::fs::write(&path, "").unwrap();
    assert_eq!(Config::load(&path).unwrap().node.client_nice, CLIENT_NICE);
}

#[test]
fn http_connection_settings_have_defaults_and_bad_ones_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.toml");
    std::fs::write(&path, "").unwrap();
    let http = Config::load(&path).unwrap().http;
    assert_eq!(http.header_read_timeout, Duration::from_secs(10));
    assert_eq!(http.keep_alive_timeout, Duration::from_secs(30));
    assert_eq!(http.limits.per_ip_connections, 256);
    for (text, field) in [
        (
            "[http]\nheader_read_timeout = \"0s\"\n",
            "http.header_read_timeout",
        ),
        (
            "[http]\nkeep_alive_timeout = \"0s\"\n",
            "http.keep_alive_timeout",
        ),
        (
            "[http.limits]\nper_ip_connections = 10\nmax_connections = 5\n",
            "http.limits.per_ip_connections",
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = format!("{:#}", Config::load(&path).unwrap_err());
        assert!(err.contains(field), "{err}");
    }
}

#[test]
fn attestation_ca_files_are_read_relative_to_the_config_into_the_params() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("roots")).unwrap();
    let yubico = include_str!("../../../configs/attestation/yubico-2026-11.pem");
    std::fs::write(dir.path().join("roots/yubico.pem"), yubico).unwrap();
    let path = dir.path().join("node.toml");
    let presence = "[network.presence]\nattestation = \"strict\"\n";
    std::fs::write(
        &path,
        format!("{presence}attestation_ca_files = [\"roots/yubico.pem\"]\n"),
    )
    .unwrap();
    let config = Config::load(&path).unwrap();
    assert_eq!(config.network.presence.attestation_ca_pem, vec![yubico]);
    let params = config.network.params(NodeId([7; 32])).unwrap();
    hco_challenges::presence::Presence::new(params.presence.clone()).unwrap();
    assert!(!params.presence.accepts_software_authenticators());

    // The digest covers the certificates' text: another file, another network.
    let other = include_str!("../../../configs/attestation/apple-2026-11.pem");
    std::fs::write(dir.path().join("roots/yubico.pem"), other).unwrap();
    let changed = Config::load(&path).unwrap().network.params(NodeId([7; 32]));
    assert_ne!(changed.unwrap().digest(), params.digest());

    // A missing file is an error that names the key and the file.
    std::fs::write(
        &path,
        format!("{presence}attestation_ca_files = [\"roots/missing.pem\"]\n"),
    )
    .unwrap();
    let err = format!("{:#}", Config::load(&path).unwrap_err());
    assert!(
        err.contains("attestation_ca_files") && err.contains("missing.pem"),
        "{err}"
    );
}

/// A person who opted out of visual families registers wherever their class has a
/// non-visual family (presence is one), so each step of the policy must leave them a family
/// too: a drawn step with none refuses them `no_family_for_profile` every window.
#[test]
fn every_step_of_every_shipped_policy_has_a_family_for_both_profiles() {
    use hco_oracle::{Class, Profile};
    let registry = hco_challenges::Registry::builtin();
    let mut missing = Vec::new();
    for path in shipped() {
        let config = Config::load(&path).unwrap();
        let me = match config.network.committee.first() {
            Some(first) => first.parse().unwrap(),
            None => NodeId([7; 32]),
        };
        let params = config.network.params(me).unwrap();
        for class in [Class::Human, Class::Agent] {
            // A class without an enabled family is not served at all.
            if params
                .families_for(Profile::new(class, false), &registry)
                .is_empty()
            {
                continue;
            }
            for no_visual in [false, true] {
                let profile = Profile::new(class, no_visual);
                for (i, step) in params.policy(class).steps.iter().enumerate() {
                    if params.step_families(step, profile, &registry).is_empty() {
                        missing.push(format!(
                            "{}: {} step {i} ({}) with visual_opt_out = {no_visual}",
                            path.file_name().unwrap().to_string_lossy(),
                            class.as_str(),
                            String::from(step.clone()),
                        ));
                    }
                }
            }
        }
    }
    assert!(missing.is_empty(), "steps without a family: {missing:#?}");
}
