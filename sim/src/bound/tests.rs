//! Tests of the one-person bound.

use super::*;

fn fam(name: &str, deadline_s: u64) -> PoolFamily {
    PoolFamily {
        name: name.into(),
        deadline_ms: deadline_s * 1000,
        min_solve_ms: 500,
    }
}

fn drawn(families: &[PoolFamily]) -> StepPool {
    StepPool {
        step: "cognitive".into(),
        families: families.to_vec(),
        prompt_reaction_ms: None,
    }
}

/// A fixed step; `presence` is a touch prompt (as in a global or staggered slot).
fn fixed(f: PoolFamily) -> StepPool {
    StepPool {
        step: f.name.clone(),
        prompt_reaction_ms: (f.name == "presence").then_some(f.deadline_ms),
        families: vec![f],
    }
}

fn cognitive() -> Vec<PoolFamily> {
    vec![
        fam("visual_match", 30),
        fam("interactive_reasoning", 45),
        fam("attention", 40),
    ]
}

fn global(slot_s: u64, steps: Vec<StepPool>, spares: u32) -> CeremonyInputs {
    CeremonyInputs {
        slot_mode: SlotMode::Global,
        slot_ms: slot_s * 1000,
        window_ms: 3_600_000,
        steps,
        spares,
        prompt_jitter_ms: 1000,
        relay_round_ms: 5000,
    }
}

#[test]
fn a_five_minute_slot_with_one_cognitive_step_gives_twenty_to_fifty_five() {
    // One step of 6–15 s in a 5-minute global slot (30 s deadlines): from 300/15 = 20
    // (every draw attention) to (300 + 30)/6 = 55 (every draw visual matching).
    let all = [fam("visual_match", 30), fam("attention", 30)];
    let b = one_person_bound(&global(300, vec![drawn(&all)], 1), &HumanModel::paper()).unwrap();
    assert_eq!(b.identities_per_person_cheapest_draws, 55);
    assert_eq!(b.identities_per_person, 31); // 330 / 10.5
    for only in all {
        let b =
            one_person_bound(&global(300, vec![drawn(&[only])], 1), &HumanModel::paper()).unwrap();
        assert!((20..=55).contains(&b.identities_per_person), "{b:?}");
    }
    let b = one_person_bound(
        &global(300, vec![drawn(&cognitive())], 1),
        &HumanModel::paper(),
    )
    .unwrap();
    assert!((20..=55).contains(&b.identities_per_person), "{b:?}");
    assert_eq!(b.basis, "slot");
}

#[test]
fn presence_and_two_cognitive_steps_in_two_minutes_stay_under_ten() {
    let steps = vec![
        fixed(fam("presence", 30)),
        drawn(&cognitive()),
        drawn(&cognitive()),
    ];
    let b = one_person_bound(&global(120, steps, 1), &HumanModel::paper()).unwrap();
    assert!(b.identities_per_person <= 10, "{b:?}");
    assert_eq!(b.phases, 4);
    // Work 3 + 11 + 11 = 25 s. Step 0: (120 + 45) / 25 = 6.6; step 1 from phase 1 (30 s):
    // (165 − 30) / 22 = 6.14 binds.
    assert_eq!(b.identities_per_person, 6);
    assert_eq!(b.binding_step, 1);
    assert!((b.work_per_identity_s - 25.0).abs() < 1e-9);
    // Cheapest draws (3 + 6 + 6 s): min(165/15, 135/12, 105/6) = 11.
    assert_eq!(b.identities_per_person_cheapest_draws, 11);
    let mc = b.monte_carlo.clone().unwrap();
    assert!(mc.identities_per_person <= b.identities_per_person_cheapest_draws);
    assert!(mc.identities_per_person >= 3, "{mc:?}");
    assert!(mc.completion >= 0.95);
}

#[test]
fn the_monte_carlo_stays_under_the_cheapest_bound() {
    for slot in [60, 120, 300] {
        let steps = vec![
            fixed(fam("presence", 30)),
            drawn(&cognitive()),
            drawn(&cognitive()),
        ];
        let b = one_person_bound(&global(slot, steps, 1), &HumanModel::paper()).unwrap();
        let mc = b.monte_carlo.clone().unwrap();
        assert!(
            mc.identities_per_person <= b.identities_per_person_cheapest_draws,
            "{slot}: {mc:?} vs {b:?}"
        );
    }
}

#[test]
fn open_windows_are_bounded_by_the_window() {
    let mut inputs = global(0, vec![drawn(&[fam("visual_match", 30)])], 1);
    inputs.slot_mode = SlotMode::Open;
    inputs.window_ms = 600_000;
    let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
    assert_eq!(b.basis, "window");
    assert_eq!(b.identities_per_person, 105); // (600 + 30) / 6
    let mc = b.monte_carlo.clone().unwrap();
    assert!(mc.identities_per_person <= 105 && mc.identities_per_person >= 90);
}

#[test]
fn overrides_and_unknown_families() {
    let inputs = global(120, vec![drawn(&[fam("captcha", 30)])], 0);
    assert_eq!(
        one_person_bound(&inputs, &HumanModel::paper()).unwrap_err(),
        BoundError::UnknownFamily("captcha".into())
    );
    let b = one_person_bound(&inputs, &HumanModel::paper().with("captcha", 10.0)).unwrap();
    assert_eq!(b.identities_per_person, 15); // (120 + 30) / 10
    let json = serde_json::to_value(&b).unwrap();
    assert_eq!(json["inputs"]["steps"][0]["families"][0]["name"], "captcha");
    assert_eq!(json["human"]["solve_s"]["captcha"], 10.0);
}

/// The prod-like touch-prompt policy: 100 s slot, three presence steps (5 s) then two
/// cognitive ones, one spare, 1 s of jitter.
fn prod_like() -> CeremonyInputs {
    let steps = vec![
        fixed(fam("presence", 5)),
        fixed(fam("presence", 5)),
        fixed(fam("presence", 5)),
        drawn(&cognitive()),
        drawn(&cognitive()),
    ];
    global(100, steps, 1)
}

#[test]
fn model_solves_are_bound_by_the_beats() {
    // B = 4 tries may serve a prompt (0..=2 + 1 spare), m = 3 touches, r = 5 s, J = 1 s,
    // touch 1 s: 4·(1 + 5)/(3·1) = 8.
    let m = model_solves(&prod_like(), 1000);
    assert_eq!(m.identities_per_person, Some(8));
    assert_eq!(m.basis, "beats");
    assert_eq!((m.beats, m.touches_per_identity_window), (4, 3));
    assert_eq!(m.touch_span_s, Some(24.0));
    assert_eq!(m.person_seconds_per_identity_window, 3.0);
    // A rig at 0.25 s per touch: 24/0.75 = 32 per key and actuator.
    assert_eq!(m.rig.identities_per_key, Some(32));
    assert_eq!(
        model_solves(&prod_like(), 250).identities_per_person,
        Some(32)
    );
    assert!(m.hardware.iter().any(|n| n.contains("batch attestation")));
    assert!(m.hardware.iter().any(|n| n.contains("rig")));
    assert!(m.hardware.iter().any(|n| n.contains("biometric")));
    // The human-speed figure respects the beats: 3 s per touch, 24/9.
    let b = one_person_bound(&prod_like(), &HumanModel::paper()).unwrap();
    assert_eq!(b.identities_per_person, 2);
    assert_eq!(b.bound_by, "touches");
    assert_eq!(b.identities_per_person_model_solves, Some(8));
}

#[test]
fn a_malicious_member_adds_one_relay_round_to_the_beats_and_colluders_take_prompts_off_them() {
    // Its prompts need a touch in [beat, beat + J + r + Δ]: (24 + 5)/3 = 9.67; with its
    // clock a round ahead of the receivers', (24 + 10)/3 = 11.3.
    let m = model_solves(&prod_like(), 1000);
    let member = m.one_malicious_member.expect("a global slot with prompts");
    assert_eq!(member.touch_span_s, 29.0);
    assert_eq!(member.identities_per_person, 9);
    assert_eq!(member.identities_per_person_clocks_a_round_apart, 11);
    // Colluders' prompts cost no touch on a beat: 24/(3 − c').
    let colluders: Vec<_> = member
        .with_colluders
        .iter()
        .map(|c| (c.prompts_issued, c.identities_per_person))
        .collect();
    assert_eq!(colluders, [(1, Some(12)), (2, Some(24)), (3, None)]);
    // The Monte Carlo with the member on the try that serves it best stays under the formula
    // and above the bound without it.
    let mc = member
        .monte_carlo
        .expect("a finite bound")
        .identities_per_person;
    let honest = m.monte_carlo.expect("a finite bound").identities_per_person;
    assert!((honest..=9).contains(&mc), "{mc} vs {honest}");
    let b = one_person_bound(&prod_like(), &HumanModel::paper()).unwrap();
    assert_eq!(b.identities_per_person_one_malicious_member, Some(9));
    // No witness, no member figure: staggered slots are window-based already.
    let mut staggered = prod_like();
    staggered.slot_mode = SlotMode::Staggered;
    assert_eq!(model_solves(&staggered, 1000).one_malicious_member, None);
}

#[test]
fn prompt_tries_are_the_union_of_each_prompt_steps_tries() {
    // presence, cognitive, presence with one spare: prompt step 0 is served by try 0 or 1,
    // step 2 by try 2 or 3: B = 4, m = 2.
    let steps = vec![
        fixed(fam("presence", 5)),
        drawn(&cognitive()),
        fixed(fam("presence", 5)),
    ];
    let m = model_solves(&global(100, steps, 1), 1000);
    assert_eq!(m.prompt_tries, [0, 1, 2, 3]);
    assert_eq!(m.identities_per_person, Some(12)); // 4·6/2
    // With three spares the tries overlap: 0..=3 and 2..=5, six in all.
    let steps = vec![
        fixed(fam("presence", 5)),
        drawn(&cognitive()),
        fixed(fam("presence", 5)),
    ];
    let m = model_solves(&global(100, steps, 3), 1000);
    assert_eq!(m.prompt_tries, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn staggered_and_open_slots_and_policies_without_prompts() {
    let mut inputs = prod_like();
    inputs.slot_mode = SlotMode::Staggered;
    let m = model_solves(&inputs, 1000);
    assert_eq!(m.basis, "window");
    assert_eq!(m.identities_per_person, Some(1201)); // (3600 + 5)/3
    // Open windows have no touch prompts.
    inputs.slot_mode = SlotMode::Open;
    let m = model_solves(&inputs, 1000);
    assert_eq!((m.identities_per_person, m.basis), (None, "none"));
    assert!(m.note.contains("unbounded"), "{}", m.note);
    // Nor has a policy without a presence step.
    let inputs = global(100, vec![drawn(&cognitive()), drawn(&cognitive())], 1);
    let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
    assert_eq!(b.identities_per_person_model_solves, None);
    assert!(b.model_solves.monte_carlo.is_none());
    assert!(
        b.model_solves.note.contains("no step"),
        "{}",
        b.model_solves.note
    );
    let json = serde_json::to_value(&b).unwrap();
    assert!(json["identities_per_person_model_solves"].is_null());
    assert!(json["model_solves"]["identities_per_person"].is_null());
}

#[test]
fn the_touch_monte_carlo_stays_under_the_beats_and_levels_off() {
    let start = std::time::Instant::now();
    let m = model_solves(&prod_like(), 1000);
    let bound = m.identities_per_person.unwrap();
    let mc = m.monte_carlo.clone().unwrap();
    assert!(mc.identities_per_person <= bound, "{mc:?}");
    assert!(mc.identities_per_person >= 4, "{mc:?}");
    assert!(mc.completion >= 0.95);
    let held = &mc.active_by_held;
    assert_eq!(held.len() as u64, 2 * bound);
    assert_eq!(held[0].active, 1.0);
    assert_eq!(held[0].share, 1.0);
    for w in held.windows(2) {
        assert!(w[1].active >= w[0].active, "{held:?}");
    }
    for h in held {
        assert!(h.active <= bound as f64 + 1e-9, "{h:?}");
        assert!(h.served <= h.held);
    }
    // Past the bound holding more identities adds none.
    assert!(held[held.len() - 1].active <= held[bound as usize - 1].active + 1e-9);
    // A slower touch (2 s): 24/6 = 4, and the Monte Carlo under it.
    let slow = model_solves(&prod_like(), 2000);
    assert_eq!(slow.identities_per_person, Some(4));
    assert!(slow.monte_carlo.unwrap().identities_per_person <= 4);
    // Staggered: window-based, the Monte Carlo under it too.
    let mut inputs = prod_like();
    inputs.slot_mode = SlotMode::Staggered;
    let m = model_solves(&inputs, 1000);
    let mc = m.monte_carlo.unwrap();
    assert!(mc.identities_per_person <= m.identities_per_person.unwrap());
    assert!(
        mc.identities_per_person >= 100,
        "{}",
        mc.identities_per_person
    );
    // Debug builds are slower; the release binary takes a fraction of this.
    assert!(
        start.elapsed().as_secs_f64() < 10.0,
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn inputs_without_the_new_fields_still_parse() {
    let json = serde_json::json!({
        "slot_mode": "global", "slot_ms": 120000, "window_ms": 3600000, "spares": 1,
        "steps": [{"step": "presence", "families": [
            {"name": "presence", "deadline_ms": 30000, "min_solve_ms": 500}]}]
    });
    let inputs: CeremonyInputs = serde_json::from_value(json).unwrap();
    assert_eq!(inputs.prompt_jitter_ms, 0);
    assert_eq!(inputs.steps[0].prompt_reaction_ms, None);
}
